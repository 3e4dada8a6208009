"""A file the processes of one host share, so each sees the documents the others wrote moments ago.

:class:`~neardup.recent.writes.RecentWrites` remembers what *its* process wrote until a refresh makes it
searchable. The service runs several worker processes, and a near-duplicate that reaches another
worker before the next refresh would not be found there. A journal is the shared part: every worker
appends what it wrote, and before a lookup reads the rows the others appended since it last looked.
It is an SQLite database in write-ahead-log mode (readers and one writer at a time, no server); the
service puts it in memory-backed storage (``/dev/shm``) where there is one, since it never needs to
outlive the server.

Rows carry the writer's clock (``time.monotonic``, one clock for every process of a Linux host), so
the journal is for processes of one machine; across machines, ``neardup reconcile`` remains the answer.

>>> import numpy as np, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "recent.sqlite3")
>>> one, other = Journal(path, writer="one"), Journal(path, writer="other")  # as two processes hold
>>> doc = Stored("a", (2**64 - 1,), np.arange(3, dtype=np.uint32), "x", "ok", "v1", "a", "2024-01-01T00:00:00Z")
>>> one.append("news", 10.0, [doc])
>>> [(row.index, row.at, row.document.id, row.document.fingerprints) for row in other.read()]
[('news', 10.0, 'a', (18446744073709551615,))]
>>> other.read(), one.read()  # each row is read once per reader; a writer does not read its own rows
([], [])
"""

from __future__ import annotations

import logging
import os
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from neardup.errors import NeardupError
from neardup.mappings.schema import Stored

__all__ = ["Journal", "JournalError", "JournalRow"]

_LOG = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS writes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    writer TEXT NOT NULL,
    idx TEXT NOT NULL,
    at REAL NOT NULL,
    id TEXT,              -- NULL: the index was cleared (deleted and created again) at `at`
    fingerprints BLOB,
    sketch BLOB,
    meta BLOB,
    exact TEXT,
    status TEXT,
    version TEXT,
    cluster TEXT,
    indexed_at TEXT
);
CREATE INDEX IF NOT EXISTS writes_at ON writes (at);
"""


@dataclass(frozen=True)
class JournalRow:
    """One row another process appended: a document it wrote to ``index`` at ``at``, or (``document`` None)
    the clearing of ``index``."""

    index: str
    at: float
    document: Stored | None


class JournalError(NeardupError):
    """The journal file cannot be opened, read or written."""


class Journal:
    """One handle on the shared file (its connection opened again in a forked child; not thread-safe: its
    owner locks). It reads the rows of every other handle, in this process or another; ``writer`` names
    its own rows (default: a new random name, and another in a forked child)."""

    def __init__(self, path: str, writer: str | None = None) -> None:
        self.path = path
        self._name = writer or uuid.uuid4().hex
        self._pid = -1
        self._conn: sqlite3.Connection | None = None
        self._file: tuple[int, int] | None = None  # (device, inode) of the file the connection opened
        self._seen = 0

    @property
    def writer(self) -> str:
        return f"{self._name}:{os.getpid()}"

    def _current_file(self) -> tuple[int, int] | None:
        """(device, inode) of the file at the path now; None when there is none (or it cannot be looked at)."""
        try:
            found = os.stat(self.path)
        except OSError:
            return None
        return found.st_dev, found.st_ino

    def _connection(self) -> sqlite3.Connection:
        now = self._current_file()
        # another file at the path: the one this handle opened was deleted (or replaced), and writing on to it would
        # part this process from every one that opens the path from now on. With no file there at all (its
        # directory gone too), the open connection is the only sharing left: it stays.
        moved = now is not None and self._file is not None and now != self._file
        if self._conn is not None and (moved or self._pid != os.getpid()):  # a connection must not cross a fork
            if moved:
                _LOG.warning("journal %s was deleted or replaced; opening it again", self.path)
                if self._pid == os.getpid():
                    self._conn.close()  # never a parent's connection, in a child
            self._conn = None
        if self._conn is None:
            if moved:
                self._seen = 0  # the new file numbers its rows afresh
            self._conn, self._file = self._open()
            self._pid = os.getpid()
        return self._conn

    def _open(self) -> tuple[sqlite3.Connection, tuple[int, int] | None]:
        """A connection set up on the file at the path, and that file: opened again if the file changed while
        it was set up (the set-up may wait for a lock)."""
        attempts = 3
        for attempt in range(attempts):
            conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=False)
            opened = self._current_file()
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=OFF")  # it never needs to survive a crash of the machine
            conn.executescript(_SCHEMA)
            if self._current_file() == opened or attempt == attempts - 1:
                return conn, opened
            conn.close()
        raise AssertionError("unreachable: the last attempt returns")

    def append(self, index: str, at: float, documents: Iterable[Stored]) -> None:
        rows = [
            (
                self.writer,
                index,
                at,
                d.id,
                np.asarray(d.fingerprints, dtype="<u8").tobytes(),
                np.asarray(d.sketch, dtype="<u4").tobytes(),
                None if d.meta is None else np.asarray(d.meta, dtype="<u4").tobytes(),
                d.exact,
                d.status,
                d.version,
                d.cluster,
                d.indexed_at,
            )
            for d in documents
        ]
        with self._transaction() as conn:
            conn.executemany("INSERT INTO writes VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def clear(self, index: str, at: float) -> None:
        with self._transaction() as conn:
            conn.execute("INSERT INTO writes (writer, idx, at) VALUES (?, ?, ?)", (self.writer, index, at))

    def read(self) -> list[JournalRow]:
        """The rows other processes appended since this one last read, in order."""
        with self._transaction() as conn:
            rows = conn.execute(
                "SELECT seq, idx, at, id, fingerprints, sketch, meta, exact, status, version, cluster, indexed_at "
                "FROM writes WHERE seq > ? AND writer != ? ORDER BY seq",
                (self._seen, self.writer),
            ).fetchall()
        if rows:
            self._seen = rows[-1][0]
        return [JournalRow(r[1], r[2], _document(r)) for r in rows]

    def prune(self, before: float) -> None:
        """Drops the rows written before ``before`` (they are out of every reader's window)."""
        with self._transaction() as conn:
            conn.execute("DELETE FROM writes WHERE at < ?", (before,))

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One transaction (a batch's rows commit together); SQLite's errors become :class:`JournalError`."""
        try:
            conn = self._connection()
            conn.execute("BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise JournalError(f"the recent-writes journal {self.path}: {exc}") from exc


def _document(row: tuple[object, ...]) -> Stored | None:
    _, _, _, doc_id, fingerprints, sketch, meta, exact, status, version, cluster, indexed_at = row
    if doc_id is None:
        return None
    assert isinstance(fingerprints, bytes) and isinstance(sketch, bytes) and isinstance(meta, bytes | None)
    return Stored(
        id=str(doc_id),
        fingerprints=tuple(np.frombuffer(fingerprints, dtype="<u8").tolist()),
        sketch=np.frombuffer(sketch, dtype="<u4").astype(np.uint32),
        exact=str(exact),
        status=str(status),
        version=str(version),
        cluster=None if cluster is None else str(cluster),
        indexed_at=str(indexed_at),
        meta=None if meta is None else np.frombuffer(meta, dtype="<u4").astype(np.uint32),
    )

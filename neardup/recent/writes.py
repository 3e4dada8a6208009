"""Documents this process wrote moments ago, which a search cannot see until the index refreshes.

Flagging asks Elasticsearch for a new document's candidates; a document written a moment before is not
searchable until the next refresh (every second by default, later under load). Instead of writing with
``refresh=wait_for`` (up to a refresh interval per request), each process remembers what it wrote in
the last few seconds and offers those documents as candidates too. Processes of one host that share a
:class:`~neardup.recent.journal.Journal` (the service's workers do) also offer what the others wrote; what
they cannot see is a write still in flight in another process, or one made on another machine:
``neardup reconcile`` covers those.

>>> import numpy as np
>>> clock = iter([0.0, 1.0, 9.0]).__next__
>>> recent = RecentWrites(seconds=5.0, clock=clock)
>>> doc = Stored("a", (1,), np.zeros(0, np.uint32), "x", "ok", "v1", "a", "2024-01-01T00:00:00.000000000Z")
>>> recent.remember("news", [doc])
>>> [d.id for d in recent.documents("news")], recent.documents("news")
(['a'], [])
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable

from neardup.mappings.schema import Stored

from .journal import Journal, JournalError

__all__ = ["RecentWrites"]

_LOG = logging.getLogger(__name__)


class RecentWrites:
    """Per index, the documents written through this object in the last ``seconds`` (at most
    ``max_documents`` of them, the newest kept; ``Settings.recent_seconds`` says how long), and with a
    ``journal`` those the processes sharing it wrote (``clock`` must then be one clock for all of them, as
    ``time.monotonic`` is on one host). Thread-safe: a service worker's threads share one."""

    def __init__(
        self,
        seconds: float,
        max_documents: int = 20_000,
        clock: Callable[[], float] = time.monotonic,
        journal: Journal | None = None,
    ) -> None:
        self.seconds = seconds
        self.max_documents = max_documents
        self.journal = journal
        self._clock = clock
        self._lock = threading.Lock()
        self._by_index: dict[str, OrderedDict[str, tuple[float, Stored]]] = {}

    def _add(self, index: str, at: float, documents: Iterable[Stored]) -> None:
        entries = self._by_index.setdefault(index, OrderedDict())
        for doc in documents:
            known = entries.get(doc.id)
            if known is not None and known[0] > at:
                continue  # a newer copy is known already (this process rewrote it before reading the other's row)
            entries.pop(doc.id, None)
            entries[doc.id] = (at, doc)
        while len(entries) > self.max_documents:
            entries.popitem(last=False)

    def _expire(self, cutoff: float) -> None:
        """Drop what left the window, in every index: an index no longer written or read (yesterday's) would
        otherwise keep its last documents, in every process the journal told of them."""
        for index in list(self._by_index):
            entries = self._by_index[index]
            while entries and next(iter(entries.values()))[0] < cutoff:
                entries.popitem(last=False)
            if not entries:
                del self._by_index[index]

    def size(self) -> int:
        """How many documents this process holds, every index together."""
        with self._lock:
            return sum(len(entries) for entries in self._by_index.values())

    def remember(self, index: str, documents: Iterable[Stored]) -> None:
        now = self._clock()
        docs = list(documents)
        with self._lock:
            self._expire(now - self.seconds)
            self._add(index, now, docs)

            def share(journal: Journal) -> None:
                journal.prune(now - self.seconds)
                journal.append(index, now, docs)

            self._shared(share)

    def clear(self, index: str) -> None:
        """Forget everything written to ``index`` (it was deleted and created again), here and, through the
        journal, in the processes sharing it."""
        with self._lock:
            self._by_index.pop(index, None)
            self._shared(lambda j: j.clear(index, self._clock()))

    def _shared(self, action: Callable[[Journal], object]) -> None:
        """``action`` on the journal, if any. A journal that fails is only a loss of what the other processes
        wrote (a refresh or ``neardup reconcile`` still finds it), never of a request: it is logged."""
        if self.journal is not None:
            try:
                action(self.journal)
            except JournalError as exc:
                _LOG.warning("%s; going on with this process's own recent writes", exc)

    def _read_journal(self, journal: Journal) -> None:
        for row in journal.read():
            if row.document is not None:
                self._add(row.index, row.at, [row.document])
                continue
            # cleared then: what this process wrote to the new index since stays
            old = self._by_index.pop(row.index, OrderedDict())
            kept = [(doc_id, entry) for doc_id, entry in old.items() if entry[0] > row.at]
            if kept:
                self._by_index[row.index] = OrderedDict(kept)

    def documents(self, index: str) -> list[Stored]:
        """The documents still within the window, in the order this process learnt of them."""
        cutoff = self._clock() - self.seconds
        with self._lock:
            self._shared(self._read_journal)
            self._expire(cutoff)
            entries = self._by_index.get(index)
            if not entries:
                return []
            # another process's write can be learnt after a later one of this process: not always at the head
            return [doc for at, doc in entries.values() if at >= cutoff]

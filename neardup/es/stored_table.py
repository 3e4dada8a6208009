"""The stored documents a batch re-clusters, held in columns.

``reconcile`` holds every document of a version at once. As :class:`~mappings.schema.Stored` objects, with
their stored assignments beside them, a million documents would take about 1.7 GiB (16 Python integers for the
fingerprints, a NumPy array for the sketch, a string per field); here the fingerprints are one row of a
``uint64`` matrix, the sketches one ``uint32`` array with offsets, status and version one byte each, and the
stored assignment one hash: about 870 MiB, of which the 128-value sketches are more than half. Rows are read back
as :class:`Row` views, which are what :func:`~ingest.cluster.cluster_records` compares.

>>> from neardup.ingest.fingerprint import Fingerprinter
>>> from neardup.mappings import schema
>>> rec = Fingerprinter.default().fingerprint("国务院今天召开常务会议，部署进一步推动经济稳定增长的措施。")
>>> hit = {"_id": "a", "_source": {schema.ROOT: schema.record_fields(rec) | {schema.CLUSTER: "a"}}}
>>> table = TableBuilder()
>>> table.add(hit)
>>> rows = table.build()
>>> row = rows[0]
>>> row.id, row.fingerprints == rec.fingerprints, bool((row.sketch == rec.sketch).all()), row.status
('a', True, True, 'ok')
>>> rows.unchanged(0, {schema.ROOT: {schema.CLUSTER: "a"}}), rows.unchanged(0, {schema.ROOT: {schema.CLUSTER: "b"}})
(True, False)
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from neardup.mappings import schema
from neardup.mappings.schema import Stored

__all__ = ["CLUSTERED_FROM", "Row", "StoredTable", "TableBuilder"]

#: the fields a clustering is computed from: what a reconcile reads, but the assignment it writes
CLUSTERED_FROM = [f for f in schema.LOOKUP_FIELDS if f not in schema.ASSIGNMENT_PATHS]


class _Codes:
    """Small integer codes for a field with few distinct values (status, version)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._code: dict[str, int] = {}

    def code(self, name: str) -> int:
        found = self._code.get(name)
        if found is None:
            if len(self.names) == 255:
                raise ValueError(f"more than 255 distinct values, the next being {name!r}")
            found = self._code[name] = len(self.names)
            self.names.append(name)
        return found


class TableBuilder:
    """Collects search hits (``_source`` holding the lookup and assignment fields) into a :class:`StoredTable`."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._ids: list[str] = []
        self._orders: list[tuple[str, str]] = []  # each row's Stored.order, until the rows are sorted by it
        self._fingerprints: list[array[int]] = []  # one array per seed position, a value for every row
        self._seeds = array("B")
        self._sketch = array("I")
        self._sketch_ends = array("q")
        self._exact: list[str] = []
        self._status = array("B")
        self._version = array("B")
        self._statuses = _Codes()
        self._versions = _Codes()
        self._meta: dict[int, npt.NDArray[np.uint32]] = {}
        self._assigned = array("q")
        self._seq_no = array("q")
        self._primary_term = array("q")
        self._time = array("q")

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, hit: Mapping[str, Any]) -> None:
        stored = Stored.from_hit(hit)
        row = len(self._ids)
        self._ids.append(stored.id)
        self._orders.append(stored.order)
        count = len(stored.fingerprints)
        if count > 255:
            raise ValueError(f"{stored.id}: {count} fingerprints, more than a table row holds (255)")
        self._seeds.append(count)
        while len(self._fingerprints) < count:
            self._fingerprints.append(array("Q", bytes(8 * row)))  # earlier rows hold no such seed: 0
        for seed, column in enumerate(self._fingerprints):
            column.append(stored.fingerprints[seed] if seed < count else 0)
        self._sketch.frombytes(stored.sketch.astype(np.uint32, copy=False).tobytes())
        self._sketch_ends.append(len(self._sketch))
        self._exact.append(stored.exact)
        self._status.append(self._statuses.code(stored.status))
        self._version.append(self._versions.code(stored.version))
        if stored.meta is not None:
            self._meta[row] = stored.meta
        self._assigned.append(_assignment_key(hit.get("_source") or {}))
        self._seq_no.append(int(hit.get("_seq_no", -1)))  # a search with seq_no_primary_term gives both
        self._primary_term.append(int(hit.get("_primary_term", -1)))
        self._time.append(hash(stored.indexed_at))

    def build(self) -> StoredTable:
        """The table, rows in document order (``indexed_at``, then id: :attr:`Stored.order`). The builder is
        empty afterwards: what the table does not keep (the order keys, the columns in the order they came) is freed."""
        table = self._build()
        self._reset()
        return table

    def _build(self) -> StoredTable:
        n = len(self._ids)
        order = np.asarray(sorted(range(n), key=self._orders.__getitem__), dtype=np.int64)
        fingerprints = np.zeros((n, len(self._fingerprints)), dtype=np.uint64)
        for seed, column in enumerate(self._fingerprints):
            fingerprints[:, seed] = np.frombuffer(column, dtype=np.uint64)[order]
        ends = np.frombuffer(self._sketch_ends, dtype=np.int64)
        starts = np.r_[np.int64(0), ends[:-1]]
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        listed = order.tolist()
        return StoredTable(
            ids=[self._ids[k] for k in listed],
            fingerprints=fingerprints,
            seeds=np.frombuffer(self._seeds, dtype=np.uint8)[order],
            sketch_values=np.frombuffer(self._sketch, dtype=np.uint32),
            sketch_starts=starts[order],
            sketch_ends=ends[order],
            exact=[self._exact[k] for k in listed],
            status=np.frombuffer(self._status, dtype=np.uint8)[order],
            status_names=tuple(self._statuses.names),
            version=np.frombuffer(self._version, dtype=np.uint8)[order],
            version_names=tuple(self._versions.names),
            meta={int(rank[k]): m for k, m in self._meta.items()},
            assigned=np.frombuffer(self._assigned, dtype=np.int64)[order],
            seq_no=np.frombuffer(self._seq_no, dtype=np.int64)[order],
            primary_term=np.frombuffer(self._primary_term, dtype=np.int64)[order],
            time=np.frombuffer(self._time, dtype=np.int64)[order],
        )


def _assignment_key(source: Mapping[str, Any]) -> int:
    """The stored assignment, as a hash: equal for equal assignments in one process (a changed one goes
    unnoticed only on a 64-bit hash collision)."""
    return hash(schema.assignment_of(source))


@dataclass(frozen=True, eq=False)
class StoredTable(Sequence["Row"]):
    """Stored documents in columns, row ``k`` the ``k``-th in document order (see :class:`TableBuilder`)."""

    ids: list[str]
    #: (rows, seeds) unsigned; a row's seeds past its ``seeds`` count are 0
    fingerprints: npt.NDArray[np.uint64]
    seeds: npt.NDArray[np.uint8]
    #: every row's sketch, in the order the rows were added (not moved by the sort); row ``k``'s is
    #: ``sketch_values[sketch_starts[k]:sketch_ends[k]]``
    sketch_values: npt.NDArray[np.uint32]
    sketch_starts: npt.NDArray[np.int64]
    sketch_ends: npt.NDArray[np.int64]
    exact: list[str]
    status: npt.NDArray[np.uint8]
    status_names: tuple[str, ...]
    version: npt.NDArray[np.uint8]
    version_names: tuple[str, ...]
    meta: dict[int, npt.NDArray[np.uint32]]
    assigned: npt.NDArray[np.int64]
    #: where each document stood when read (``_seq_no``, ``_primary_term``); both -1 where the hit did not say
    seq_no: npt.NDArray[np.int64]
    primary_term: npt.NDArray[np.int64]
    #: each row's ``indexed_at``, hashed (the rows are in its order; the value itself is not kept)
    time: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, row: int) -> Row: ...

    @overload
    def __getitem__(self, row: slice) -> list[Row]: ...

    def __getitem__(self, row: int | slice) -> Row | list[Row]:
        if isinstance(row, slice):
            return [Row(self, k) for k in range(len(self.ids))[row]]
        if not -len(self.ids) <= row < len(self.ids):
            raise IndexError(f"row {row} of a table of {len(self.ids)}")
        return Row(self, row % len(self.ids))

    def __iter__(self) -> Iterator[Row]:
        return (Row(self, k) for k in range(len(self.ids)))

    def seen(self, row: int) -> tuple[int, int]:
        """(sequence number, primary term) of ``row``'s document when it was read; a ValueError when the search
        that read it did not ask for them (``seq_no_primary_term``)."""
        seq_no, primary_term = int(self.seq_no[row]), int(self.primary_term[row])
        if seq_no < 0:
            raise ValueError(f"{self.ids[row]}: read without its sequence number (seq_no_primary_term)")
        return seq_no, primary_term

    def still_as_read(self, row: int, source: Mapping[str, Any]) -> bool:
        """Does ``source`` (:data:`CLUSTERED_FROM` of ``row``'s document, read again) hold what the row holds: the
        same fingerprint fields and time?"""
        now, held = Stored.from_hit({"_id": self.ids[row], "_source": source}), self[row]
        same_meta = (now.meta is None and held.meta is None) or (
            now.meta is not None and held.meta is not None and np.array_equal(now.meta, held.meta)
        )
        return (
            (now.fingerprints, now.exact, now.status, now.version)
            == (held.fingerprints, held.exact, held.status, held.version)
            and np.array_equal(now.sketch, held.sketch)
            and same_meta
            and hash(now.indexed_at) == int(self.time[row])
        )

    def unchanged(self, row: int, source: Mapping[str, Any]) -> bool:
        """Is the assignment in ``source`` the one stored for ``row``?"""
        return _assignment_key(source) == int(self.assigned[row])


class Row:
    """One document of a :class:`StoredTable`, read on demand (the :class:`~ingest.verify.Comparable` of a
    :class:`~mappings.schema.Stored`, without its cluster and time)."""

    __slots__ = ("_row", "_table")

    def __init__(self, table: StoredTable, row: int) -> None:
        self._table = table
        self._row = row

    @property
    def id(self) -> str:
        return self._table.ids[self._row]

    @property
    def fingerprints(self) -> tuple[int, ...]:
        return tuple(self._table.fingerprints[self._row, : self._table.seeds[self._row]].tolist())

    @property
    def fingerprint(self) -> int:
        return int(self._table.fingerprints[self._row, 0]) if self._table.seeds[self._row] else 0

    @property
    def sketch(self) -> npt.NDArray[np.uint32]:
        table = self._table
        return table.sketch_values[table.sketch_starts[self._row] : table.sketch_ends[self._row]]

    @property
    def exact(self) -> str:
        return self._table.exact[self._row]

    @property
    def status(self) -> str:
        return self._table.status_names[int(self._table.status[self._row])]

    @property
    def version(self) -> str:
        return self._table.version_names[int(self._table.version[self._row])]

    @property
    def meta(self) -> npt.NDArray[np.uint32] | None:
        return self._table.meta.get(self._row)

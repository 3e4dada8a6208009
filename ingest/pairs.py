"""Ranking candidate pairs in bounded memory.

The candidate stage emits one chunk of pairs per (seed, block) table; a pair found by several tables
shares that many tokens. Each later document keeps the earlier ones sharing the most tokens (ties: the
nearer one). Counting needs every table's chunk first, and at a million documents the chunks hold
hundreds of millions of pairs, so they are not concatenated: each pair goes to the partition of its
later document (a contiguous range of documents), partitions stay in memory up to a budget and are
written to temporary files beyond it, and each partition is counted and ranked on its own. The result
is the same whatever the budget; only the peak memory changes.

>>> a, b = np.array([0, 1, 0]), np.array([2, 2, 2])
>>> [x.tolist() for x in top_pairs([(a, b), (np.array([1]), np.array([2]))], 3, max_candidates=1)]
[[1], [2]]
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["DEFAULT_MEMORY_PAIRS", "top_pairs"]

I64 = npt.NDArray[np.int64]
#: pairs held in memory before the partitions are written to temporary files (8 bytes each: 256 MiB). At a million
#: documents four times as much raised the candidate stage's peak by about 330 MiB and saved no time: every pair
#: past the budget is written once and read once either way
DEFAULT_MEMORY_PAIRS = 1 << 25
#: a partition holds the pairs of this many later documents at most; small enough that counting one
#: partition stays far below the memory budget even when every document has thousands of pairs
_PARTITION_PAIRS = 1 << 24


class _Partitions:
    """Pairs packed as ``(later − partition start) · n + earlier``, grouped by partition of the later
    document; buffered in memory and appended to one file per partition once the buffer is full."""

    def __init__(self, n: int, docs_per_part: int, memory_pairs: int) -> None:
        self.n = n
        self.size = docs_per_part
        self.count = -(-n // docs_per_part)
        self.memory_pairs = memory_pairs
        self.buffered: list[list[I64]] = [[] for _ in range(self.count)]
        self.in_memory = 0
        self.directory: tempfile.TemporaryDirectory[str] | None = None

    def add(self, lo: I64, hi: I64) -> None:
        part = hi // self.size
        # a stable sort of small integers is a radix sort: linear in the chunk
        order = np.argsort(part.astype(np.uint16 if self.count <= 1 << 16 else np.int64), kind="stable")
        packed = ((hi - part * self.size) * np.int64(self.n) + lo)[order]
        bounds = np.searchsorted(part[order], np.arange(self.count + 1))
        for p in np.flatnonzero(np.diff(bounds)).tolist():
            self.buffered[p].append(packed[bounds[p] : bounds[p + 1]])
        self.in_memory += packed.size
        if self.in_memory > self.memory_pairs:
            self._spill()

    def _path(self, p: int) -> Path:
        assert self.directory is not None
        return Path(self.directory.name) / f"{p}.i64"

    def _spill(self) -> None:
        if self.directory is None:
            self.directory = tempfile.TemporaryDirectory(prefix="neardup-pairs-")
        for p, chunks in enumerate(self.buffered):
            if chunks:
                with self._path(p).open("ab") as f:
                    for chunk in chunks:
                        chunk.tofile(f)
                chunks.clear()
        self.in_memory = 0

    def take(self, p: int) -> I64:
        """Every pair of partition ``p``, removed from the buffer."""
        chunks = self.buffered[p]
        if self.directory is not None and self._path(p).exists():
            chunks.insert(0, np.fromfile(self._path(p), dtype=np.int64))
            self._path(p).unlink()
        out = np.concatenate(chunks) if chunks else np.zeros(0, np.int64)
        self.buffered[p] = []
        return out

    def close(self) -> None:
        if self.directory is not None:
            self.directory.cleanup()


def _rank(packed: I64, n: int, start: int, max_candidates: int, min_shared: int) -> tuple[I64, I64]:
    """The kept (earlier, later) pairs of one partition."""
    packed, shared = np.unique(packed, return_counts=True)  # sorted by (later, earlier)
    if min_shared > 1:
        packed, shared = packed[shared >= min_shared], shared[shared >= min_shared]
    later, earlier = packed // n, packed % n
    # per later document: most shared, then the nearer (larger) earlier one; one int64 key when it fits
    most = int(shared.max(initial=0))
    widths = (int(later.max(initial=0)).bit_length(), most.bit_length(), n.bit_length())
    if sum(widths) <= 63:
        key = (later << (widths[1] + widths[2])) | ((most - shared) << widths[2]) | (n - 1 - earlier)
        order = np.argsort(key)
    else:
        order = np.lexsort((-earlier, -shared, later))
    later_sorted = later[order]
    starts = np.flatnonzero(np.r_[True, later_sorted[1:] != later_sorted[:-1]])
    rank = np.arange(later_sorted.size) - np.repeat(starts, np.diff(np.r_[starts, later_sorted.size]))
    keep = order[rank < max_candidates]
    return earlier[keep], later[keep] + start


def top_pairs(
    chunks: Iterable[tuple[I64, I64]],
    n: int,
    max_candidates: int,
    min_shared: int = 1,
    max_pairs_per_doc: int = 4096,
    memory_pairs: int = DEFAULT_MEMORY_PAIRS,
) -> tuple[I64, I64]:
    """Unique pairs (i < j) of documents ``0..n-1`` over ``chunks`` (each chunk's pairs distinct, in
    either order) found in at least ``min_shared`` chunks; each later document ``j`` keeps the
    ``max_candidates`` earlier ones found in the most chunks (ties: the larger ``i``). Sorted by
    (i, j). ``max_pairs_per_doc`` (an upper bound on one document's pairs over all chunks) sizes the
    partitions; ``memory_pairs`` is how many pairs stay in memory before going to temporary files."""
    docs_per_part = max(1, min(n, _PARTITION_PAIRS // max(1, max_pairs_per_doc)))
    parts = _Partitions(max(n, 1), docs_per_part, memory_pairs)
    try:
        for a, b in chunks:
            if a.size:
                parts.add(np.minimum(a, b), np.maximum(a, b))
        kept: list[I64] = []  # packed as earlier · n + later: half the memory of the two arrays
        for p in range(parts.count):
            earlier, later = _rank(parts.take(p), parts.n, p * docs_per_part, max_candidates, min_shared)
            kept.append(earlier * np.int64(parts.n) + later)
    finally:
        parts.close()
    packed = np.concatenate(kept)  # at least one partition
    del kept  # at a million documents the kept pairs take half a gigabyte: one copy at a time
    packed.sort()
    earlier = packed // parts.n
    np.remainder(packed, parts.n, out=packed)
    return earlier, packed

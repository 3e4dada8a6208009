"""What the Elasticsearch benchmarks share: a cluster to run against, and timing a set of lookup
methods over the same queries."""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from neardup import node as esnode
from neardup.config import Settings

__all__ = ["Row", "elasticsearch", "percentiles", "time_methods"]

Q = TypeVar("Q")
#: (method, p50 ms, p99 ms, mean candidates or None when not observable, targets found)
Row = tuple[str, float, float, float | None, int]


@contextmanager
def elasticsearch(port: int, heap: str) -> Iterator[tuple[str, str]]:
    """(url, label): ``NEARDUP_ES_URL`` when set, else a fresh embedded node, stopped afterwards."""
    url = os.environ.get("NEARDUP_ES_URL")
    if url:
        yield url, url
        return
    data = Path(tempfile.mkdtemp(prefix="neardup-bench-"))
    info, _ = esnode.start(Settings.from_env().home, data, port=port, heap=heap)
    try:
        yield info.url, f"embedded {esnode.ES_VERSION}"
    finally:
        esnode.stop(data)


def percentiles(ms: list[float]) -> tuple[float, float]:
    """(p50, p99) of the timings."""
    ordered = sorted(ms)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def time_methods(
    methods: dict[str, Callable[[Q], tuple[set[int], int]]], queries: Sequence[Q], targets: Sequence[int]
) -> list[Row]:
    """Each method over every query after 20 warm-up calls: latency, candidates (a method returns a
    negative count when it cannot see them), and how many queries found their target (>= 0)."""
    rows: list[Row] = []
    for name, fn in methods.items():
        for q in queries[:20]:
            fn(q)
        times: list[float] = []
        cands: list[int] = []
        hits = 0
        for q, target in zip(queries, targets, strict=True):
            start = time.perf_counter()
            found, n_cand = fn(q)
            times.append((time.perf_counter() - start) * 1000)
            cands.append(n_cand)
            hits += int(target >= 0 and target in found)
        p50, p99 = percentiles(times)
        rows.append((name, p50, p99, statistics.mean(cands) if min(cands) >= 0 else None, hits))
    return rows

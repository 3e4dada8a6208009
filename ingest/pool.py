"""Fingerprinting in a process pool: jieba is pure Python, so segmentation scales with processes."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from types import TracebackType
from typing import Any, TypeVar

from .fingerprint import Fingerprinter, Record
from .records import RecordConfig, RecordError

__all__ = ["FingerprintPool"]

_WORKER: Fingerprinter | None = None
_T = TypeVar("_T")
_R = TypeVar("_R")


def _worker() -> Fingerprinter:
    global _WORKER
    if _WORKER is None:
        _WORKER = Fingerprinter.default()
    return _WORKER


def _fingerprint_batch(batch: Sequence[tuple[str, str | None]]) -> list[Record]:
    records: list[Record] = _worker().fingerprint_many(batch)
    return records


def _record_batch(config: RecordConfig, batch: Sequence[Mapping[str, Any]]) -> list[Record | RecordError]:
    fingerprinter = _worker()
    out: list[Record | RecordError] = []
    for source in batch:
        try:
            out.append(fingerprinter.fingerprint_record(source, config))
        except RecordError as exc:  # refused records are reported by the caller, in order
            out.append(exc)
    return out


def _ignore_interrupts() -> None:
    """A worker's start: Ctrl-C reaches every process of the terminal's group, and the parent stops the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class FingerprintPool:
    """``with FingerprintPool(workers) as pool: pool.fingerprint(pairs)`` — in order; one process
    (no pool) when ``workers`` is 1. Each worker builds the default :class:`Fingerprinter` once."""

    def __init__(self, workers: int, batch_size: int = 200) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.workers = workers
        self.batch_size = batch_size
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> FingerprintPool:
        if self.workers > 1:
            self._pool = ProcessPoolExecutor(max_workers=self.workers, initializer=_ignore_interrupts)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def fingerprint(self, pairs: Sequence[tuple[str, str | None]]) -> list[Record]:
        """Records for (text, title) pairs, in order."""
        out: list[Record] = []
        for records in self._map(_fingerprint_batch, pairs):
            out.extend(records)
        return out

    def fingerprint_records(
        self, sources: Sequence[Mapping[str, Any]], config: RecordConfig
    ) -> list[Record | RecordError]:
        """Each structured record fingerprinted by ``config``, in order; the error where it refuses one."""
        out: list[Record | RecordError] = []
        for records in self._map(partial(_record_batch, config), sources):
            out.extend(records)
        return out

    def _map(self, work: Callable[[Sequence[_T]], _R], items: Sequence[_T]) -> Iterator[_R]:
        batches = [items[k : k + self.batch_size] for k in range(0, len(items), self.batch_size)]
        return map(work, batches) if self._pool is None else self._pool.map(work, batches)

"""Fingerprinting in a process pool: jieba is pure Python, so segmentation scales with processes."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from types import TracebackType

from .ingest.fingerprint import Fingerprinter, Record

__all__ = ["FingerprintPool"]

_WORKER: Fingerprinter | None = None


def _fingerprint_batch(batch: Sequence[tuple[str, str | None]]) -> list[Record]:
    global _WORKER
    if _WORKER is None:
        _WORKER = Fingerprinter.default()
    records: list[Record] = _WORKER.fingerprint_many(batch)
    return records


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
            self._pool = ProcessPoolExecutor(max_workers=self.workers)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def fingerprint(self, pairs: Sequence[tuple[str, str | None]]) -> list[Record]:
        """Records for (text, title) pairs, in order."""
        batches = [pairs[k : k + self.batch_size] for k in range(0, len(pairs), self.batch_size)]
        out: list[Record] = []
        if self._pool is None:
            for batch in batches:
                out.extend(_fingerprint_batch(batch))
        else:
            for records in self._pool.map(_fingerprint_batch, batches):
                out.extend(records)
        return out

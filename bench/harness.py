"""What the Elasticsearch benchmarks share: a cluster to run against, a real ``neardup serve`` with its
workers' peak memory, and timing a set of lookup methods over the same queries."""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np
import psutil
from elasticsearch import Elasticsearch, NotFoundError, helpers

from neardup import node as esnode
from neardup.config import Settings
from neardup.ingest.fingerprint import Record
from neardup.mappings import schema

__all__ = [
    "WRITTEN",
    "PeakRss",
    "Row",
    "Served",
    "at_least",
    "bare_record",
    "bulk_in_threads",
    "bulk_load",
    "elasticsearch",
    "percentiles",
    "post_batch",
    "post_in_threads",
    "segments_during",
    "send_bodies",
    "serve",
    "time_methods",
    "unwritten",
    "wait_for_merges",
]

Q = TypeVar("Q")


def at_least(least: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least ``least``.

    >>> at_least(1)("3")
    3
    """

    def parse(text: str) -> int:
        value = int(text)
        if value < least:
            raise argparse.ArgumentTypeError(f"{text} is less than {least}")
        return value

    return parse


def bare_record(fingerprints: Sequence[int], version: str) -> Record:
    """A record of bare fingerprints (synthetic ones), as much as the block query reads of a document: no
    sketch, no exact hash."""
    return Record(tuple(int(f) for f in fingerprints), np.zeros(0, dtype=np.uint32), "", "ok", version)


def wait_for_merges(client: Elasticsearch, poll: float = 1.0) -> float:
    """Wait until no node merges segments (a bulk load leaves merges running, which would be timed with whatever
    comes next); the seconds waited."""
    t0 = time.perf_counter()
    while True:
        stats = client.nodes.stats(metric="indices", index_metric="merge")
        if all(n["indices"]["merges"]["current"] == 0 for n in stats["nodes"].values()):
            return time.perf_counter() - t0
        time.sleep(poll)


def stored_document(index: str, doc_id: str, text: str, record: Record, order: int) -> dict[str, Any]:
    """A bulk action writing a document as neardup would have stored it: ``record``'s fields, the document its
    own cluster, ``indexed_at`` from ``order`` (later documents later)."""
    fields = schema.record_fields(record) | {
        schema.CLUSTER: doc_id,
        schema.INDEXED_AT: schema.timestamp(1_700_000_000_000_000_000 + order),
    }
    return {"_index": index, "_id": doc_id, "text": text, schema.ROOT: fields}


def bulk_load(
    client: Elasticsearch,
    indices: str | Sequence[str],
    actions: Iterable[dict[str, Any]],
    *,
    threads: int = 2,
    chunk_size: int = 2000,
    pipeline: str | None = None,
    restore: str | None = None,
) -> float:
    """Load ``actions`` into ``indices`` the fast way, the seconds it took: refresh off while bulk writes them
    (``threads`` client threads; a refused document raises), then ``refresh_interval`` back to ``restore`` (None:
    the index default, under which a search-idle shard skips its scheduled refreshes) and one refresh, so the
    documents are searchable when it returns. Merges may still run (:func:`wait_for_merges`)."""
    names = [indices] if isinstance(indices, str) else list(indices)
    slow = client.options(request_timeout=600)
    t0 = time.perf_counter()
    client.indices.put_settings(index=names, settings={"refresh_interval": "-1"})
    if threads > 1:
        for _ in helpers.parallel_bulk(slow, actions, thread_count=threads, chunk_size=chunk_size, pipeline=pipeline):
            pass
    else:
        helpers.bulk(slow, actions, chunk_size=chunk_size, pipeline=pipeline)
    client.indices.put_settings(index=names, settings={"refresh_interval": restore})
    slow.indices.refresh(index=names)
    return time.perf_counter() - t0


def bulk_in_threads(
    client: Elasticsearch, actions: Sequence[dict[str, Any]], threads: int, batch: int, pipeline: str | None = None
) -> int:
    """Send ``actions`` (made beforehand, so that making them is not timed with the writing) as bulk requests of
    ``batch`` from ``threads`` client threads through ``pipeline``; how many items were refused."""
    failed = 0
    for ok, _ in helpers.parallel_bulk(
        client.options(request_timeout=600),
        actions,
        thread_count=threads,
        chunk_size=batch,
        pipeline=pipeline,
        raise_on_error=False,
    ):
        failed += not ok
    return failed


#: an item's statuses when the service wrote the document
WRITTEN = ("created", "updated")


def stored_clusters(client: Elasticsearch, index: str, ids: Sequence[str]) -> list[str | None]:
    """The ``neardup.cluster`` each of ``ids`` is stored with, in their order (None: none, or no such document), by
    real-time reads of 5,000 ids at a time."""
    out: list[str | None] = []
    for k in range(0, len(ids), 5000):
        resp = client.mget(index=index, ids=list(ids[k : k + 5000]), source=[schema.path(schema.CLUSTER)])
        out += [((d.get("_source") or {}).get(schema.ROOT) or {}).get(schema.CLUSTER) for d in resp["docs"]]
    return out


def unwritten(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The service's answers that say a document was not written (refused, or undone with its batch)."""
    return [i for i in items if i.get("status") not in WRITTEN]


def segments_during(client: Elasticsearch, index: str, run: Callable[[], Q]) -> tuple[Q, float, int]:
    """``run()``'s result with the mean and the most segments ``index`` had, sampled every second meanwhile
    (while it exists)."""
    counts: list[int] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(1.0):
            try:
                counts.append(len(client.cat.segments(index=index, format="json").body))
            except NotFoundError:
                continue

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    try:
        result = run()
    finally:
        done.set()
        watcher.join()
    return result, statistics.fmean(counts) if counts else 0.0, max(counts, default=0)


def send_bodies(client: Elasticsearch, bodies: Sequence[bytes], what: str) -> None:
    """Send bulk request bodies serialised beforehand (NDJSON, as they are) from two client threads; a refused
    document raises, naming ``what`` was written."""

    def send(body: bytes) -> None:
        resp = client.bulk(operations=body)  # type: ignore[arg-type]  # NDJSON serialised beforehand, sent as is
        if resp["errors"]:
            raise RuntimeError(f"bulk refused documents of {what}")

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(send, bodies))


#: (method, p50 ms, p99 ms, mean candidates or None when not observable, targets found)
Row = tuple[str, float, float, float | None, int]


@contextmanager
def elasticsearch(port: int, heap: str) -> Iterator[tuple[str, str]]:
    """(url, label): ``NEARDUP_ES_URL`` when set, else a fresh embedded node, stopped and deleted afterwards."""
    url = os.environ.get("NEARDUP_ES_URL")
    if url:
        yield url, url
        return
    with embedded_node(port, heap) as info:
        yield info.url, f"embedded {esnode.ES_VERSION}"


@contextmanager
def embedded_node(port: int, heap: str) -> Iterator[esnode.NodeInfo]:
    """A fresh embedded node on a data directory of its own, stopped and deleted afterwards."""
    with esnode.temporary_cluster(Settings.from_env().home, port, heap, prefix="neardup-bench-") as node:
        yield node.start()


@dataclass
class Served:
    url: str
    workers: list[int]


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serve(es_url: str, workers: int = 2, **settings: str) -> Iterator[Served]:
    """A real ``neardup serve`` (gunicorn) against ``es_url``, with ``NEARDUP_<NAME>`` settings."""
    port = _port()
    env = os.environ | {"NEARDUP_ES_URL": es_url} | {f"NEARDUP_{k.upper()}": v for k, v in settings.items()}
    server = subprocess.Popen(
        [sys.executable, "-m", "neardup", "serve", "--port", str(port), "--workers", str(workers)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5):
                    break
            except OSError:
                time.sleep(0.2)
        yield Served(f"http://127.0.0.1:{port}", [c.pid for c in psutil.Process(server.pid).children()])
    finally:
        server.terminate()
        server.wait(timeout=60)


def cpu_seconds(pids: Sequence[int]) -> float:
    """The CPU seconds ``pids`` have used so far (user + system, all their threads)."""
    total = 0.0
    for pid in pids:
        times = psutil.Process(pid).cpu_times()
        total += times.user + times.system
    return total


@dataclass
class PeakRss:
    """The largest resident set of any of ``pids``, sampled every 50 ms while the block runs."""

    pids: list[int]
    peak: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def _sample(self) -> None:
        procs = [psutil.Process(p) for p in self.pids]
        while not self._stop.is_set():
            self.peak = max(self.peak, *(p.memory_info().rss for p in procs))
            time.sleep(0.05)

    def __enter__(self) -> PeakRss:
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


class Posted(Protocol):
    """A document as the benchmarks post it."""

    @property
    def id(self) -> str: ...

    @property
    def text(self) -> str: ...


def post_batch(url: str, index: str, docs: Sequence[Posted], retried: list[int] | None = None) -> list[dict[str, Any]]:
    """Post one batch to the service's documents endpoint; its items. A 5xx (Elasticsearch busy or away:
    nothing was written) is sent again after a second, as a client would, up to 5 times, each status
    appended to ``retried``."""
    body = "\n".join(json.dumps({"id": d.id, "text": d.text}, ensure_ascii=False) for d in docs).encode()
    req = urllib.request.Request(
        f"{url}/v1/indices/{index}/documents", data=body, headers={"Content-Type": "application/x-ndjson"}
    )
    for attempt in range(6):
        try:
            with urllib.request.urlopen(req, timeout=600) as resp:
                items: list[dict[str, Any]] = json.load(resp)["items"]
                return items
        except urllib.error.HTTPError as err:
            if err.code < 500 or attempt == 5:
                raise
            if retried is not None:
                retried.append(err.code)
            time.sleep(1.0)
    raise AssertionError("unreachable")


def post_in_threads(
    served: Served,
    index: str,
    docs: Sequence[Posted],
    batch: int,
    threads: int,
    finish: Callable[[], object] | None = None,
    retried: list[int] | None = None,
) -> tuple[float, int, list[dict[str, Any]]]:
    """(seconds, peak worker RSS, items in document order) for ``docs`` posted in batches of ``batch`` from
    ``threads`` client threads, each taking the next batch when its last one is answered; ``finish`` (a
    refresh, say) runs inside the timing after the last answer."""
    batches = [docs[k : k + batch] for k in range(0, len(docs), batch)]
    items: list[list[dict[str, Any]]] = [[] for _ in batches]
    taken = iter(range(len(batches)))
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                k = next(taken, None)
            if k is None:
                return
            items[k] = post_batch(served.url, index, batches[k], retried)

    with PeakRss(served.workers) as rss:
        t0 = time.perf_counter()
        pool = [threading.Thread(target=worker) for _ in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        if finish is not None:
            finish()
        seconds = time.perf_counter() - t0
    return seconds, rss.peak, [i for part in items for i in part]


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

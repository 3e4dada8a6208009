"""How each way of writing documents slows down once the index is large: Elasticsearch's own bulk next to neardup's.

``scale.md`` measures the service writing its ``--ingest`` documents into an empty index and into the index of a
million holding all but those, and reports the second rate against the first. This bench asks the same of its peers
(50,000 documents into an empty index and into one holding 950,000), in one run on one node, so that
what a large index costs Elasticsearch itself is told apart from what it costs neardup's lookups:

- plain bulk of the text alone (no neardup fields): Elasticsearch's own bulk;
- plain bulk of the documents with their neardup fields computed beforehand (as ``dedupe`` or the preload leaves
  them, each its own cluster): indexing the fields, with no fingerprinting and no search;
- bulk through the ``neardup`` pipeline: fingerprinting in Elasticsearch, no search;
- bulk through the ``neardup-flag`` pipeline: fingerprinting and a candidate search per document;
- the service writing through that pipeline (``NEARDUP_FLAG_IN_ES=true``), as ``scale.md`` runs it.

Early, each way writes the corpus's first ``--ingest`` documents into an empty index with neardup's template. Late,
it writes the last ``--ingest`` into a ``_clone`` of one index holding all the others (bulk-loaded with their
fingerprints once, merges waited for, then write-blocked): a clone shares the source's segment files through hard
links, so every late run starts from the very same segments, and no run sees another's documents (the late
documents are other documents than the early ones, as in ``scale.md``). Bulk ways send batches of 500 from 2 client
threads (``helpers.parallel_bulk``, the actions made before the clock starts), the service gets them posted from 2
threads; every run ends with a refresh (timed) and starts once the node has no merge running. Refreshes are
Elasticsearch's default: every second while the shard is searched (the flag ways search it all the time), skipped
while it is search-idle (the other ways, which never search it). Node CPU is the Elasticsearch
process's, from the first request until the refresh and the merges the run set off are done. Before anything is
timed, ``--warm`` other documents go every way into an index of their own. Each round runs every way early and late,
the order of the two alternating by round.

    python -m bench.late_peers --docs 1000000 --ingest 50000 --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from elasticsearch import Elasticsearch

from bench.corpus import GENERATOR, Doc, corpus_path, corpus_records, read_corpus
from bench.harness import (
    Served,
    at_least,
    bulk_in_threads,
    bulk_load,
    cpu_seconds,
    embedded_node,
    post_in_threads,
    segments_during,
    serve,
    stored_document,
    unwritten,
    wait_for_merges,
)
from bench.machine import RESULTS, describe, out_flag, out_option, write_results
from neardup.es.client import setup_index
from neardup.es.pipeline import install_pipeline
from neardup.ingest.fingerprint import Record

#: the results file in bench/results unless --out names another
OUT = "late_peers.md"
BASE = "bench-late-base"
BATCH = 500
THREADS = 2


@dataclass(frozen=True)
class Way:
    """One way of writing: bulk ``actions`` of a document (its record, its place in the corpus) through
    ``pipeline``, or (``actions`` None) the service."""

    key: str
    name: str
    actions: Callable[[str, Doc, Record, int], dict[str, Any]] | None
    pipeline: str | None = None


def _text(index: str, doc: Doc, record: Record, order: int) -> dict[str, Any]:
    return {"_index": index, "_id": doc.id, "text": doc.text}


def _prepared(index: str, doc: Doc, record: Record, order: int) -> dict[str, Any]:
    return stored_document(index, doc.id, doc.text, record, order)


def _ways(fingerprint: str, flag: str) -> tuple[Way, ...]:
    return (
        Way("text", "plain bulk, the text alone (no neardup fields)", _text),
        Way("prepared", "plain bulk, the neardup fields computed beforehand", _prepared),
        Way("pipeline", "bulk through the `neardup` pipeline (fingerprints)", _text, fingerprint),
        Way("flag", "bulk through the `neardup-flag` pipeline (fingerprints + flagging)", _text, flag),
        Way("service", "the service, `NEARDUP_FLAG_IN_ES=true` (2 workers)", None),
    )


@dataclass
class Runs:
    """A way's timed runs in one phase: documents/s, node CPU ms per document and mean segments, per run."""

    rates: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    segments: list[float] = field(default_factory=list)


def _actions(way: Way, index: str, docs: Sequence[Doc], records: Sequence[Record], first: int) -> list[dict[str, Any]]:
    """``way``'s bulk actions for ``docs`` (the corpus's from ``first`` on), made before the clock starts."""
    assert way.actions is not None
    return [way.actions(index, d, records[first + k], first + k) for k, d in enumerate(docs)]


def _write(
    client: Elasticsearch, served: Served, way: Way, index: str, docs: Sequence[Doc], actions: list[Any]
) -> float:
    """Seconds for ``way`` to write ``docs`` (through the service, or as the bulk ``actions``) into ``index`` and
    refresh it; every document must be written."""
    t0 = time.perf_counter()
    if way.actions is None:
        _s, _rss, items = post_in_threads(served, index, docs, BATCH, THREADS)
        failed = len(unwritten(items))
    else:
        failed = bulk_in_threads(client, actions, THREADS, BATCH, way.pipeline)
    client.indices.refresh(index=index)
    seconds = time.perf_counter() - t0
    if failed:
        raise RuntimeError(f"{way.key} into {index}: {failed} documents not written")
    return seconds


def _timed(
    client: Elasticsearch,
    pid: int,
    served: Served,
    way: Way,
    index: str,
    docs: Sequence[Doc],
    records: Sequence[Record],
    first: int,
    runs: Runs,
) -> None:
    actions = [] if way.actions is None else _actions(way, index, docs, records, first)
    before = client.count(index=index)["count"]
    wait_for_merges(client)
    c0 = cpu_seconds([pid])
    seconds, mean, _most = segments_during(client, index, lambda: _write(client, served, way, index, docs, actions))
    wait_for_merges(client, poll=0.5)
    runs.rates.append(len(docs) / seconds)
    runs.cpu_ms.append(1000 * (cpu_seconds([pid]) - c0) / len(docs))
    runs.segments.append(mean)
    if client.count(index=index)["count"] != before + len(docs):
        raise RuntimeError(f"{way.key} into {index}: {before:,} + {len(docs):,} documents expected")


def _early(
    client: Elasticsearch,
    pid: int,
    served: Served,
    way: Way,
    docs: Sequence[Doc],
    records: Sequence[Record],
    runs: Runs,
) -> None:
    """One run of ``way`` into an empty index (deleted after), added to ``runs``."""
    index = f"bench-late-early-{way.key}"
    setup_index(client, index)
    try:
        _timed(client, pid, served, way, index, docs, records, 0, runs)
    finally:
        client.indices.delete(index=index)


def _late(
    client: Elasticsearch,
    pid: int,
    served: Served,
    way: Way,
    docs: Sequence[Doc],
    records: Sequence[Record],
    first: int,
    runs: Runs,
) -> None:
    """One run of ``way`` into a clone of the base index (deleted after), added to ``runs``."""
    index = f"bench-late-{way.key}"
    client.indices.clone(index=BASE, target=index, settings={"index.blocks.write": None}, wait_for_active_shards="1")
    try:
        _timed(client, pid, served, way, index, docs, records, first, runs)
    finally:
        client.indices.delete(index=index)


def ratio_of_medians(late: Sequence[float], early: Sequence[float]) -> float:
    """The median of ``late`` over the median of ``early``.

    >>> ratio_of_medians([300.0, 500.0], [1000.0, 1000.0, 900.0])
    0.4
    """
    return statistics.median(late) / statistics.median(early)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--docs", type=at_least(1), default=1_000_000, help="corpus size; the late index holds all but --ingest"
    )
    parser.add_argument("--ingest", type=at_least(1), default=50_000, help="documents each way writes, early and late")
    parser.add_argument("--rounds", type=at_least(1), default=3)
    parser.add_argument("--warm", type=at_least(0), default=50_000, help="documents every way writes before the rounds")
    out_option(parser, OUT)
    args = parser.parse_args(argv)
    n, ingest = args.docs, args.ingest
    if 2 * ingest + args.warm > n:
        parser.error(f"--docs {n:,} is too few for --ingest {ingest:,} early, as many late and --warm {args.warm:,}")
    t0 = time.perf_counter()
    docs = read_corpus(corpus_path(n))
    records = corpus_records(docs)
    ready = time.perf_counter() - t0
    early: dict[str, Runs] = defaultdict(Runs)
    late: dict[str, Runs] = defaultdict(Runs)
    with ExitStack() as stack:
        node = stack.enter_context(embedded_node(port=9285, heap="4g"))
        client = Elasticsearch(node.url, request_timeout=600)
        ways = _ways(install_pipeline(client), install_pipeline(client, flag=True))
        served = stack.enter_context(serve(node.url, es_timeout="60", flag_in_es="true"))
        warm = docs[ingest : ingest + args.warm]
        for way in ways:
            _early(client, node.pid, served, way, warm, records[ingest : ingest + args.warm], Runs())
            print(f"warmed: {way.key}", flush=True)
        setup_index(client, BASE)
        load_s = bulk_load(
            client, BASE, (stored_document(BASE, docs[k].id, docs[k].text, records[k], k) for k in range(n - ingest))
        )
        merge_s = wait_for_merges(client, poll=2.0)
        client.indices.put_settings(index=BASE, settings={"index.blocks.write": True})
        base_segments = len(client.cat.segments(index=BASE, format="json").body)
        for r in range(args.rounds):
            for way in ways:
                for phase in ("early", "late") if r % 2 == 0 else ("late", "early"):
                    if phase == "early":
                        runs = early[way.key]
                        _early(client, node.pid, served, way, docs[:ingest], records, runs)
                    else:
                        runs = late[way.key]
                        _late(client, node.pid, served, way, docs[n - ingest :], records, n - ingest, runs)
                    print(f"round {r}, {way.key}, {phase}: {runs.rates[-1]:,.0f} documents/s", flush=True)
        client.close()

    command = f"python -m bench.late_peers --docs {n} --ingest {ingest} --rounds {args.rounds}"
    command += f" --warm {args.warm}" if args.warm != parser.get_default("warm") else ""
    command += out_flag(args.out, OUT)
    text_early = statistics.median(early["text"].rates)
    text_late = statistics.median(late["text"].rates)
    out = [
        "# Early against late, for Elasticsearch's own bulk and for neardup's ways of writing",
        "",
        f"Machine: {describe()}",
        "Elasticsearch: embedded, 4 GB heap, 1 shard, neardup's index template, the default refresh (every second "
        "while searched, as the flag ways' shards are; skipped while search-idle); the service with 2 gunicorn "
        "workers on the same 2 cores.",
        f"Corpus: `python -m bench.corpus --docs {n}`, generator {GENERATOR} (ready in {ready:.0f}s). "
        f"Command: `{command}`",
        "",
        f"Early: the corpus's first {ingest:,} documents into an empty index. Late: its last {ingest:,} into a "
        f"`_clone` of an index holding the {n - ingest:,} others (bulk-loaded with their fingerprints in "
        f"{load_s:.0f}s, merges waited for {merge_s:.0f}s; {base_segments} segments when cloned). Batches of "
        f"{BATCH} from {THREADS} client threads (bulk actions made before the clock starts); each run ends with a "
        f"refresh. Rounds: {args.rounds}, early and late in turn (the order alternating); before them "
        f"{args.warm:,} other documents went every way. Node CPU: the Elasticsearch process's, until the run's "
        "refresh and merges were done.",
        "",
        "| way | early documents/s (runs) | late documents/s (runs) | late ÷ early | early ÷ text bulk "
        "| late ÷ text bulk | node CPU ms/document early, late | segments (mean) early, late |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for way in ways:
        e, lt = early[way.key], late[way.key]
        out.append(
            f"| {way.name} | {statistics.median(e.rates):,.0f} ({', '.join(f'{x:,.0f}' for x in e.rates)}) "
            f"| {statistics.median(lt.rates):,.0f} ({', '.join(f'{x:,.0f}' for x in lt.rates)}) "
            f"| {ratio_of_medians(lt.rates, e.rates):.2f} "
            f"| {statistics.median(e.rates) / text_early:.2f} | {statistics.median(lt.rates) / text_late:.2f} "
            f"| {statistics.median(e.cpu_ms):.2f}, {statistics.median(lt.cpu_ms):.2f} "
            f"| {statistics.fmean(e.segments):.1f}, {statistics.fmean(lt.segments):.1f} |"
        )
    out += [
        "",
        "Medians of the runs. late ÷ early is the way's own slowdown; the text bulk's is what a large index costs "
        "Elasticsearch's indexing alone. Segments are sampled every second while a run writes; a late run can hold "
        "fewer than the clone began with, its new segments merged with the base's smaller ones (merging that its node "
        "CPU counts).",
    ]
    write_results(RESULTS / args.out, out)
    print("\n".join(out))


if __name__ == "__main__":
    main()

"""Ingest speed: the same documents written nine ways, in the same run, against the same node.

- plain ``helpers.bulk`` (no pipeline): what Elasticsearch does on its own;
- bulk through a pipeline without processors: what Elasticsearch's ingest framework costs on its own (each document's
  source read into an ingest document and written back);
- plain bulk of the documents with their ``neardup.*`` fields computed beforehand in Python (not timed): what
  indexing those fields costs Elasticsearch, the floor of any way that writes them;
- the same through the pipeline without processors: a pipeline that writes the fields without computing them (the
  client sends them, which it does not for the processor), so the fingerprinting pipeline's distance from it is about
  what fingerprinting costs the node;
- bulk through the ``neardup`` pipeline, fingerprinting only (the Java processor);
- bulk through the ``neardup-flag`` pipeline (``"flag": true``): fingerprints and cluster assignment inside
  Elasticsearch; its clusters are compared with the service's (pairwise precision / recall against the planted
  reprints, and how many sampled documents got the very cluster the service gave them);
- the Python service (``POST /v1/indices/{index}/documents``, 2 gunicorn workers), fingerprinting in Python and
  with ``NEARDUP_FINGERPRINT_IN_ES=true`` (one ``_simulate`` of the ``neardup`` pipeline per batch), and with
  ``NEARDUP_FLAG_IN_ES=true`` (each batch written through the ``neardup-flag`` pipeline, its assignments read back).

Every row writes into a fresh index with the neardup mapping (Elasticsearch's default refresh, every second), with 2
client threads and batches of 500, and ends with a refresh (counted); each starts once the node has no merge
running. Every way first writes ``--warm-up`` documents untimed, all of them by default (a cold node's first run was
the slowest by far, and the node still compiles code after a short warm-up), then ``--rounds`` rounds of all the
ways in turn; the median round is reported with the range. Then the refresh interval's trade: the flag pipeline over
``--refresh-docs`` documents (a longer run, where segments pile up as they do in a live index) and the service
(processor fingerprinting, 2 workers) over the same documents as above, each into an index refreshing every 1 s and
every 5 s (with the windows of documents written moments ago at 5 s and 10 s), with their clusters' P/R and, for the
pipeline, the number of segments sampled every second. Then the fingerprinting rate in characters per second, one
thread: the Java pipeline and its jieba port against ``jieba.lcut`` in Python, over the same People's Daily texts.

``--corpus news`` writes the nine ways over the People's Daily reprint set instead (:func:`bench.corpus.news_corpus`:
whole articles, about twice as long as the bench corpus's documents, most of them in a group of reprints) to
``ingest_news.md``, without the refresh interval's run (the set is too small for it) or the fingerprinting rate
(the same texts whatever the corpus).

Run: ``python -m bench.ingest [--docs 20000] [--refresh-docs 100000] [--rounds 3] [--warm-up N]``
→ bench/results/ingest.md; ``python -m bench.ingest --corpus news --rounds 5`` → bench/results/ingest_news.md
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jieba
from elasticsearch import Elasticsearch, helpers

from bench.corpus import GENERATOR, NEWS_SEED, Doc, corpus_path, news_corpus, read_corpus
from bench.harness import (
    Served,
    bulk_in_threads,
    elasticsearch,
    post_in_threads,
    segments_during,
    serve,
    unwritten,
    wait_for_merges,
)
from bench.machine import RESULTS, describe, write_results
from neardup.config import Settings
from neardup.es.client import setup_index
from neardup.es.pipeline import FLAG_PIPELINE_ID, PIPELINE_ID, install_pipeline
from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.metrics import pairwise_scores
from neardup.ingest.fingerprint import Fingerprinter, Record
from neardup.mappings.schema import CLUSTER, ROOT, path, record_fields
from neardup.node.plugin_build import build_plugin

#: results file by corpus
OUT = {"bench": RESULTS / "ingest.md", "news": RESULTS / "ingest_news.md"}
#: the bench corpus's defaults: documents written each way, and documents of the refresh interval's run
DOCS = 20_000
REFRESH_DOCS = 100_000
BATCH = 500
THREADS = 2
#: a pipeline without processors: Elasticsearch's ingest framework alone
EMPTY_PIPELINE = "bench-ingest-empty"


def _fresh(client: Elasticsearch, index: str) -> None:
    """A new empty ``index``, once the node has finished merging what earlier rows wrote (merges left running
    would be timed with this row)."""
    client.indices.delete(index=index, ignore_unavailable=True)
    wait_for_merges(client)
    setup_index(client, index)


def _bulk(
    client: Elasticsearch,
    index: str,
    docs: Sequence[Doc],
    pipeline: str | None,
    records: Sequence[Record] | None = None,
    settings: dict[str, Any] | None = None,
) -> float:
    """Seconds to write ``docs`` (with their ``records``' fingerprint fields when given, made before the clock
    starts) with ``THREADS`` bulk threads (and refresh) into a fresh index (given these ``settings``); every item
    must succeed."""
    _fresh(client, index)
    if settings:
        client.indices.put_settings(index=index, settings=settings)
    if records is None:
        actions = [{"_index": index, "_id": d.id, "text": d.text} for d in docs]
    else:
        actions = [
            {"_index": index, "_id": d.id, "text": d.text, ROOT: record_fields(r)}
            for d, r in zip(docs, records, strict=True)
        ]
    t0 = time.perf_counter()
    failed = bulk_in_threads(client, actions, THREADS, BATCH, pipeline)
    client.indices.refresh(index=index)
    seconds = time.perf_counter() - t0
    if failed or client.count(index=index)["count"] != len(docs):
        raise AssertionError(f"{index}: {failed} failed items")
    return seconds


#: (refresh interval, window of documents written moments ago in seconds): the window outlasts the refresh
REFRESH_TRADE = (("1s", 5), ("5s", 10))


def _pr(client: Elasticsearch, index: str, docs: Sequence[Doc]) -> str:
    """Pairwise precision / recall of ``index``'s clusters against the planted groups."""
    clusters = _clusters(client, index)
    scores = pairwise_scores([d.group for d in docs], [clusters[d.id] for d in docs])
    return f"{scores.precision:.3f}/{scores.recall:.3f}"


def _refresh_rows(client: Elasticsearch, url: str, flag_docs: Sequence[Doc], docs: Sequence[Doc]) -> list[str]:
    """The flag pipeline over ``flag_docs`` and the service (processor fingerprinting) over ``docs`` at each
    refresh interval of ``REFRESH_TRADE``, as table rows."""
    out = []
    index = "bench-ingest-refresh"
    for interval, window in REFRESH_TRADE:
        # the pipeline of this window has an id of its own (neardup-flag is the default window's)
        pipeline = install_pipeline(client, flag=True, settings=Settings.from_env({}, recent_seconds=window))

        def write(interval: str = interval, pipeline: str = pipeline) -> float:
            return _bulk(client, index, flag_docs, pipeline, settings={"refresh_interval": interval})

        seconds, mean, most = segments_during(client, index, write)
        out.append(
            f"| `pipeline={pipeline}`, {len(flag_docs):,} documents | {interval} | {window} s "
            f"| {len(flag_docs) / seconds:,.0f} | {_pr(client, index, flag_docs)} | {mean:.1f} / {most} |"
        )
        with serve(url, workers=2, fingerprint_in_es="true", recent_seconds=str(window)) as served:
            seconds, _ = _service(client, served, index, docs, settings={"refresh_interval": interval})
        out.append(
            f"| the service, processor fingerprinting, {len(docs):,} documents | {interval} | {window} s "
            f"| {len(docs) / seconds:,.0f} | {_pr(client, index, docs)} | |"
        )
        client.indices.delete(index=index)
    return out


def _service(
    client: Elasticsearch, served: Served, index: str, docs: Sequence[Doc], settings: dict[str, Any] | None = None
) -> tuple[float, int]:
    """(seconds, peak worker RSS) to post ``docs`` in batches from ``THREADS`` client threads into a fresh index
    (given these ``settings``), the closing refresh counted."""
    _fresh(client, index)
    if settings:
        client.indices.put_settings(index=index, settings=settings)
    seconds, peak, items = post_in_threads(
        served, index, docs, BATCH, THREADS, finish=lambda: client.indices.refresh(index=index)
    )
    if unwritten(items):
        raise AssertionError(f"the service refused items: {items[:3]}")
    return seconds, peak


def _same_fields(client: Elasticsearch, index: str, docs: Sequence[Doc], sample: int = 200) -> int:
    """How many of a sample of ``docs`` the pipeline gave exactly Python's fingerprint fields."""
    picked = list(docs[:: max(1, len(docs) // sample)])[:sample]
    want = [record_fields(r) for r in Fingerprinter.default().fingerprint_many([(d.text, None) for d in picked])]
    got = client.mget(index=index, ids=[d.id for d in picked])["docs"]
    return sum(all(g["_source"][ROOT].get(k) == v for k, v in w.items()) for g, w in zip(got, want, strict=True))


def _clusters(client: Elasticsearch, index: str) -> dict[str, str]:
    """Every document's stored ``neardup.cluster``."""
    hits = helpers.scan(client, index=index, query={"query": {"match_all": {}}}, _source=[path(CLUSTER)], size=5000)
    return {h["_id"]: h["_source"][ROOT][CLUSTER] for h in hits}


def _compare_clusters(client: Elasticsearch, index: str, service_index: str, docs: Sequence[Doc]) -> str:
    """``index``'s clusters (the flag pipeline's, or the service's fingerprinting through the processor) against the
    Python service's: pairwise P/R of both against the planted groups, and how many of a sample of 200 documents
    have the same cluster in both (a cluster is named by its first document, and with 2 client threads which copy
    comes first differs from run to run: two flag runs agree on about 195/200)."""
    flagged, served = _clusters(client, index), _clusters(client, service_index)
    truth = [d.group for d in docs]
    ours = pairwise_scores(truth, [flagged[d.id] for d in docs])
    theirs = pairwise_scores(truth, [served[d.id] for d in docs])
    picked = list(docs[:: max(1, len(docs) // 200)])[:200]
    same = sum(flagged[d.id] == served[d.id] for d in picked)
    return (
        f"P/R {ours.precision:.3f}/{ours.recall:.3f} (service {theirs.precision:.3f}/{theirs.recall:.3f}); "
        f"{same}/{len(picked)} sampled in the service's cluster"
    )


def _median(run: Callable[[], object], repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _java_rates(texts: Sequence[str]) -> dict[str, float]:
    """Characters per second of the Java pipeline (``fields``) and its cut alone (``cut``), one thread."""
    build = build_plugin(Settings.from_env().home)
    proc = subprocess.run(
        ["java", "-cp", build.test_classpath(), "io.neardup.bench.FingerprintThroughput", "3", "cut", "fields"],
        input="\n".join(json.dumps(t) for t in texts) + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    rates = {}
    for line in proc.stdout.splitlines():
        mode, seconds, chars = line.split()
        rates[mode] = int(chars) / float(seconds)
    return rates


@dataclass(frozen=True)
class Way:
    """One way of writing the documents: ``run`` writes them into a fresh ``index`` and returns (seconds, peak
    worker RSS, 0 without a service)."""

    key: str
    name: str
    index: str
    run: Callable[[Elasticsearch, str, Sequence[Doc], Sequence[Record]], tuple[float, int]]


def _bulk_way(key: str, name: str, pipeline: str | None, prepared: bool = False) -> Way:
    index = f"bench-ingest-{key}"

    def run(client: Elasticsearch, url: str, docs: Sequence[Doc], records: Sequence[Record]) -> tuple[float, int]:
        return _bulk(client, index, docs, pipeline, records if prepared else None), 0

    return Way(key, name, index, run)


def _service_way(key: str, name: str, **settings: str) -> Way:
    index = f"bench-ingest-{key}"

    def run(client: Elasticsearch, url: str, docs: Sequence[Doc], records: Sequence[Record]) -> tuple[float, int]:
        with serve(url, workers=2, **settings) as served:  # a new server per run: nothing remembered between runs
            return _service(client, served, index, docs)

    return Way(key, name, index, run)


WAYS = (
    _bulk_way("plain", "plain `helpers.bulk`, no pipeline", None),
    _bulk_way("empty", "bulk through a pipeline without processors", EMPTY_PIPELINE),
    _bulk_way("prepared", "plain bulk of the documents with their neardup fields computed beforehand", None, True),
    _bulk_way("prepared-empty", "the same, through the pipeline without processors", EMPTY_PIPELINE, prepared=True),
    _bulk_way("pipeline", "bulk with `pipeline=neardup` (fingerprints)", PIPELINE_ID),
    _service_way("service", "the Python service, 2 workers (fingerprints + flagging)"),
    _service_way(
        "service-es",
        "the service with `NEARDUP_FINGERPRINT_IN_ES=true` (the processor fingerprints, the service flags)",
        fingerprint_in_es="true",
    ),
    _service_way(
        "service-flag",
        "the service with `NEARDUP_FLAG_IN_ES=true` (the processor fingerprints and flags, the service reads the "
        "assignments back)",
        flag_in_es="true",
    ),
    _bulk_way("flag", "bulk with `pipeline=neardup-flag` (fingerprints + flagging)", FLAG_PIPELINE_ID),
)


def _notes(client: Elasticsearch, docs: Sequence[Doc], rss: dict[str, int]) -> dict[str, str]:
    """What each way's last round wrote, checked: the pipeline's fields against Python's, the clusters of the
    processor-fingerprinting service and of the flag pipeline against the Python service's; worker memory."""
    notes = {
        "empty": "what Elasticsearch's ingest framework costs",
        "prepared": "what indexing the fields costs Elasticsearch; fingerprinting not timed",
        "prepared-empty": "a pipeline writing the fields without computing them (the client sends them)",
    }
    notes["pipeline"] = f"{_same_fields(client, 'bench-ingest-pipeline', docs)}/200 sampled = Python"
    notes["service"] = f"peak worker RSS {rss['service'] / 2**20:.0f} MiB"
    notes["service-es"] = f"peak worker RSS {rss['service-es'] / 2**20:.0f} MiB; " + _compare_clusters(
        client, "bench-ingest-service-es", "bench-ingest-service", docs
    )
    notes["service-flag"] = f"peak worker RSS {rss['service-flag'] / 2**20:.0f} MiB; " + _compare_clusters(
        client, "bench-ingest-service-flag", "bench-ingest-service", docs
    )
    notes["flag"] = _compare_clusters(client, "bench-ingest-flag", "bench-ingest-service", docs)
    return notes


def _news(args: argparse.Namespace, parser: argparse.ArgumentParser) -> tuple[list[Doc], str, str, int]:
    """(documents, what they are, the command, documents of the refresh interval's run) of ``--corpus news``: its
    size is the set's, and it has too few documents for the refresh interval's run."""
    if args.docs is not None or args.refresh_docs:
        parser.error("--docs and --refresh-docs size the bench corpus; the news set is the articles and their reprints")
    docs = news_corpus()
    sizes = Counter(d.group for d in docs).values()
    variants = [n - 1 for n in sizes if n > 1]
    chars = sum(len(d.text) for d in docs)
    what = (
        f"{len(docs):,} documents of the People's Daily reprint set (`bench.corpus.news_corpus`, draw {NEWS_SEED}: "
        f"{len(sizes):,} articles of January 1998, {len(variants):,} of them with {min(variants)}–{max(variants)} "
        f"reprint variants each, half of the others in a site's boilerplate; {chars / len(docs):.0f} characters on "
        "average)"
    )
    return docs, what, f"python -m bench.ingest --corpus news --rounds {args.rounds}", 0


def _bench(args: argparse.Namespace) -> tuple[list[Doc], str, str, int]:
    """(documents, what they are, the command, documents of the refresh interval's run) of ``--corpus bench``, the
    default."""
    size = DOCS if args.docs is None else args.docs
    refresh = REFRESH_DOCS if args.refresh_docs is None else args.refresh_docs
    docs = read_corpus(corpus_path(size), size)
    chars = sum(len(d.text) for d in docs)
    what = (
        f"{len(docs):,} documents of the bench corpus (generator {GENERATOR}, {chars / len(docs):.0f} characters "
        "on average)"
    )
    return docs, what, f"python -m bench.ingest --docs {size} --refresh-docs {refresh} --rounds {args.rounds}", refresh


def _fingerprint_rates() -> list[str]:
    """The fingerprinting rate section: characters per second, one thread, over the People's Daily articles."""
    texts = [a.text for a in load_peoples_daily()]
    text_chars = sum(len(t) for t in texts)
    lcut = text_chars / _median(lambda: [jieba.lcut(t) for t in texts])
    fp = Fingerprinter.default()
    python_fp = text_chars / _median(lambda: fp.fingerprint_many([(t, None) for t in texts]))
    java = _java_rates(texts)
    return [
        "",
        f"## Fingerprinting rate, one thread, {len(texts):,} People's Daily articles ({text_chars:,} characters)",
        "",
        "Median of 3 passes after a warm-up pass.",
        "",
        "| what | characters/s | × `jieba.lcut` |",
        "|---|---|---|",
        f"| `jieba.lcut` (Python) | {lcut:,.0f} | 1.00 |",
        f"| neardup `fingerprint_many` (Python) | {python_fp:,.0f} | {python_fp / lcut:.2f} |",
        f"| Java jieba port, cut alone | {java['cut']:,.0f} | {java['cut'] / lcut:.2f} |",
        f"| Java pipeline, all fingerprint fields | {java['fields']:,.0f} | {java['fields'] / lcut:.2f} |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--corpus", choices=sorted(OUT), default="bench", help="the bench corpus, or the People's Daily reprint set"
    )
    parser.add_argument("--docs", type=int, default=None, help=f"documents of the bench corpus (default {DOCS:,})")
    parser.add_argument("--port", type=int, default=9357)
    parser.add_argument(
        "--refresh-docs", type=int, default=None, help=f"0: no refresh comparison (default {REFRESH_DOCS:,})"
    )
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds of every way; the median is reported")
    parser.add_argument(
        "--warm-up", type=int, default=None, help="documents each way writes first, not timed (default: all of them)"
    )
    args = parser.parse_args()
    news = args.corpus == "news"
    docs, corpus, command, refresh_size = _news(args, parser) if news else _bench(args)
    warm_up = len(docs) if args.warm_up is None else args.warm_up
    records = Fingerprinter.default().fingerprint_many([(d.text, None) for d in docs])

    with elasticsearch(args.port, "2g") as (url, label):
        client = Elasticsearch(url, request_timeout=600)
        install_pipeline(client)
        install_pipeline(client, flag=True)
        client.ingest.put_pipeline(id=EMPTY_PIPELINE, processors=[])
        # not timed: every way once over the first documents, so no timed round meets a cold node
        for way in WAYS:
            way.run(client, url, docs[:warm_up], records[:warm_up])
        seconds: dict[str, list[float]] = {way.key: [] for way in WAYS}
        segments: dict[str, list[float]] = {way.key: [] for way in WAYS}
        rss: dict[str, int] = {}
        for _ in range(args.rounds):
            for way in WAYS:
                client.indices.delete(index=way.index, ignore_unavailable=True)  # not sampled while a server starts
                (took, peak), mean, _most = segments_during(
                    client, way.index, functools.partial(way.run, client, url, docs, records)
                )
                seconds[way.key].append(took)
                segments[way.key].append(mean)
                rss[way.key] = max(rss.get(way.key, 0), peak)
        notes = _notes(client, docs, rss)
        for way in WAYS:
            client.indices.delete(index=way.index, ignore_unavailable=True)
        refresh_docs = read_corpus(corpus_path(refresh_size), refresh_size) if refresh_size else []
        refresh_rows = _refresh_rows(client, url, refresh_docs, docs) if refresh_docs else []

    lines = [
        "# Ingest: plain bulk, the Java processor, the Python service",
        "",
        f"Machine: {describe()}; Elasticsearch: {label}.",
        f"Command: `{command}{'' if args.warm_up is None else f' --warm-up {warm_up}'}`. "
        f"{corpus}, batches of {BATCH}, {THREADS} client threads, a fresh index with the neardup mapping per row "
        "(Elasticsearch's default refresh, every second), refresh at the end counted. All rows in this one run: "
        "first every way once over "
        + (
            "all the documents, not timed (the node still compiles code after a short warm-up)"
            if warm_up >= len(docs)
            else f"the first {warm_up:,} documents, not timed (so no row meets a cold node; the node still compiles "
            "code after it)"
        )
        + f", then {args.rounds} rounds of every way in the order of the table; the median round is reported, its "
        "ratios, the range of the rounds, and the mean number of segments the index had "
        "(sampled every second). Notes read what the last round wrote.",
        "",
        "| how | seconds (median) | documents/s (median) | range of rounds | × plain bulk | × the service "
        "| segments | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    median = {key: statistics.median(times) for key, times in seconds.items()}
    for way in WAYS:
        rates = sorted(len(docs) / t for t in seconds[way.key])
        lines.append(
            f"| {way.name} | {median[way.key]:.1f} | {len(docs) / median[way.key]:,.0f} "
            f"| {rates[0]:,.0f}–{rates[-1]:,.0f} | {median['plain'] / median[way.key]:.2f} "
            f"| {median['service'] / median[way.key]:.1f} | {statistics.mean(segments[way.key]):.1f} "
            f"| {notes.get(way.key, '')} |"
        )
    if refresh_rows:
        lines += [
            "",
            "## The refresh interval: speed against the blind spot between processes",
            "",
            "Every document's candidate search visits every segment, and every refresh writes one; what a refresh "
            "has not made searchable yet only a window of documents written moments ago covers (the service's "
            "`NEARDUP_RECENT_SECONDS`, the processor's `window_seconds`, each set above the interval). The flag "
            "pipeline here runs on one node, so one window sees every write; the service's 2 workers share theirs "
            "through the recent-writes journal, so each misses only what the other has in flight. Segments "
            "(mean / most) sampled every second during the pipeline's run; P/R of the clusters against the planted "
            "groups.",
            "",
            "| what | `refresh_interval` | window | documents/s | P/R | segments |",
            "|---|---|---|---|---|---|",
            *refresh_rows,
        ]
    if not news:  # the same articles whatever the corpus: once, in ingest.md
        lines += _fingerprint_rates()
    write_results(OUT[args.corpus], lines)


if __name__ == "__main__":
    main()

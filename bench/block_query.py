"""The candidate search as the service and the processor send it: the block match and the second check, three ways.

Every lookup, every document the service flags and every document the flagging processor flags runs one candidate
search: the documents sharing at least one of its 64 (seed, block) tokens, kept when they pass the second check on
the shards. Three ways, the same documents found:

1. one ``terms`` query per block field, the ``verify`` script as a filter (what neardup sent before);
2. the plugin's ``neardup_blocks`` query, the ``verify`` script as a filter;
3. the plugin's ``neardup_blocks`` query with the check inside it (``verify``), what is sent now
   (:func:`neardup.es.lookup.candidate_search` with ``native``).

Each is sent as :func:`neardup.es.lookup.search_candidates` sends it (``msearch`` of 500, a cap of 500, doc values) to
one index of real text as it grows; the bench checks that every way returns the same documents for every query.

Documents: :mod:`bench.corpus` (generator 2), fingerprinted by the cluster's ``neardup`` processor while they are
bulk-loaded; queries: the 1,000 corpus documents after the largest size (a share of them reprint-style variants of
indexed documents), fingerprinted the same way. Between the sizes the index is not force-merged: it keeps the
segments neardup's index template leaves after the load's merges finish. Rounds: one untimed, then ``--rounds``,
the ways taking turns (their order reversed every other round).

Run: ``python -m bench.block_query`` (embedded Elasticsearch, or ``NEARDUP_ES_URL``) → bench/results/block_query.md
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from elasticsearch import Elasticsearch

from bench.corpus import Doc, corpus_path, read_corpus
from bench.harness import bulk_load, elasticsearch, wait_for_merges
from bench.machine import RESULTS, describe, out_flag, out_option, write_results
from neardup.es.client import setup_index
from neardup.es.lookup import candidate_query, candidate_search, verify_params
from neardup.es.pipeline import PROCESSOR, fingerprint_in_pipeline, install_pipeline, pipeline_id
from neardup.ingest.fingerprint import Fingerprinter, Record
from neardup.ingest.verify import VerifyConfig

#: the results file in bench/results unless --out names another
OUT = "block_query.md"
INDEX = "bench-block-query"
QUERIES = 1_000
MAX_CANDIDATES = 500
#: searches per ``msearch``, as the service sends a batch
BATCH = 500

#: a candidate search body of a record
Body = Callable[[Record], dict[str, Any]]


def _now(record: Record) -> dict[str, Any]:
    """The body the service and the processor send now: the plugin's block query, the check inside it."""
    check = verify_params(record, VerifyConfig())
    return candidate_search(record, MAX_CANDIDATES, [], 1, check, doc_values=True, native=True)


def _scripted(block_match: dict[str, Any], record: Record) -> dict[str, Any]:
    """The same body with ``block_match`` as the block match and the check as the ``verify`` script filter."""
    body = candidate_search(record, MAX_CANDIDATES, [], 1, None, doc_values=True)
    script = {"lang": "neardup", "source": "verify", "params": verify_params(record, VerifyConfig())}
    body["query"] = {"bool": {"must": [block_match], "filter": [{"script": {"script": script}}]}}
    return body


def _terms(record: Record) -> dict[str, Any]:
    """One ``terms`` query per block field and the script (what they sent before the plugin's query)."""
    return _scripted(candidate_query(record, record.block_tokens(), record.version, 1, ranked=False), record)


def _blocks_then_script(record: Record) -> dict[str, Any]:
    """The plugin's block query and the check as a separate script filter."""
    return _scripted(candidate_query(record, record.block_tokens(), record.version, 1, native=True), record)


WAYS: dict[str, Body] = {
    "`terms` per block field, `verify` script filter (before)": _terms,
    "`neardup_blocks`, `verify` script filter": _blocks_then_script,
    "`neardup_blocks` with its `verify` inside (now)": _now,
}


def _round(client: Elasticsearch, records: Sequence[Record], body: Body) -> tuple[float, list[list[str]]]:
    """Milliseconds per query of the searches sent in ``msearch`` batches, and each query's hits."""
    searches = [[{"index": INDEX}, body(r)] for r in records]
    hits: list[list[str]] = []
    start = time.perf_counter()
    for at in range(0, len(searches), BATCH):
        resp = client.msearch(searches=[line for pair in searches[at : at + BATCH] for line in pair])
        for item in resp["responses"]:
            if "error" in item:
                raise SystemExit(f"a candidate search failed: {item['error']}")
            hits.append([h["_id"] for h in item["hits"]["hits"]])
    return 1000 * (time.perf_counter() - start) / len(records), hits


def _measure(client: Elasticsearch, records: Sequence[Record], rounds: int) -> dict[str, tuple[list[float], float]]:
    """Per way: ms per query of each kept round, and the mean hits per query; every way must find the same."""
    times: dict[str, list[float]] = {name: [] for name in WAYS}
    found: dict[str, list[list[str]]] = {}
    for r in range(rounds + 1):  # round 0 is not kept (caches, compilation)
        order = list(WAYS.items()) if r % 2 == 0 else list(reversed(WAYS.items()))
        for name, body in order:
            ms, found[name] = _round(client, records, body)
            if r:
                times[name].append(ms)
    first, *others = found.values()
    for other in others:
        if [sorted(h) for h in other] != [sorted(h) for h in first]:
            raise SystemExit("the ways returned different documents")
    return {name: (times[name], sum(map(len, found[name])) / len(records)) for name in WAYS}


def _load(client: Elasticsearch, docs: Sequence[Doc]) -> float:
    return bulk_load(
        client,
        INDEX,
        ({"_index": INDEX, "_id": d.id, "text": d.text} for d in docs),
        pipeline=pipeline_id(),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,300000", help="index sizes, ascending, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--port", type=int, default=9252)
    parser.add_argument("--heap", default="4g")
    out_option(parser, OUT)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    corpus = read_corpus(corpus_path(sizes[-1] + QUERIES))
    lines = [
        "# The candidate search: `terms` queries and the `verify` script against the plugin's `neardup_blocks` query",
        "",
        f"Machine: {describe()}",
        "",
    ]
    with elasticsearch(args.port, args.heap) as (url, label):
        client = Elasticsearch(url, request_timeout=600)
        client.indices.delete(index=INDEX, ignore_unavailable=True)
        install_pipeline(client)
        setup_index(client, INDEX)
        version = Fingerprinter.default().version
        queries = corpus[sizes[-1] :]
        records = [
            rec
            for at in range(0, len(queries), BATCH)
            for rec in fingerprint_in_pipeline(client, [(d.text, None) for d in queries[at : at + BATCH]], version)
            if rec.status == "ok"  # the others are matched by exact hash, with no block match to compare
        ]
        lines += [
            f"Elasticsearch: {label}, {args.heap} heap, 1 shard, the `{PROCESSOR}` processor fingerprinting the loads. "
            f"Command: `python -m bench.block_query --sizes {args.sizes} --rounds {args.rounds}"
            f"{out_flag(args.out, OUT)}`",
            "",
            f"{len(records):,} candidate searches per round, in `msearch` requests of {BATCH}, each with the `verify` "
            f"script and a cap of {MAX_CANDIDATES}, reading doc values; client wall time per search, the median of "
            f"{args.rounds} rounds.",
            "",
            "| documents | segments | block match and check | ms per search, median (rounds) | matches per search |",
            "|---|---|---|---|---|",
        ]
        ratios = []
        loaded = 0
        for n in sizes:
            seconds = _load(client, corpus[loaded:n])
            loaded = n
            waited = wait_for_merges(client)
            segments = len(client.cat.segments(index=INDEX, format="json").body)
            print(f"{n:,} documents loaded in {seconds:.0f}s, merges {waited:.0f}s, {segments} segments", flush=True)
            measured = _measure(client, records, args.rounds)
            for name, (rounds, per_query) in measured.items():
                spread = ", ".join(f"{r:.3f}" for r in rounds)
                lines.append(
                    f"| {n:,} | {segments} | {name} | {statistics.median(rounds):.3f} ({spread}) | {per_query:.2f} |"
                )
                print(lines[-1], flush=True)
            before = statistics.median(measured[next(iter(WAYS))][0])
            shares = ", ".join(f"{statistics.median(t) / before:.2f}×" for t, _ in list(measured.values())[1:])
            ratios.append(f"- {n:,} documents: the second and third ways take {shares} the time of the first")
        client.indices.delete(index=INDEX)
    lines += ["", "Every way returned the same documents for every query at every size (checked).", "", *ratios]
    write_results(RESULTS / args.out, lines)


if __name__ == "__main__":
    main()

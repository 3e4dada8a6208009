"""What the block match costs Elasticsearch, by how the blocks are indexed: the shipped keyword tokens against
one ``integer`` points field holding the same 64 (block, seed, value) keys.

Every lookup and every flagged document runs the block match: the documents sharing any of its 64 (seed, block)
16-bit values. Shipped, those are ``"seed:hex"`` keyword tokens in ``neardup.b0..b3`` (16 per field), and the
match is one ``terms`` query per field (``candidate_query(..., ranked=False)``); Lucene seeks each token in each
segment's term dictionary. The peer is the same 64 keys as integers, ``block << 20 | seed << 16 | value``, in one
``integer`` field without doc values, matched by one ``terms`` query (a points query: one pass over each
segment's BKD tree with the sorted keys). Both match the same number of documents for every query (checked).

For each index size: the time to bulk-index the block fields alone (request bodies serialised beforehand, two
client threads), the index size, and the cost of the match (``msearch`` of 1,000 queries, ``size`` 0 and every
hit counted, Elasticsearch's request cache off, which would otherwise answer a repeated ``size`` 0 search from
memory; the median of 3 rounds, the encodings taking turns), both indices force-merged to the same number of
segments, after an untimed warm-up of both at 50,000 documents. Fingerprints are uniformly random (16 per
document), so every candidate is a chance match: about 64 / 65,536 of the index per query; real text has
biased bits and more.

Only the block fields are indexed here (with the version keyword the shipped query filters on), so the indexing
figures are what the blocks alone cost, not a document's whole write.

Run: ``python -m bench.block_encoding`` (embedded Elasticsearch, or ``NEARDUP_ES_URL``)
→ bench/results/block_encoding.md
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from elasticsearch import Elasticsearch

from bench.harness import bare_record, elasticsearch, send_bodies
from bench.machine import RESULTS, describe, write_results
from neardup.es.lookup import candidate_query
from neardup.mappings import schema

OUT = RESULTS / "block_encoding.md"
SEEDS = 16
VERSION = "bench"
QUERIES = 1_000
ROUNDS = 3
CHUNK = 2_000
#: documents per encoding indexed and queried, untimed, before anything is measured
WARM_UP = 50_000
#: the integer field of the peer encoding
KEYS = "keys"
#: a document's ``_source``, or its candidate query, from its fingerprints
Build = Callable[[Sequence[int]], dict[str, Any]]


def integer_keys(fingerprints: Sequence[int]) -> list[int]:
    """The 64 (block, seed, value) keys of ``fingerprints`` as integers: block position in bits 20-21, seed in
    16-19, the block's 16-bit value below.

    >>> [hex(k) for k in integer_keys([0x0001_0002_0003_0004])]
    ['0x1', '0x100002', '0x200003', '0x300004']
    """
    return [
        (block << 20) | (seed << 16) | ((fp >> (16 * (3 - block))) & 0xFFFF)
        for seed, fp in enumerate(fingerprints)
        for block in range(4)
    ]


def _keyword_source(fps: Sequence[int]) -> dict[str, Any]:
    fields = dict(zip(schema.BLOCKS, bare_record(fps, VERSION).block_tokens(), strict=True))
    return {schema.ROOT: fields | {schema.VERSION: VERSION}}


def _integer_source(fps: Sequence[int]) -> dict[str, Any]:
    return {schema.ROOT: {schema.VERSION: VERSION}, KEYS: integer_keys(fps)}


def _keyword_query(fps: Sequence[int]) -> dict[str, Any]:
    record = bare_record(fps, VERSION)
    return candidate_query(record, record.block_tokens(), VERSION, ranked=False)


def _integer_query(fps: Sequence[int]) -> dict[str, Any]:
    version = {"term": {schema.path(schema.VERSION): VERSION}}
    return {"bool": {"filter": [version, {"terms": {KEYS: integer_keys(fps)}}]}}


#: name → (mapping properties, document source, query)
ENCODINGS: dict[str, tuple[dict[str, Any], Build, Build]] = {
    "keyword tokens b0..b3 (shipped)": (
        {
            schema.ROOT: {
                "properties": {b: {"type": "keyword", "doc_values": False} for b in schema.BLOCKS}
                | {schema.VERSION: {"type": "keyword"}}
            }
        },
        _keyword_source,
        _keyword_query,
    ),
    "integer points, one field": (
        {
            schema.ROOT: {"properties": {schema.VERSION: {"type": "keyword"}}},
            KEYS: {"type": "integer", "doc_values": False},
        },
        _integer_source,
        _integer_query,
    ),
}


def _fingerprints(n: int, seed: int) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [[int(x) for x in row] for row in rng.integers(0, 2**64, size=(n, SEEDS), dtype=np.uint64)]


def _bodies(index: str, docs: Sequence[Sequence[int]], source: Build) -> list[bytes]:
    out = []
    for start in range(0, len(docs), CHUNK):
        lines = []
        for k in range(start, min(start + CHUNK, len(docs))):
            lines.append(json.dumps({"index": {"_index": index, "_id": str(k)}}))
            lines.append(json.dumps(source(docs[k])))
        out.append(("\n".join(lines) + "\n").encode())
    return out


def _index(client: Elasticsearch, index: str, mapping: dict[str, Any], bodies: list[bytes]) -> float:
    """Seconds to write ``bodies`` with two client threads (refresh off while writing, as a bulk load)."""
    client.indices.delete(index=index, ignore_unavailable=True)
    settings = {"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": "-1"}
    client.indices.create(index=index, mappings={"dynamic": "strict", "properties": mapping}, settings=settings)
    client.cluster.health(index=index, wait_for_status="green")

    start = time.perf_counter()
    send_bodies(client, bodies, index)
    client.indices.refresh(index=index)
    return time.perf_counter() - start


def _match_ms(client: Elasticsearch, index: str, queries: list[dict[str, Any]]) -> tuple[float, list[int]]:
    """Milliseconds per query of one ``msearch`` round (every hit counted, request cache off), and the counts."""
    searches: list[dict[str, Any]] = []
    for q in queries:
        searches += [{"index": index, "request_cache": False}, {"query": q, "size": 0, "track_total_hits": True}]
    start = time.perf_counter()
    counts: list[int] = []
    for at in range(0, len(searches), 500):
        resp = client.msearch(searches=searches[at : at + 500])
        counts += [r["hits"]["total"]["value"] for r in resp["responses"]]
    return 1000 * (time.perf_counter() - start) / len(queries), counts


def _size_mib(client: Elasticsearch, index: str) -> float:
    stats = client.indices.stats(index=index, metric="store")
    return float(stats["indices"][index]["primaries"]["store"]["size_in_bytes"]) / 2**20


#: per encoding: seconds to index, MiB, ms per query of each kept round, candidates per query
Measured = tuple[float, float, list[float], float]


def _compare(client: Elasticsearch, n: int, queries: list[list[int]], segments: int) -> dict[str, Measured]:
    """Both encodings at ``n`` documents. They take turns in every round of queries, so a drift of the
    machine's speed reaches both."""
    docs = _fingerprints(n, seed=11)
    indexed: dict[str, tuple[str, float, list[dict[str, Any]]]] = {}
    for k, (name, (mapping, source, query)) in enumerate(ENCODINGS.items()):
        index = f"bench-blocks-{k}"
        seconds = _index(client, index, mapping, _bodies(index, docs, source))
        client.indices.forcemerge(index=index, max_num_segments=segments)
        indexed[name] = (index, seconds, [query(q) for q in queries])
    rounds: dict[str, list[float]] = {name: [] for name in indexed}
    counts: dict[str, list[int]] = {}
    for _ in range(ROUNDS + 1):  # the first round warms each index's caches and is not kept
        for name, (index, _, bodies) in indexed.items():
            ms, counts[name] = _match_ms(client, index, bodies)
            rounds[name].append(ms)
    first, *others = counts.values()
    if any(c != first for c in others):
        raise SystemExit(f"the encodings matched different counts of documents at {n:,}")
    out = {}
    for name, (index, seconds, _) in indexed.items():
        out[name] = (seconds, _size_mib(client, index), rounds[name][1:], sum(counts[name]) / len(queries))
        client.indices.delete(index=index)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,300000,1000000", help="index sizes, comma-separated")
    parser.add_argument("--segments", type=int, default=10, help="force-merge every index to this many segments")
    parser.add_argument("--port", type=int, default=9251)
    parser.add_argument("--heap", default="4g")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    queries = _fingerprints(QUERIES, seed=7)
    lines = [
        "# The block match by how the blocks are indexed: keyword tokens against integer points",
        "",
        f"Machine: {describe()}",
        "",
    ]
    ratios = []
    with elasticsearch(args.port, args.heap) as (url, label):
        client = Elasticsearch(url, request_timeout=3600)
        lines += [
            f"Elasticsearch: {label}, {args.heap} heap, 1 shard, force-merged to {args.segments} segments before the "
            f"queries. Command: `python -m bench.block_encoding --sizes {args.sizes} --segments {args.segments}`",
            "",
            "| documents | blocks indexed as | index docs/s (blocks only) | size MiB | match ms/query, median "
            "(rounds) | candidates/query |",
            "|---|---|---|---|---|---|",
        ]
        _compare(client, WARM_UP, queries, args.segments)  # untimed: the node's code compiled, as on a running node
        for n in sizes:
            found = _compare(client, n, queries, args.segments)
            for name, (seconds, size, rounds, per_query) in found.items():
                spread = ", ".join(f"{r:.3f}" for r in rounds)
                lines.append(
                    f"| {n:,} | {name} | {n / seconds:,.0f} | {size:,.1f} | "
                    f"{statistics.median(rounds):.3f} ({spread}) | {per_query:.1f} |"
                )
                print(lines[-1], flush=True)
            (kw_seconds, _, kw_rounds, _), (pt_seconds, _, pt_rounds, _) = found.values()
            match = statistics.median(pt_rounds) / statistics.median(kw_rounds)
            ratios.append(
                f"- {n:,} documents: the points' match takes {match:.2f}× the tokens' time, "
                f"their indexing {pt_seconds / kw_seconds:.2f}×"
            )
    lines += [
        "",
        "Both encodings matched the same number of documents for every query at every size (checked).",
        "",
        *ratios,
    ]
    write_results(OUT, lines)


if __name__ == "__main__":
    main()

"""Lookup latency on real text: 100,000 indexed short documents (Tang poems from both editions of the
chinese-poetry package, so the index holds real near-duplicates, plus People's Daily paragraphs),
1,000 queries (500 reprint-style variants of indexed documents, 500 unindexed texts), same run:

- **service lookup without the plugin**: the block query, then :func:`neardup.ingest.verify.verify` in Python
  (sketch + Hamming) — what ``GET /documents/{id}/duplicates`` and ingest do on a cluster without neardup's plugin
  (with it, the check runs inside Elasticsearch: ``scale.md``);
- **blocks + script filter**: the block query with a Hamming <= 3 script filter inside Elasticsearch;
- **brute-force script**: the Hamming <= 3 script over every document;
- **numpy brute force**: Hamming <= 3 over the main fingerprints in this process.

Run: ``python -m bench.lookup_real`` → bench/results/lookup_latency_real.md
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence

import numpy as np
from elasticsearch import Elasticsearch

from bench.harness import bulk_load, elasticsearch, time_methods
from bench.machine import RESULTS, describe, no_options, write_results
from neardup.config import Settings
from neardup.es.client import setup_index
from neardup.es.lookup import candidate_query, find_duplicates, hamming_filter, script_language
from neardup.evaluation.corpus import load_peoples_daily, load_tang_editions
from neardup.evaluation.variants import make_variant
from neardup.ingest.bits import to_signed
from neardup.ingest.fingerprint import Fingerprinter, Record
from neardup.ingest.pool import FingerprintPool
from neardup.ingest.verify import VerifyConfig
from neardup.mappings import schema

OUT = RESULTS / "lookup_latency_real.md"
N = 100_000
QUERIES = 1_000
INDEX = "bench-lookup-real"


def texts() -> tuple[list[str], list[str], int]:
    """(the N indexed texts: People's Daily paragraphs of 40+ characters, then Tang poems of both editions; the
    poems left over, never indexed; how many of the indexed are paragraphs), the same every run."""
    home = Settings.from_env().home
    first, second = load_tang_editions(home / "npm")
    paragraphs = [p for a in load_peoples_daily() for p in a.paragraphs if len(p) >= 40]
    poems = [p.text for p in first] + [p.text for p in second]
    random.Random(3).shuffle(poems)
    indexed = paragraphs + poems[: N - len(paragraphs)]
    return indexed, poems[N - len(paragraphs) :], len(paragraphs)


def _load(client: Elasticsearch, records: list[Record]) -> None:
    client.indices.delete(index=INDEX, ignore_unavailable=True)
    setup_index(client, INDEX)
    actions = (
        {"_index": INDEX, "_id": str(k), schema.ROOT: schema.record_fields(r) | {schema.CLUSTER: str(k)}}
        for k, r in enumerate(records)
    )
    bulk_load(client, INDEX, actions, threads=1, restore="1s")
    client.options(request_timeout=600).indices.forcemerge(index=INDEX, max_num_segments=1)


def draw(indexed: Sequence[str], spare: Sequence[str]) -> tuple[list[int], list[str], list[str]]:
    """The queries: (the indexed documents varied, their variants, the unindexed texts), the same every run."""
    rng = random.Random(7)
    sources = rng.sample(range(len(indexed)), QUERIES // 2)
    variants = ["\n".join(make_variant([indexed[s]], rng)[0]) for s in sources]
    others = rng.sample(list(spare), QUERIES - len(sources))
    return sources, variants, others


def main() -> None:
    no_options(__doc__)
    indexed, spare, n_paragraphs = texts()
    sources, variants, others = draw(indexed, spare)
    t0 = time.perf_counter()
    with FingerprintPool(2) as pool:
        records = pool.fingerprint([(t, None) for t in indexed])
        queries = pool.fingerprint([(t, None) for t in variants + others])
    fp_s = time.perf_counter() - t0
    version = Fingerprinter.default().version

    with elasticsearch(port=9279, heap="2g") as (url, es_label):
        client = Elasticsearch(url, request_timeout=120)
        try:
            t0 = time.perf_counter()
            _load(client, records)
            load_s = time.perf_counter() - t0
            rows = time_methods(_methods(client, records, version), queries, sources + [-1] * len(others))
        finally:
            client.indices.delete(index=INDEX, ignore_unavailable=True)
            client.close()
    short = sum(r.status != "ok" for r in records)
    lines = [
        "# Lookup latency on real text: one document against 100,000 indexed documents",
        "",
        f"Machine: {describe()}",
        f"Elasticsearch: {es_label}, 1 shard, force-merged.",
        f"Index: {N} real documents ({n_paragraphs} People's Daily paragraphs of 40+ characters, the rest "
        "Tang poems from both editions, which hold many true near-duplicates of each other); "
        f"{short} too short for a fingerprint. Fingerprinting (2 processes) {fp_s:.0f}s, loading {load_s:.0f}s.",
        f"Queries: {len(sources)} reprint-style variants of indexed documents (1-3 of: source lines, character "
        f"edits, punctuation width, sentence swaps, ...), {len(others)} unindexed poems. Client wall time per query.",
        "Command: `python -m bench.lookup_real`",
        "",
        "| method | p50 ms | p99 ms | candidates / query | variants found (of 500) |",
        "|---|---|---|---|---|",
    ]
    for name, p50, p99, cand, hits in rows:
        shown = "block query, checked in ES" if cand is None else f"{cand:.1f}"
        lines.append(f"| {name} | {p50:.2f} | {p99:.2f} | {shown} | {hits} |")
    write_results(OUT, lines)


def _methods(
    client: Elasticsearch, records: list[Record], version: str
) -> dict[str, Callable[[Record], tuple[set[int], int]]]:
    lang = script_language(client)
    main_fps = np.array([r.fingerprint for r in records], dtype=np.uint64)
    ok = np.array([r.status == "ok" for r in records])

    def service(q: Record) -> tuple[set[int], int]:
        found, n = find_duplicates(client, INDEX, q, VerifyConfig(), 500)
        return {int(f.doc.id) for f in found}, n

    def blocks_script(q: Record) -> tuple[set[int], int]:
        if q.status != "ok":
            return set(), -1
        query = candidate_query(q, q.block_tokens(), version)
        query["bool"]["filter"].append(hamming_filter([to_signed(q.fingerprint)], 3, lang))
        hits = client.search(index=INDEX, query=query, size=500, source=False)["hits"]["hits"]
        return {int(h["_id"]) for h in hits}, -1

    def brute_script(q: Record) -> tuple[set[int], int]:
        if q.status != "ok":
            return set(), N
        hits = client.search(
            index=INDEX, query=hamming_filter([to_signed(q.fingerprint)], 3, lang), size=500, source=False
        )["hits"]["hits"]
        return {int(h["_id"]) for h in hits}, N

    def brute_numpy(q: Record) -> tuple[set[int], int]:
        if q.status != "ok":
            return set(), N
        close = np.flatnonzero((np.bitwise_count(main_fps ^ np.uint64(q.fingerprint)) <= 3) & ok)
        return set(close.tolist()), N

    return {
        "service lookup without the plugin: blocks + verify in Python (sketch + Hamming)": service,
        f"blocks + Hamming<=3 script filter in ES ({lang})": blocks_script,
        f"brute-force Hamming<=3 script over all docs ({lang})": brute_script,
        "numpy brute force Hamming<=3 (in process, no ES)": brute_numpy,
    }


if __name__ == "__main__":
    main()

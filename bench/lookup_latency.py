"""Lookup latency for one document against 100,000 indexed documents, 1,000 queries, same run:

- **blocks + Python check** (what the service does on a cluster without neardup's plugin): ``bool.should`` terms
  on b0..b3, candidates returned, Hamming checked in Python;
- **blocks + script filter**: the same block query with the Hamming check as a script filter inside
  Elasticsearch (Painless on a full cluster, the native ``neardup`` script on the embedded node);
- **brute force script**: the script filter over every document (no blocks) — the ES-native peer;
- **numpy brute force**: XOR + popcount over all fingerprints in this process (no Elasticsearch).

The index holds synthetic records: 16 uniformly random 64-bit fingerprints per document (the service's
amplification), so candidates per query are those of uniform bits; real text fingerprints have biased
bits and somewhat more candidates. Half the queries are planted near-duplicates (0-3 bits flipped in
every seed's fingerprint), half random.

Run: ``python -m bench.lookup_latency`` (embedded Elasticsearch, or ``NEARDUP_ES_URL``)
→ bench/results/lookup_latency.md
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from elasticsearch import Elasticsearch

from bench.harness import bare_record, bulk_load, elasticsearch, time_methods
from bench.machine import RESULTS, describe, no_options, write_results
from neardup.es.client import setup_index
from neardup.es.lookup import candidate_query, hamming_filter, script_language
from neardup.ingest.bits import block_fields, to_signed
from neardup.mappings import schema

OUT = RESULTS / "lookup_latency.md"
N = 100_000
QUERIES = 1_000
SEEDS = 16
INDEX = "bench-lookup"
VERSION = "bench"


def _load(client: Elasticsearch, fps: np.ndarray) -> None:
    client.indices.delete(index=INDEX, ignore_unavailable=True)
    setup_index(client, INDEX)

    def actions() -> Any:
        for k in range(N):
            row = [int(x) for x in fps[k]]
            b = block_fields(row)
            yield {
                "_index": INDEX,
                "_id": str(k),
                schema.ROOT: {
                    schema.FINGERPRINT: [to_signed(x) for x in row],
                    **dict(zip(schema.BLOCKS, b, strict=True)),
                    schema.STATUS: "ok",
                    schema.VERSION: VERSION,
                    schema.CLUSTER: str(k),
                },
            }

    bulk_load(client, INDEX, actions(), threads=1, restore="1s")
    client.options(request_timeout=600).indices.forcemerge(index=INDEX, max_num_segments=1)


def main() -> None:
    no_options(__doc__)
    rng = np.random.default_rng(1)
    fps = rng.integers(0, 2**64 - 1, size=(N, SEEDS), dtype=np.uint64, endpoint=True)
    planted_src = rng.choice(N, size=QUERIES // 2, replace=False)
    queries = []
    for src in planted_src:
        q = fps[src].copy()
        for s in range(SEEDS):
            for f in rng.choice(64, size=int(rng.integers(0, 4)), replace=False):
                q[s] ^= np.uint64(1) << np.uint64(int(f))
        queries.append((q, int(src)))
    for _ in range(QUERIES - len(planted_src)):
        queries.append((rng.integers(0, 2**64 - 1, size=SEEDS, dtype=np.uint64, endpoint=True), -1))

    with elasticsearch(port=9277, heap="2g") as (url, es_label):
        client = Elasticsearch(url, request_timeout=120)
        try:
            t0 = time.perf_counter()
            _load(client, fps)
            load_s = time.perf_counter() - t0
            lang = script_language(client)
            main_fps = fps[:, 0]

            def blocks_python(q: np.ndarray) -> tuple[set[int], int]:
                record = bare_record([int(x) for x in q], VERSION)
                query = candidate_query(record, record.block_tokens(), VERSION)
                wanted = [schema.path(schema.FINGERPRINT)]
                resp = client.search(index=INDEX, query=query, size=500, source_includes=wanted)
                q0 = int(q[0])
                found = set()
                for h in resp["hits"]["hits"]:
                    v = h["_source"][schema.ROOT][schema.FINGERPRINT][0] & (2**64 - 1)
                    if (v ^ q0).bit_count() <= 3:
                        found.add(int(h["_id"]))
                return found, int(resp["hits"]["total"]["value"])

            def blocks_script(q: np.ndarray) -> tuple[set[int], int]:
                record = bare_record([int(x) for x in q], VERSION)
                query = candidate_query(record, record.block_tokens(), VERSION)
                query["bool"]["filter"].append(hamming_filter([to_signed(int(q[0]))], 3, lang))
                hits = client.search(index=INDEX, query=query, size=200, source=False)["hits"]["hits"]
                return {int(h["_id"]) for h in hits}, -1

            def brute_script(q: np.ndarray) -> tuple[set[int], int]:
                query = hamming_filter([to_signed(int(q[0]))], 3, lang)
                hits = client.search(index=INDEX, query=query, size=200, source=False)["hits"]["hits"]
                return {int(h["_id"]) for h in hits}, N

            def brute_numpy(q: np.ndarray) -> tuple[set[int], int]:
                close = np.flatnonzero(np.bitwise_count(main_fps ^ q[0]) <= 3)
                return set(close.tolist()), N

            methods: dict[str, Callable[[np.ndarray], tuple[set[int], int]]] = {
                "blocks + Python check (the service without the plugin)": blocks_python,
                f"blocks + script filter in ES ({lang})": blocks_script,
                f"brute-force script over all docs ({lang})": brute_script,
                "numpy brute force (in process, no ES)": brute_numpy,
            }
            rows = time_methods(methods, [q for q, _ in queries], [src for _, src in queries])
        finally:
            client.indices.delete(index=INDEX, ignore_unavailable=True)
            client.close()
    base = rows[2][1]
    lines = [
        "# Lookup latency: one document against 100,000 indexed documents",
        "",
        f"Machine: {describe()}",
        f"Elasticsearch: {es_label}, 1 shard, force-merged; loading {N} docs took {load_s:.1f}s.",
        f"{QUERIES} queries ({len(planted_src)} planted near-duplicates within 3 bits, the rest random); "
        "latency is client wall time per query (one HTTP request each).",
        "Command: `python -m bench.lookup_latency`",
        "",
        "| method | p50 ms | p99 ms | candidates / query | planted found | p50 vs brute-force script |",
        "|---|---|---|---|---|---|",
    ]
    for name, p50, p99, cand, hits in rows:
        shown = "same block query, checked inside ES" if cand is None else f"{cand:.1f}"
        lines.append(f"| {name} | {p50:.2f} | {p99:.2f} | {shown} | {hits}/{len(planted_src)} | {base / p50:.1f}× |")
    write_results(OUT, lines)


if __name__ == "__main__":
    main()

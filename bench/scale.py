"""neardup at a million documents, next to what Elasticsearch offers natively, in one run.

One index grows through 100k, 300k and 1M documents of the :mod:`bench.corpus` corpus (real Chinese
sentences and poem lines, a quarter of the documents reprint-style variants of earlier ones). At every
size the same 1,000 queries (500 variants of indexed documents, not themselves indexed, and 500 new
documents) are run by:

- **neardup lookup** (:func:`neardup.es.lookup.find_duplicates`, what the service runs after
  fingerprinting): the block query with a candidate needing 1 or 2 shared (seed, block) tokens; the
  second check either inside Elasticsearch (the native ``verify`` script, only matches come back) or in
  Python over every candidate (read from doc values, verified all at once);
- **the service end to end**, through a real ``neardup serve``: ``POST /v1/indices/{index}/duplicates`` of the 500
  variants' texts (fingerprinted by the service; their recall) and ``GET .../documents/{id}/duplicates`` of stored
  documents;
- **dense_vector** fields of ``element_type: bit`` (64 dimensions, the main fingerprint) with
  ``index_options`` ``flat`` (exact) and ``hnsw``, each in its own index, queried with the ``knn`` query
  and ``similarity: 3`` (Hamming distance <= 3);
- **the neardup script** (Hamming <= 3 over every document, the embedded node's native script).

Ingest: the first and the last ``--ingest`` documents (100k) go through the service (``POST .../documents``, NDJSON
batches of 500 from two client threads, the service's default ``refresh=false``), the documents in
between are bulk-loaded with fingerprints computed here (as a ``dedupe`` would leave them); the same
first 100k documents also go through a plain ``helpers.bulk`` into an index of their own. The index's segment
count is sampled meanwhile: every document's candidate search seeks its block tokens in every segment.

Before anything is timed, up to 100,000 other documents go through the plain bulk and the service into indices
of their own (deleted after), so the first timed documents do not pay for a cold node. A node compiles code for
long: ``ingest_profile.md`` measured its JIT compilers at about a quarter of its CPU in the 50,000 documents after
a 50,000-document warm-up, against a twentieth late; what compiling is left after 100,000 is not measured here.

Run: ``python -m bench.scale`` → bench/results/scale.md (``--docs 100000 --ingest 20000 --out scale_100k.md`` for a
quick run that leaves it as it is)
"""

from __future__ import annotations

import argparse
import json
import random
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from elasticsearch import Elasticsearch, helpers

from bench.corpus import GENERATOR, Doc, corpus_path, corpus_records, generate, read_corpus, variant
from bench.harness import (
    Row,
    Served,
    bulk_load,
    elasticsearch,
    post_in_threads,
    segments_during,
    serve,
    stored_clusters,
    stored_document,
    time_methods,
    unwritten,
    wait_for_merges,
)
from bench.machine import RESULTS, describe, out_flag, out_option, write_results
from neardup.es.batch import reconcile
from neardup.es.client import setup_index
from neardup.es.lookup import candidate_search, find_duplicates, hamming_filter, script_language
from neardup.evaluation.metrics import pairwise_scores
from neardup.ingest.bits import to_hex, to_signed
from neardup.ingest.cluster import cluster_records
from neardup.ingest.fingerprint import Fingerprinter, Record
from neardup.ingest.pool import FingerprintPool
from neardup.ingest.verify import VerifyConfig

#: the results file in bench/results unless --out names another
OUT = "scale.md"
INDEX = "bench-scale"
PLAIN = "bench-scale-plain"
WARM = "bench-scale-warm"
#: documents through the plain bulk and the service before anything is timed: a fresh node's first tens of
#: thousands of flagged documents run at about half the rate of later ones (its code being compiled); a warm-up
#: shorter than that times the compiling in the early phase and flatters the late ingest against it
WARM_DOCS = 100_000
VECTORS = {"flat": "bench-scale-flat", "hnsw": "bench-scale-hnsw"}
BATCH = 500
BRUTE_QUERIES = 200


def _number(doc_id: str) -> int:
    return int(doc_id[1:])


def _queries(docs: Sequence[Doc], first: int) -> tuple[list[str], list[int]]:
    """500 variants of originals among the first ``first`` documents (their targets), 500 new texts."""
    rng = random.Random(11)
    originals = [k for k in range(first) if docs[k].group == docs[k].id]
    sources = rng.sample(originals, 500)
    variants = ["\n".join(variant(docs[s].text.split("\n"), rng)) for s in sources]
    others = [d.text for d in generate(500, seed=97)]
    return variants + others, sources + [-1] * len(others)


def _bulk_neardup(client: Elasticsearch, docs: Sequence[Doc], records: Sequence[Record], start: int, end: int) -> float:
    """Documents [start, end) with their fingerprints (each its own cluster), and their vectors."""

    def actions() -> Iterator[dict[str, Any]]:
        for k in range(start, end):
            rec = records[k]
            yield stored_document(INDEX, docs[k].id, docs[k].text, rec, k)
            if rec.status == "ok":
                for name in VECTORS.values():
                    yield {"_index": name, "_id": docs[k].id, "v": to_hex(rec.fingerprint)}

    names = [INDEX, *VECTORS.values()]
    return bulk_load(client, names, actions())


RETRIED: list[int] = []  # the status of every answer a batch was sent again for


def _service_ingest(
    client: Elasticsearch, served: Served, docs: Sequence[Doc]
) -> tuple[float, int, list[dict[str, Any]], float, int]:
    """(seconds, peak worker RSS, items, mean and most segments of the index meanwhile) for ``docs`` posted in
    batches from two client threads: each segment is searched by every document's candidate search."""
    (seconds, rss, items), mean, most = segments_during(
        client, INDEX, lambda: post_in_threads(served, INDEX, docs, BATCH, 2, retried=RETRIED)
    )
    return seconds, rss, items, mean, most


def _warm_up(client: Elasticsearch, served: Served, docs: Sequence[Doc]) -> None:
    """``docs`` through the plain bulk and the service into indices of their own, deleted after, not timed: the
    first measurements on a fresh node would otherwise time its code being compiled (the early service rate
    with them, flattering the late one)."""
    _plain_bulk(client, docs)
    setup_index(client, WARM)
    post_in_threads(served, WARM, docs, BATCH, 2)
    client.indices.delete(index=WARM)


def _plain_bulk(client: Elasticsearch, docs: Sequence[Doc]) -> float:
    client.indices.delete(index=PLAIN, ignore_unavailable=True)
    client.indices.create(index=PLAIN)
    t0 = time.perf_counter()
    actions = ({"_index": PLAIN, "_id": d.id, "text": d.text} for d in docs)
    helpers.bulk(client.options(request_timeout=600), actions, chunk_size=BATCH)
    seconds = time.perf_counter() - t0
    client.indices.delete(index=PLAIN)
    return seconds


def _size_mib(client: Elasticsearch, index: str) -> float:
    stats = client.indices.stats(index=index, metric="store")
    return float(stats["_all"]["primaries"]["store"]["size_in_bytes"]) / 2**20


Method = Callable[[Record], tuple[set[int], int]]


def _methods(client: Elasticsearch, lang: str, n: int) -> dict[str, Method]:
    def lookup(min_shared: int, in_es: bool) -> Method:
        def run(q: Record) -> tuple[set[int], int]:
            found, cands = find_duplicates(client, INDEX, q, VerifyConfig(), 500, min_shared=min_shared, in_es=in_es)
            return {_number(f.doc.id) for f in found}, cands

        return run

    def knn(kind: str) -> Method:
        def run(q: Record) -> tuple[set[int], int]:
            if q.status != "ok":
                return set(), -1
            query = {
                "knn": {
                    "field": "v",
                    "query_vector": to_hex(q.fingerprint),
                    "k": 100,
                    "num_candidates": 200,
                    "similarity": 3,
                }
            }
            hits = client.search(index=VECTORS[kind], query=query, size=100, source=False)["hits"]["hits"]
            return {_number(h["_id"]) for h in hits}, -1

        return run

    def script(q: Record) -> tuple[set[int], int]:
        if q.status != "ok":
            return set(), n
        query = hamming_filter([to_signed(q.fingerprint)], 3, lang)
        hits = client.search(index=INDEX, query=query, size=100, source=False)["hits"]["hits"]
        return {_number(h["_id"]) for h in hits}, n

    return {
        "neardup lookup, >= 1 shared token, check in ES (default)": lookup(1, True),
        "neardup lookup, >= 2 shared tokens, check in ES": lookup(2, True),
        "neardup lookup, >= 1 shared token, check in Python": lookup(1, False),
        "neardup lookup, >= 2 shared tokens, check in Python": lookup(2, False),
        "dense_vector bit flat, knn Hamming <= 3": knn("flat"),
        "dense_vector bit hnsw, knn Hamming <= 3": knn("hnsw"),
        f"script brute force Hamming <= 3 ({lang})": script,
    }


def _service_lookups(served: Served, ids: Sequence[str]) -> tuple[float, float, float]:
    """(p50, p99, mean candidates) of GET .../documents/{id}/duplicates over ``ids``."""
    times, cands = [], []
    for k, doc_id in enumerate(ids):
        t0 = time.perf_counter()
        with urllib.request.urlopen(f"{served.url}/v1/indices/{INDEX}/documents/{doc_id}/duplicates", timeout=60) as r:
            answer = json.load(r)
        if k >= 20:  # warm-up
            times.append((time.perf_counter() - t0) * 1000)
            cands.append(answer["candidates"])
    times.sort()
    return float(np.median(times)), times[int(0.99 * (len(times) - 1))], float(np.mean(cands))


def _service_text_lookups(
    served: Served, texts: Sequence[str], targets: Sequence[int], warm: Sequence[str]
) -> tuple[float, float, float, int]:
    """(p50, p99, mean candidates, variants whose source was found) of POST .../duplicates of ``texts``, each
    fingerprinted by the service, asking for up to 1,000 items (the service's default is 50); ``warm`` posted
    before, not timed, as the GET row warms up on other documents."""

    def post(text: str) -> tuple[set[int], int]:
        request = urllib.request.Request(
            f"{served.url}/v1/indices/{INDEX}/duplicates",
            data=json.dumps({"text": text, "size": 1000}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60) as r:
            answer = json.load(r)
        return {_number(i["id"]) for i in answer["items"]}, int(answer["candidates"])

    for text in warm:
        post(text)
    times, cands, found = [], [], 0
    for text, target in zip(texts, targets, strict=True):
        t0 = time.perf_counter()
        ids, n = post(text)
        times.append((time.perf_counter() - t0) * 1000)
        cands.append(n)
        found += int(target in ids)
    times.sort()
    return float(np.median(times)), times[int(0.99 * (len(times) - 1))], float(np.mean(cands)), found


def _block_matches(client: Elasticsearch, queries: Sequence[Record], min_shared: int) -> float:
    """Documents the block match alone (before the second check) matches per query, on average: what the lookup
    reads and checks inside Elasticsearch before the few that pass come back (counted with the query's terms form,
    which any cluster runs and which matches what the plugin's block query matches)."""
    counts = [
        client.count(index=INDEX, query=candidate_search(q, 0, (), min_shared, None, True)["query"])["count"]
        for q in queries
        if q.status == "ok"
    ]
    return float(np.mean(counts)) if counts else 0.0


def _measure(
    client: Elasticsearch,
    served: Served,
    lang: str,
    n: int,
    queries: list[Record],
    texts: list[str],
    targets: list[int],
    rng: random.Random,
) -> tuple[list[Row], dict[str, float], tuple[float, float, float], tuple[float, float, float, int], dict[str, float]]:
    methods = _methods(client, lang, n)
    brute = {k: v for k, v in methods.items() if k.startswith("script")}
    fast = {k: v for k, v in methods.items() if k not in brute}
    rows = time_methods(fast, queries, targets)
    rows += time_methods(brute, queries[:BRUTE_QUERIES], targets[:BRUTE_QUERIES])
    # the Hamming <= 3 question: hnsw against the exact flat answer, on every query
    exact = [methods["dense_vector bit flat, knn Hamming <= 3"](q)[0] for q in queries]
    approx = [methods["dense_vector bit hnsw, knn Hamming <= 3"](q)[0] for q in queries]
    agree = {
        "hnsw of flat": sum(len(a & e) for a, e in zip(approx, exact, strict=True)) / max(1, sum(map(len, exact))),
        "flat hits": float(sum(map(len, exact))),
        "block matches, 1 shared": _block_matches(client, queries, 1),
        "block matches, 2 shared": _block_matches(client, queries, 2),
    }
    stored_ids = [f"d{k:07d}" for k in rng.sample(range(n), 520)]
    sizes = {"neardup index (text + neardup fields)": _size_mib(client, INDEX)}
    sizes |= {f"dense_vector {kind}": _size_mib(client, name) for kind, name in VECTORS.items()}
    by_text = _service_text_lookups(served, texts[:500], targets[:500], texts[500:520])  # new texts warm it up
    return rows, agree, _service_lookups(served, stored_ids), by_text, sizes


def _setup(client: Elasticsearch) -> None:
    for name in (INDEX, PLAIN, WARM, *VECTORS.values()):
        client.indices.delete(index=name, ignore_unavailable=True)
    setup_index(client, INDEX)
    for kind, name in VECTORS.items():
        vector = {"type": "dense_vector", "element_type": "bit", "dims": 64, "index": True}
        client.indices.create(index=name, mappings={"properties": {"v": vector | {"index_options": {"type": kind}}}})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--ingest", type=int, default=100_000, help="documents through the service, first and last")
    parser.add_argument(
        "--fingerprint-in-es",
        action="store_true",
        help="the service fingerprints through the cluster's processor (NEARDUP_FINGERPRINT_IN_ES=true)",
    )
    parser.add_argument(
        "--flag-in-es",
        action="store_true",
        help="the service writes through the cluster's neardup-flag pipeline (NEARDUP_FLAG_IN_ES=true)",
    )
    out_option(parser, OUT)
    args = parser.parse_args()
    if args.docs < 2 * args.ingest:  # the early and the late documents are two different slices of the corpus
        parser.error(f"--docs must be at least twice --ingest ({args.ingest:,})")
    n, ingest = args.docs, args.ingest
    command = f"python -m bench.scale --docs {n}" + (
        f" --ingest {ingest}" if ingest != parser.get_default("ingest") else ""
    )
    command += " --fingerprint-in-es" if args.fingerprint_in_es else ""
    command += " --flag-in-es" if args.flag_in_es else ""
    command += out_flag(args.out, OUT)
    steps = [s for s in (100_000, 300_000) if s < n] + [n]
    t0 = time.perf_counter()
    docs = read_corpus(corpus_path(n))
    records = corpus_records(docs)
    fp_note = f"corpus and fingerprints ready in {time.perf_counter() - t0:.0f}s (cached after the first run)"
    texts, targets = _queries(docs, min(steps[0], n - ingest))
    with FingerprintPool(2) as pool:
        queries = pool.fingerprint([(t, None) for t in texts])
    rng = random.Random(5)
    out: list[str] = []
    with (
        elasticsearch(port=9283, heap="4g") as (url, es_label),
        serve(
            url,
            es_timeout="60",
            fingerprint_in_es=str(args.fingerprint_in_es).lower(),
            flag_in_es=str(args.flag_in_es).lower(),
        ) as served,
    ):
        client = Elasticsearch(url, request_timeout=120)
        lang = script_language(client)
        _setup(client)
        warm = docs[ingest : ingest + WARM_DOCS]
        _warm_up(client, served, warm)
        bulk_s = _plain_bulk(client, docs[:ingest])
        wait_for_merges(client, poll=2.0)
        early_s, early_rss, early_items, early_mean, early_most = _service_ingest(client, served, docs[:ingest])
        unwritten_counts = {"early": len(unwritten(early_items))}
        truth = [d.group for d in docs[:ingest]]
        scores = pairwise_scores(truth, [i["cluster"] for i in early_items])
        offline = cluster_records(records[:ingest], lambda r: r.fingerprints, VerifyConfig())
        offline_scores = pairwise_scores(truth, offline.cluster.tolist())
        client.indices.refresh(index=INDEX)
        reconcile(client, INDEX, Fingerprinter.default().version)
        reconciled = [str(c) for c in stored_clusters(client, INDEX, [d.id for d in docs[:ingest]])]
        reconciled_scores = pairwise_scores(truth, reconciled)
        loaded = ingest
        load_s = _bulk_vectors_only(client, records, docs, 0, ingest)
        late: tuple[float, int, float, int] | None = None
        results: list[
            tuple[
                int,
                list[Row],
                dict[str, float],
                tuple[float, float, float],
                tuple[float, float, float, int],
                dict[str, float],
            ]
        ] = []
        merge_s = 0.0
        for step in steps:
            if step == n:
                load_s += _bulk_neardup(client, docs, records, loaded, n - ingest)
                merge_s += wait_for_merges(client, poll=2.0)
                late_s, late_rss, items, late_mean, late_most = _service_ingest(client, served, docs[n - ingest : n])
                load_s += _bulk_vectors_only(client, records, docs, n - ingest, n)
                late = (late_s, late_rss, late_mean, late_most)
                unwritten_counts["late"] = len(unwritten(items))
            else:
                load_s += _bulk_neardup(client, docs, records, loaded, step)
            loaded = step
            client.indices.refresh(index=[INDEX, *VECTORS.values()])
            merge_s += wait_for_merges(client, poll=2.0)
            results.append((step, *_measure(client, served, lang, step, queries, texts, targets, rng)))
            print(f"{step:,} documents measured", flush=True)
        client.close()

    out += [
        "# neardup at scale, next to Elasticsearch's own vectors",
        "",
        f"Machine: {describe()}",
        f"Elasticsearch: {es_label}, 4 GB heap, every index 1 shard, not force-merged; "
        f"`neardup serve` with 2 gunicorn workers on the same 2 cores.",
        f"Corpus: `python -m bench.corpus --docs {n}`, generator {GENERATOR} ({fp_note}).",
        f"Command: `{command}`",
        "",
        "## Ingest",
        "",
        f"{ingest:,} documents, batches of {BATCH}; the service with its default `refresh=false` (documents a",
        "worker wrote moments ago are remembered, not waited for), two client threads; `helpers.bulk` (one client",
        "thread) with its default refresh (none) into an index with the default mapping. Before either was timed, "
        f"{len(warm):,} other documents went through both into indices of their own, so that less of the node's "
        "compiling is timed in the early phase (how much is left is not measured here; see `ingest_profile.md`). "
        + _service_mode(args.fingerprint_in_es, args.flag_in_es),
        "",
        "| what | documents/s | × helpers.bulk | peak worker RSS MiB | segments (mean, most) |",
        "|---|---|---|---|---|",
        f"| plain `helpers.bulk` | {ingest / bulk_s:,.0f} | 1.00 | | |",
        f"| service, index empty (0 → {ingest:,}) | {ingest / early_s:,.0f} | {bulk_s / early_s:.2f} | "
        f"{early_rss / 2**20:.0f} | {early_mean:.1f}, {early_most} |",
    ]
    if late is not None and n > ingest:
        out.append(
            f"| service, index holding {n - ingest:,} ({n - ingest:,} → {n:,}) | {ingest / late[0]:,.0f} | "
            f"{bulk_s / late[0]:.2f} | {late[1] / 2**20:.0f} | {late[2]:.1f}, {late[3]} |"
        )
        out.append("")
        out.append(f"Late vs early service rate: {early_s / late[0]:.2f}×.")
    out += [
        "",
        f"Clusters the service assigned to the first {ingest:,} documents against the generator's groups: "
        f"precision {scores.precision:.4f}, recall {scores.recall:.4f} (pairwise); `neardup cluster` (offline) "
        f"of the same documents: precision {offline_scores.precision:.4f}, recall {offline_scores.recall:.4f}; "
        f"after `neardup reconcile` of the index: precision {reconciled_scores.precision:.4f}, recall "
        f"{reconciled_scores.recall:.4f}. "
        + (
            "(The processor's window on the one node sees the batches of both workers; reconcile joins what a "
            "search and the window both missed.)"
            if args.flag_in_es
            else "(Batches posted at the same moment to the two workers cannot see each other; reconcile joins what "
            "they split.)"
        ),
        f"Bulk loading of the other documents with precomputed fingerprints: {load_s:.0f}s; waiting for "
        f"Elasticsearch's merges to finish before each measurement: {merge_s:.0f}s in all.",
        "Documents the service answered as not written (refused, or undone with their batch): "
        + ", ".join(f"{k} {v:,}" for k, v in unwritten_counts.items())
        + ". "
        f"Batches the service answered with a 5xx and the client sent again: {len(RETRIED)} "
        f"({', '.join(str(c) for c in sorted(set(RETRIED))) or 'none'}); the service's Elasticsearch timeout is "
        "60 s here (`NEARDUP_ES_TIMEOUT`, default 10 s).",
        "",
        "## Lookup",
        "",
        f"Queries: 500 reprint-style variants of indexed documents (not indexed themselves; found = the source "
        f"among the matches) and 500 new documents; the script brute force over the first {BRUTE_QUERIES}. "
        "Client wall time per query, in this process; the neardup rows start from a fingerprinted query. "
        "Candidates are what comes back to the client: with the check in Elasticsearch, only the documents that "
        "passed it there (the block match reads more, counted below each table); with the check in Python, every "
        "block match up to the cap of 500.",
    ]
    for step, rows, agree, service, by_text, sizes in results:
        out += [
            "",
            f"### {step:,} documents",
            "",
            "| method | p50 ms | p99 ms | candidates returned / query | variants found (of 500) |",
            "|---|---|---|---|---|",
        ]
        for name, p50, p99, cand, hits in rows:
            shown = "—" if cand is None else f"{cand:,.1f}"
            found = f"{hits} (of {min(500, BRUTE_QUERIES)})" if name.startswith("script") else str(hits)
            out.append(f"| {name} | {p50:.2f} | {p99:.2f} | {shown} | {found} |")
        out.append(
            f"| service `POST …/duplicates` of the 500 variants' texts (fingerprinted by the service), HTTP | "
            f"{by_text[0]:.2f} | {by_text[1]:.2f} | {by_text[2]:,.1f} | {by_text[3]} |"
        )
        out.append(
            f"| service `GET …/documents/{{id}}/duplicates`, 500 stored documents, HTTP | {service[0]:.2f} | "
            f"{service[1]:.2f} | {service[2]:,.1f} | |"
        )
        out += [
            "",
            f"The block match alone matched {agree['block matches, 1 shared']:,.1f} documents per query with >= 1 "
            f"shared token and {agree['block matches, 2 shared']:,.1f} with >= 2 (Elasticsearch's count of the "
            "query without the second check; the check in Python reads at most 500 of them). "
            f"hnsw found {agree['hnsw of flat']:.1%} of the {agree['flat hits']:,.0f} documents within 3 bits that "
            "flat (exact) found. Index sizes (MiB, primaries): "
            + ", ".join(f"{k} {v:,.1f}" for k, v in sizes.items())
            + ".",
        ]
    write_results(RESULTS / args.out, out)


def _service_mode(fingerprint_in_es: bool, flag_in_es: bool) -> str:
    if flag_in_es:
        return (
            "The service writes through the cluster's `neardup-flag` pipeline, which fingerprints and assigns each "
            "document, and reads the assignments back (`NEARDUP_FLAG_IN_ES=true`)."
        )
    if fingerprint_in_es:
        return "The service fingerprints through the cluster's processor (`NEARDUP_FINGERPRINT_IN_ES=true`)."
    return "The service fingerprints in Python."


def _bulk_vectors_only(
    client: Elasticsearch, records: Sequence[Record], docs: Sequence[Doc], start: int, end: int
) -> float:
    """The vectors of documents [start, end) (which reached the neardup index through the service)."""
    actions = (
        {"_index": name, "_id": docs[k].id, "v": to_hex(records[k].fingerprint)}
        for k in range(start, end)
        if records[k].status == "ok"
        for name in VECTORS.values()
    )
    t0 = time.perf_counter()
    helpers.bulk(client.options(request_timeout=600), actions, chunk_size=2000)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()

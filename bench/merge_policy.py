"""The service's ingest under Elasticsearch's default merge policy and under neardup's index template.

Every candidate search seeks a document's 64 block tokens in every segment of the index, so the number of
segments multiplies the cost of flagging a document. neardup's index template merges more eagerly than
Elasticsearch does (``mappings/neardup-index.template.json``); this bench ingests the same documents through a
real ``neardup serve`` (2 workers, processor fingerprinting, batches of 500 from 2 client threads) into an index
with each policy, optionally after bulk-loading ``--preload`` other documents through the ``neardup`` pipeline,
and reports documents/s and the segments the index held while it was written to (sampled every second).

    python -m bench.merge_policy --preload 0 --ingest 20000 --rounds 3 --corpus 100000      # merge_policy.md
    python -m bench.merge_policy --preload 950000 --ingest 5000 --rounds 1 --corpus 1000000 --out merge_policy_1m.md
"""

from __future__ import annotations

import argparse
import functools
import statistics
from collections.abc import Iterator, Sequence
from typing import Any

from elasticsearch import Elasticsearch

from bench.corpus import GENERATOR, Doc, corpus_path, read_corpus
from bench.harness import bulk_load, elasticsearch, post_in_threads, segments_during, serve, wait_for_merges
from bench.machine import RESULTS, describe, out_flag, out_option, write_results
from neardup.es.client import setup_index
from neardup.es.pipeline import install_pipeline, pipeline_id

INDEX = "bench-merge-policy"
WARM = "bench-merge-policy-warm"
BATCH = 500
#: Elasticsearch 8.19's own values of the three settings neardup's template changes
ES_DEFAULT = {
    "index.merge.policy.floor_segment": "2mb",
    "index.merge.policy.segments_per_tier": 10,
    "index.merge.policy.max_merge_at_once": 10,
}
POLICIES = ("Elasticsearch's default", "neardup's index template")


def _segments(client: Elasticsearch, index: str) -> int:
    return len(client.cat.segments(index=index, format="json"))


def _create(client: Elasticsearch, index: str, policy: str) -> None:
    client.indices.delete(index=index, ignore_unavailable=True)
    setup_index(client, index)
    if policy == POLICIES[0]:
        client.indices.put_settings(index=index, settings=ES_DEFAULT)


def _preload(client: Elasticsearch, index: str, docs: Sequence[Doc]) -> float:
    """``docs`` through the fingerprinting pipeline (no flagging), refreshed, merges waited for; the seconds."""

    def actions() -> Iterator[dict[str, Any]]:
        for doc in docs:
            yield {"_index": index, "_id": doc.id, "text": doc.text}

    loaded = bulk_load(client, index, actions(), chunk_size=1000, pipeline=pipeline_id())
    return loaded + wait_for_merges(client, poll=2.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preload", type=int, default=0, help="documents bulk-loaded before the timed ingest")
    parser.add_argument("--ingest", type=int, default=20_000, help="documents posted to the service, timed")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of both policies, alternating")
    parser.add_argument("--corpus", type=int, default=100_000, help="size of the bench corpus to draw from")
    out_option(parser, "merge_policy.md")
    args = parser.parse_args()
    if args.preload + args.ingest + 2_000 > args.corpus:
        parser.error("--preload + --ingest + 2,000 warm-up documents must fit in --corpus")
    docs = read_corpus(corpus_path(args.corpus))
    timed = docs[args.corpus - args.ingest :]
    warm = docs[args.preload : args.preload + 2_000]
    rows: dict[str, list[tuple[float, float, int, float]]] = {p: [] for p in POLICIES}
    with (
        elasticsearch(port=9284, heap="4g") as (url, es_label),
        serve(url, es_timeout="60", fingerprint_in_es="true") as served,
    ):
        client = Elasticsearch(url, request_timeout=120)
        install_pipeline(client)
        client.indices.delete(index=WARM, ignore_unavailable=True)
        setup_index(client, WARM)
        post_in_threads(served, WARM, warm, BATCH, 2)  # code compiled, as on a node that has been running
        client.indices.delete(index=WARM)
        for r in range(args.rounds):
            for policy in POLICIES if r % 2 == 0 else POLICIES[::-1]:  # neither always runs first
                # an index of its own per run: the workers remember what they wrote moments ago by index name
                index = f"{INDEX}-{r}-{POLICIES.index(policy)}"
                _create(client, index, policy)
                load_s = _preload(client, index, docs[: args.preload]) if args.preload else 0.0
                before = _segments(client, index)
                posted = functools.partial(post_in_threads, served, index, timed, BATCH, 2)
                (seconds, _, items), mean, most = segments_during(client, index, posted)
                client.indices.delete(index=index)
                if any(i["status"] == "error" for i in items):
                    raise SystemExit(f"{policy}: the service refused documents")
                if not most:  # done before the first sample
                    mean, most = before, before
                rows[policy].append((len(timed) / seconds, mean, most, load_s))
                print(f"round {r + 1}, {policy}: {len(timed) / seconds:,.0f} documents/s", flush=True)
        client.close()

    command = (
        f"python -m bench.merge_policy --preload {args.preload} --ingest {args.ingest} --rounds {args.rounds}"
        f" --corpus {args.corpus}" + out_flag(args.out, "merge_policy.md")
    )
    out = [
        "# The service's ingest by merge policy",
        "",
        f"Machine: {describe()}",
        f"Elasticsearch: {es_label}, 4 GB heap, 1 shard, refresh every second (the default).",
        f"Corpus: `python -m bench.corpus --docs {args.corpus}`, generator {GENERATOR}. Command: `{command}`",
        "",
        f"{len(timed):,} documents posted to `neardup serve` (2 workers, `NEARDUP_FINGERPRINT_IN_ES=true`) in batches "
        f"of {BATCH} from 2 client threads, into an index holding {args.preload:,} other documents"
        + (" (bulk-loaded through the `neardup` pipeline, merges waited for)" if args.preload else "")
        + ". Before the rounds, 2,000 other documents went through the service (not timed). Each round runs both "
        "policies, the first in the other order each round; segments sampled every second while the documents "
        "were written.",
        "",
        "| merge policy | documents/s per round | median | segments (mean, per round) | segments (most) |",
        "|---|---|---|---|---|",
    ]
    for policy in POLICIES:
        got = rows[policy]
        out.append(
            f"| {policy} | {', '.join(f'{g[0]:,.0f}' for g in got)} | {statistics.median(g[0] for g in got):,.0f} "
            f"| {', '.join(f'{g[1]:.1f}' for g in got)} | {max(g[2] for g in got)} |"
        )
    ratio = statistics.median(g[0] for g in rows[POLICIES[1]]) / statistics.median(g[0] for g in rows[POLICIES[0]])
    out += ["", f"neardup's template / Elasticsearch's default, median documents/s: {ratio:.2f}×."]
    if args.preload:
        out.append(
            "Preloading took " + ", ".join(f"{g[3]:.0f}" for p in POLICIES for g in rows[p]) + " s (by policy, round)."
        )
    write_results(RESULTS / args.out, out)


if __name__ == "__main__":
    main()

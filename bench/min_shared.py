"""How many block tokens a candidate must share (``NEARDUP_MIN_SHARED``): ingest speed against what is found.

A lookup with one shared (seed, block) token enough meets about N · 64 / 65,536 documents that share a token by
chance, and each costs the node a postings read and a second check, so flagging slows as the index grows. With two
shared tokens almost none of those reaches the second check (their postings are still read and counted), and the
near-duplicates that share only one token are missed. This bench measures both sides with two real ``neardup serve``
(2 workers each, writing through the cluster's flag pipeline), one per setting, on one embedded node:

- into an empty index (a new one for each run, so that no run meets the documents the one before wrote moments
  earlier): the same documents through each service, in the order 1, 2, 2, 1 (the node keeps compiling code for a
  while, so neither setting always comes first); documents/s, the node's CPU per document, and the pairwise
  precision and recall of the clusters against the generator's groups;
- into an index already holding ``--docs`` − ``--ingest`` documents (bulk-loaded with their fingerprints, each its
  own cluster): ``--rounds`` rounds of ``--round-docs`` further documents through each service, alternating which goes
  first (an even number of rounds puts each first equally often); documents/s, node CPU per document, and how many of
  the documents whose group had an earlier member were flagged as a duplicate of a member.

    python -m bench.min_shared --docs 1000000 --ingest 50000 --rounds 4 --round-docs 6000
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from elasticsearch import Elasticsearch

from bench.corpus import GENERATOR, Doc, corpus_path, corpus_records, read_corpus
from bench.harness import (
    Served,
    at_least,
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
from neardup.evaluation.metrics import pairwise_scores

INDEX = "bench-min-shared"
WARM = "bench-min-shared-warm"
BATCH = 500
CHOICES = (1, 2)


@dataclass
class Tally:
    """One setting's timed phases: seconds, node CPU seconds and documents, summed; per-round rates."""

    seconds: float = 0.0
    cpu: float = 0.0
    docs: int = 0
    rates: list[float] = field(default_factory=list)
    segments: list[float] = field(default_factory=list)

    def add(self, seconds: float, cpu: float, docs: int, segments: float) -> None:
        self.seconds += seconds
        self.cpu += cpu
        self.docs += docs
        self.rates.append(docs / seconds)
        self.segments.append(segments)


def _timed(
    client: Elasticsearch, pid: int, served: Served, index: str, docs: Sequence[Doc]
) -> tuple[float, float, float, list[dict[str, Any]]]:
    """(seconds, node CPU seconds, mean segments, items) of ``docs`` posted to ``served`` in batches from 2 threads."""
    c0 = cpu_seconds([pid])
    (seconds, _rss, items), mean, _most = segments_during(
        client, index, lambda: post_in_threads(served, index, docs, BATCH, 2)
    )
    refused = unwritten(items)
    if refused:
        raise RuntimeError(f"the service did not write {len(refused)} documents, the first: {refused[0]}")
    return seconds, cpu_seconds([pid]) - c0, mean, items


def found_duplicates(docs: Sequence[Doc], first: int, items: Sequence[dict[str, Any]]) -> tuple[int, int, int]:
    """(documents that should be flagged, flagged, of those that should be the ones flagged as a duplicate of a member
    of their own group) for ``items`` answering ``docs[first:first + len(items)]``: a document should be flagged when
    its group has a member earlier in ``docs``. (Two client threads write a round's batches side by side, so a
    document may be written before one earlier in ``docs``, and be flagged as its duplicate, rightly; it is counted as
    flagged only.)

    >>> docs = [Doc("a", "", "g"), Doc("b", "", "h"), Doc("c", "", "g"), Doc("d", "", "k")]
    >>> found_duplicates(docs, 2, [{"duplicate_of": "a"}, {"duplicate_of": "b"}])
    (1, 2, 1)
    """
    group = {d.id: d.group for d in docs}
    seen = {d.group for d in docs[:first]}
    should = flagged = right = 0
    for doc, item in zip(docs[first : first + len(items)], items, strict=True):
        expected = doc.group in seen
        seen.add(doc.group)
        original = item.get("duplicate_of")
        should += expected
        flagged += bool(original)
        right += expected and bool(original) and group.get(original) == doc.group
    return should, flagged, right


def _early(
    client: Elasticsearch, pid: int, services: dict[int, Served], docs: Sequence[Doc]
) -> dict[int, tuple[Tally, list[tuple[float, float]]]]:
    """Each setting's documents into an empty index, in the order 1, 2, 2, 1; its tally and (precision, recall)."""
    out: dict[int, tuple[Tally, list[tuple[float, float]]]] = {m: (Tally(), []) for m in services}
    truth = [d.group for d in docs]
    for k, m in enumerate((*CHOICES, *reversed(CHOICES))):
        index = f"{INDEX}-early-{k}"
        setup_index(client, index)
        seconds, cpu, mean, items = _timed(client, pid, services[m], index, docs)
        scores = pairwise_scores(truth, [i["cluster"] for i in items])
        out[m][0].add(seconds, cpu, len(docs), mean)
        out[m][1].append((scores.precision, scores.recall))
        print(f"early, min_shared {m}: {len(docs) / seconds:,.0f} documents/s", flush=True)
        client.indices.delete(index=index)
    return out


def _late(
    client: Elasticsearch,
    pid: int,
    services: dict[int, Served],
    docs: Sequence[Doc],
    first: int,
    rounds: int,
    size: int,
) -> dict[int, tuple[Tally, list[int]]]:
    """``rounds`` rounds of ``size`` documents from ``docs[first:]`` through each setting's service into the loaded
    index, alternating which goes first; each setting's tally and its (should, flagged, right) counts summed."""
    out: dict[int, tuple[Tally, list[int]]] = {m: (Tally(), [0, 0, 0]) for m in services}
    at = first
    for r in range(rounds):
        for m in CHOICES if r % 2 == 0 else tuple(reversed(CHOICES)):
            batch = docs[at : at + size]
            seconds, cpu, mean, items = _timed(client, pid, services[m], INDEX, batch)
            counts = found_duplicates(docs, at, items)
            out[m][0].add(seconds, cpu, len(batch), mean)
            out[m][1][:] = [a + b for a, b in zip(out[m][1], counts, strict=True)]
            print(f"late round {r}, min_shared {m}: {len(batch) / seconds:,.0f} documents/s", flush=True)
            at += size
    return out


def _row(label: str, tally: Tally, base: Tally, extra: str) -> str:
    rate = tally.docs / tally.seconds
    return (
        f"| {label} | {rate:,.0f} | {rate / (base.docs / base.seconds):.2f} | "
        f"{', '.join(f'{r:,.0f}' for r in tally.rates)} | {1000 * tally.cpu / tally.docs:.2f} | "
        f"{statistics.fmean(tally.segments):.1f} | {extra} |"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--docs", type=at_least(1), default=1_000_000, help="corpus size; the late index holds all but --ingest"
    )
    parser.add_argument("--ingest", type=at_least(1), default=50_000, help="documents into the empty index, per run")
    parser.add_argument("--rounds", type=at_least(1), default=4)
    parser.add_argument("--round-docs", type=at_least(1), default=6_000, help="documents per setting and round, late")
    parser.add_argument(
        "--warm", type=at_least(0), default=50_000, help="documents through each service before anything is timed"
    )
    out_option(parser, "min_shared.md")
    args = parser.parse_args(argv)
    n, ingest = args.docs, args.ingest
    if 2 * args.rounds * args.round_docs > ingest:
        parser.error(
            f"the late rounds write 2 × {args.rounds} × {args.round_docs:,} documents, more than the last --ingest "
            f"{ingest:,} of the corpus"
        )
    if 2 * ingest + args.warm > n:
        parser.error(
            f"--docs {n:,} is too few for the first --ingest {ingest:,}, the --warm {args.warm:,} after them and the "
            f"last --ingest {ingest:,}"
        )
    t0 = time.perf_counter()
    docs = read_corpus(corpus_path(n))
    records = corpus_records(docs)
    ready = time.perf_counter() - t0
    with ExitStack() as stack:
        node = stack.enter_context(embedded_node(port=9284, heap="4g"))
        services = {
            m: stack.enter_context(serve(node.url, es_timeout="60", flag_in_es="true", min_shared=str(m)))
            for m in CHOICES
        }
        client = Elasticsearch(node.url, request_timeout=600)
        warm = docs[ingest : ingest + args.warm]
        for served in services.values():
            setup_index(client, WARM)
            post_in_threads(served, WARM, warm, BATCH, 2)
            client.indices.delete(index=WARM)
        early = _early(client, node.pid, services, docs[:ingest])
        setup_index(client, INDEX)
        load_s = bulk_load(
            client, INDEX, (stored_document(INDEX, docs[k].id, docs[k].text, records[k], k) for k in range(n - ingest))
        )
        merge_s = wait_for_merges(client, poll=2.0)
        late = _late(client, node.pid, services, docs, n - ingest, args.rounds, args.round_docs)
        client.close()

    command = f"python -m bench.min_shared --docs {n} --ingest {ingest} --rounds {args.rounds} "
    command += f"--round-docs {args.round_docs}"
    command += f" --warm {args.warm}" if args.warm != parser.get_default("warm") else ""
    command += out_flag(args.out, "min_shared.md")
    out = [
        "# How many block tokens a candidate must share: ingest speed against what is found",
        "",
        f"Machine: {describe()}",
        "Elasticsearch: embedded, 4 GB heap, 1 shard, neardup's index template; two `neardup serve` (2 workers "
        "each, `NEARDUP_FLAG_IN_ES=true`, one with `NEARDUP_MIN_SHARED=1` (the default), one with `2`) on the same "
        "2 cores.",
        f"Corpus: `python -m bench.corpus --docs {n}`, generator {GENERATOR} (ready in {ready:.0f}s). "
        f"Command: `{command}`",
        "",
        f"Before anything was timed, {args.warm:,} other documents went through each service into an index of its "
        "own. Batches of 500 from 2 client threads; node CPU is the Elasticsearch process's, read before and after "
        "each phase.",
        "",
        f"## Into an empty index: the first {ingest:,} documents, twice per setting (order 1, 2, 2, 1)",
        "",
        "| min_shared | documents/s | × min_shared 1 | per run | node CPU ms per document | segments (mean) "
        "| cluster precision / recall (pairwise, per run) |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in CHOICES:
        tally, scores = early[m]
        pr = "; ".join(f"{p:.4f} / {r:.4f}" for p, r in scores)
        out.append(_row(str(m), tally, early[CHOICES[0]][0], pr))
    out += [
        "",
        f"## Into an index holding {n - ingest:,} documents: {args.rounds} rounds of {args.round_docs:,} documents "
        "per setting",
        "",
        f"The index was bulk-loaded with precomputed fingerprints in {load_s:.0f}s, and its merges waited for "
        f"({merge_s:.0f}s). The rounds write the corpus's documents from {n - ingest:,} on, alternating which "
        "setting goes first; found: of the documents whose group had an earlier member, those flagged as a "
        "duplicate of a member of their group.",
        "",
        "| min_shared | documents/s | × min_shared 1 | per round | node CPU ms per document | segments (mean) "
        "| found (of should) | flagged |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for m in CHOICES:
        tally, (should, flagged, right) = late[m]
        out.append(_row(str(m), tally, late[CHOICES[0]][0], f"{right:,} ({should:,}) | {flagged:,}"))
    for m in CHOICES:
        e, lt = early[m][0], late[m][0]
        out.append("")
        out.append(
            f"min_shared {m}: late ÷ early {(lt.docs / lt.seconds) / (e.docs / e.seconds):.2f}× "
            f"(median of rounds ÷ median of runs {statistics.median(lt.rates) / statistics.median(e.rates):.2f}×)."
        )
    write_results(RESULTS / args.out, out)
    print("\n".join(out))


if __name__ == "__main__":
    main()

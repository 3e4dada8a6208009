"""Where the offline clusters of the bench corpus part from the generator's groups, at up to a million
documents.

The generator (:mod:`bench.corpus`) draws every original from a finite stock of sentences and poem lines,
and one original in ten carries one of 200 recurring paragraphs. As the corpus grows, originals of different
groups come to share text: the carriers of one recurring paragraph, originals drawing the same sentences.
Where what they share makes them near-duplicates by their text, the generator's groups are no longer the
truth, and such pairs grow with the square of the corpus; the generator bounds what one shared unit can
be, and this bench shows whether the bound holds. It clusters the corpus offline
(:func:`neardup.ingest.cluster.cluster_records`, what ``neardup cluster``, ``dedupe`` and ``reconcile``
run) and reports pairwise precision and recall against the groups, over all documents and over the
documents that carry no recurring paragraph, with the composition of the largest clusters.

Run: ``python -m bench.cluster_truth --docs 1000000`` → bench/results/cluster_truth_1000k.md (the
fingerprints are the ones :func:`bench.corpus.corpus_records` keeps beside the corpus, computed on first use)
"""

from __future__ import annotations

import argparse
import resource
import time
from collections import Counter
from pathlib import Path

import numpy as np

from bench.corpus import GENERATOR, corpus_path, corpus_records, read_corpus, recurring_paragraphs
from bench.machine import describe, write_results
from neardup.evaluation.metrics import pairwise_scores
from neardup.ingest.cluster import cluster_records
from neardup.ingest.verify import VerifyConfig

RESULTS = Path(__file__).parent / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    args = parser.parse_args()
    n = args.docs
    docs = read_corpus(corpus_path(n))
    records = corpus_records(docs)
    t0 = time.perf_counter()
    a = cluster_records(records, lambda r: r.fingerprints, VerifyConfig())
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    truth = [d.group for d in docs]
    clusters = a.cluster.tolist()
    everything = pairwise_scores(truth, clusters)
    recurring = recurring_paragraphs()
    carries = np.fromiter((any(p in d.text for p in recurring) for d in docs), dtype=bool, count=n)
    plain = np.flatnonzero(~carries).tolist()
    without = pairwise_scores([truth[k] for k in plain], [clusters[k] for k in plain])
    lines = [
        f"# Offline clusters of {n:,} bench documents against the generator's groups",
        "",
        f"Machine: {describe()}",
        f"Command: `python -m bench.cluster_truth --docs {n}` (corpus generator {GENERATOR}); `cluster_records` in",
        "this process (the fingerprints loaded beforehand, not timed); peak RSS is this process's, the corpus and",
        "fingerprints included.",
        "",
        f"Clustering: {seconds:.0f} s, peak RSS {peak:,.0f} MiB; {len(set(clusters)):,} clusters.",
        "",
        "| documents | count | precision | recall | true pairs | false pairs | missed pairs |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, count, s in (
        ("all", n, everything),
        ("without a recurring paragraph", len(plain), without),
    ):
        lines.append(f"| {label} | {count:,} | {s.precision:.4f} | {s.recall:.4f} | {s.tp:,} | {s.fp:,} | {s.fn:,} |")
    lines += [
        "",
        "Largest clusters: members, distinct generator groups among them, share carrying a recurring paragraph.",
        "",
        "| cluster | members | groups | carry a recurring paragraph |",
        "|---|---|---|---|",
    ]
    for cluster, size in Counter(clusters).most_common(10):
        members = np.flatnonzero(a.cluster == cluster)
        groups = len({truth[k] for k in members.tolist()})
        lines.append(f"| {docs[cluster].id} | {size} | {groups} | {carries[members].mean():.0%} |")
    write_results(RESULTS / f"cluster_truth_{n // 1000}k.md", lines)


if __name__ == "__main__":
    main()

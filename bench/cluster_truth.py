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
documents that carry no recurring paragraph, with the composition of the largest clusters. Then it reads
the links the clustering made (each document to the match it joined) with measures that owe nothing to
neardup: the exact Jaccard similarity of the 3-grams of the two texts' letters and digits (what neardup's
sketch estimates, after its normalisation, from a sample of them) and the Jaccard similarity and containment
of the texts' 5-grams, for a sample of the links that cross generator groups and of those inside one.
Links across groups whose texts are as alike as neardup's own threshold asks are the generator's truth
failing, not the clustering; last, the precision and recall against the groups joined wherever such a link
joins two, which says how many of the false pairs those links carry.

Run: ``python -m bench.cluster_truth --docs 1000000`` → bench/results/cluster_truth_1000k.md (the
fingerprints are the ones :func:`bench.corpus.corpus_records` keeps beside the corpus, computed on first use)
"""

from __future__ import annotations

import argparse
import random
import resource
import time
from collections import Counter
from collections.abc import Sequence

import numpy as np

from bench.corpus import GENERATOR, Doc, corpus_path, corpus_records, read_corpus, recurring_paragraphs
from bench.machine import RESULTS, describe, write_results
from neardup.evaluation.metrics import pairwise_scores
from neardup.ingest.cluster import Assignment, cluster_records
from neardup.ingest.verify import VerifyConfig

#: links sampled per kind (across groups, inside one)
SAMPLE = 2_000


def grams(text: str, n: int) -> set[str]:
    """The character ``n``-grams of ``text`` (the text itself when shorter).

    >>> sorted(grams("abcdef", 5))
    ['abcde', 'bcdef']
    """
    return {text[k : k + n] for k in range(max(1, len(text) - n + 1))}


def text_likeness(a: str, b: str, n: int) -> tuple[float, float]:
    """(Jaccard, containment) of two texts' character ``n``-grams: shared grams over all grams, and over the
    grams of the text with fewer.

    >>> text_likeness("abcdefg", "abcdefgh", 5)
    (0.75, 1.0)
    """
    x, y = grams(a, n), grams(b, n)
    shared = len(x & y)
    return shared / len(x | y), shared / min(len(x), len(y))


def letters_and_digits(text: str) -> str:
    """``text`` without what is neither a letter nor a digit (punctuation, spaces).

    >>> letters_and_digits("《人民日报》, 记者 报道 2026!")
    '人民日报记者报道2026'
    """
    return "".join(ch for ch in text if ch.isalnum())


def joined(truth: Sequence[object], pairs: Sequence[tuple[int, int]]) -> list[object]:
    """``truth`` (a group per document) with the groups of each pair of documents made one, transitively; a
    joined group is named by one of its groups.

    >>> joined(["a", "a", "b", "c", "d"], [(0, 2), (2, 3)])
    ['a', 'a', 'a', 'a', 'd']
    """
    parent: dict[object, object] = {}

    def root(group: object) -> object:
        while parent.get(group, group) != group:
            group = parent[group]
        return group

    for k, j in pairs:
        first, second = root(truth[k]), root(truth[j])
        if first != second:
            parent[second] = first
    return [root(g) for g in truth]


def _quantiles(values: list[float]) -> str:
    q10, q50, q90 = np.percentile(values, [10, 50, 90]).tolist()
    return f"{q10:.2f} / {q50:.2f} / {q90:.2f}"


def link_table(docs: Sequence[Doc], truth: Sequence[object], a: Assignment) -> list[str]:
    """The lines of the table of the links ``a`` made (a document to the match it joined), across
    generator groups and inside one, read with the text measures of :func:`text_likeness`."""
    links = [(k, j) for k, j in enumerate(a.duplicate_of.tolist()) if j >= 0]
    kinds = (
        ("across generator groups", [(k, j) for k, j in links if truth[k] != truth[j]]),
        ("inside one group", [(k, j) for k, j in links if truth[k] == truth[j]]),
    )
    verify = VerifyConfig()
    threshold = verify.min_jaccard
    lines = [
        "",
        f"Links the clustering made (a document to the match it joined): {len(links):,}. Read with measures that",
        "owe nothing to neardup's fingerprints or sketches: the exact Jaccard similarity of the 3-grams of the two",
        "texts' letters and digits (what neardup's sketch estimates, after its normalisation, from a sample of",
        "them), and the Jaccard similarity and containment of the texts' 5-grams (punctuation included). Up to",
        f"{SAMPLE:,} links of each kind, a seeded sample; 10th percentile / median / 90th percentile. neardup",
        f"accepts a pair at an estimated 3-gram Jaccard of {threshold} or more (down to {verify.near_jaccard} when",
        f"the fingerprints are within {verify.max_distance} bits).",
        "",
        f"| links | count | sampled | 3-gram Jaccard | sampled at {threshold} or more | 5-gram Jaccard "
        "| 5-gram containment | neardup's similarity |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for seed, (label, kind) in enumerate(kinds):
        sample = random.Random(seed).sample(kind, min(SAMPLE, len(kind)))
        if not sample:
            lines.append(f"| {label} | 0 | 0 | | | | | |")
            continue
        content = [(letters_and_digits(docs[k].text), letters_and_digits(docs[j].text)) for k, j in sample]
        tri = [text_likeness(x, y, 3)[0] for x, y in content]
        five = [text_likeness(docs[k].text, docs[j].text, 5) for k, j in sample]
        alike = sum(v >= threshold for v in tri)
        lines.append(
            f"| {label} | {len(kind):,} | {len(sample):,} | {_quantiles(tri)} | {alike / len(sample):.0%} "
            f"| {_quantiles([f[0] for f in five])} | {_quantiles([f[1] for f in five])} "
            f"| {_quantiles([float(a.similarity[k]) for k, _ in sample])} |"
        )
    return lines


def joined_scores(docs: Sequence[Doc], truth: Sequence[object], a: Assignment, false_pairs: int) -> list[str]:
    """The lines of the scores against the generator's groups joined wherever a link of ``a`` across two of them
    reaches neardup's threshold by the exact 3-gram Jaccard of the texts' letters and digits (every such link
    read, not a sample); ``false_pairs`` is the count against the groups as generated."""
    threshold = VerifyConfig().min_jaccard
    across = [(k, j) for k, j in enumerate(a.duplicate_of.tolist()) if j >= 0 and truth[k] != truth[j]]
    alike = [
        (k, j)
        for k, j in across
        if text_likeness(letters_and_digits(docs[k].text), letters_and_digits(docs[j].text), 3)[0] >= threshold
    ]
    s = pairwise_scores(joined(truth, alike), a.cluster.tolist())
    return [
        "",
        f"Against the generator's groups joined wherever a link across two of them reaches {threshold} by the "
        f"exact 3-gram Jaccard ({len(alike):,} of the {len(across):,} links across groups, all read): precision "
        f"{s.precision:.4f}, recall {s.recall:.4f}; {s.fp:,} false pair{'' if s.fp == 1 else 's'}, against "
        f"{false_pairs:,} with the groups "
        "as generated. The join follows only links the clustering made: this says how many of the false pairs "
        "come from links between texts as alike as neardup's threshold asks, not what the precision would be on "
        "a corpus whose groups never share text.",
    ]


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
    lines += link_table(docs, truth, a)
    lines += joined_scores(docs, truth, a, everything.fp)
    write_results(RESULTS / f"cluster_truth_{n // 1000}k.md", lines)


if __name__ == "__main__":
    main()

"""Fingerprinting throughput vs ``jieba.lcut`` alone, same corpus, same run.

The target corpus is People's Daily (issue 3); Tang poems (short, Traditional, rare characters, so
most of jieba's time goes to its HMM) are a second, harder case. Before timing, the bench checks
that neardup's segmentation gives ``lcut``'s words on every text of both.

Run: ``python -m bench.throughput`` → bench/results/throughput.md
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import jieba

from bench.machine import RESULTS, describe, no_options, write_results
from neardup.cli.offline import InputDoc, fingerprint_all
from neardup.config import Settings
from neardup.evaluation.corpus import load_peoples_daily, load_tang_editions
from neardup.incoming.documents import Incoming
from neardup.ingest.fingerprint import FingerprintConfig, Fingerprinter
from neardup.ingest.normalize import normalize

OUT = RESULTS / "throughput.md"
POEM_SAMPLE = 20_000


def _median_seconds(run: Callable[[], object], repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _table(rows: dict[str, Callable[[], object]], chars: int) -> list[str]:
    results = {name: _median_seconds(run) for name, run in rows.items()}
    base = next(iter(results.values()))
    lines = ["| what | seconds | chars/s | × jieba.lcut |", "|---|---|---|---|"]
    for name, secs in results.items():
        lines.append(f"| {name} | {secs:.2f} | {chars / secs:,.0f} | {base / secs:.2f} |")
    return lines


def _check_identical(texts: list[str]) -> int:
    seg = Fingerprinter.default().segmenter
    differ = sum(seg.words(t) != jieba.lcut(t) for t in texts)
    if differ:
        raise SystemExit(f"neardup's segmentation differs from jieba.lcut on {differ} texts")
    return len(texts)


def main() -> None:
    no_options(__doc__)
    articles = load_peoples_daily()
    texts = [a.text for a in articles]
    titles = [a.title for a in articles]
    first, second = load_tang_editions(Settings.from_env().home / "npm")
    poems = (first + second)[:: max(1, (len(first) + len(second)) // POEM_SAMPLE)][:POEM_SAMPLE]
    poem_docs = [(p.text, p.title) for p in poems]
    jieba.initialize()
    checked = _check_identical(texts) + _check_identical([p.text for p in poems])
    fp16 = Fingerprinter.default()
    fp1 = Fingerprinter.default(FingerprintConfig(seeds=1))
    seg = fp16.segmenter
    docs = [InputDoc(k, Incoming(str(k), t, ti)) for k, (t, ti) in enumerate(zip(texts, titles, strict=True))]
    fingerprint_all(docs[:50], 2, False)  # warm the pool's imports once
    news_rows: dict[str, Callable[[], object]] = {
        "jieba.lcut alone (raw text)": lambda: [jieba.lcut(t) for t in texts],
        "neardup's precise-mode cut alone (the same words as lcut)": lambda: [seg.words(t) for t in texts],
        "neardup segmentation + POS (normalise, cut, tags, stopwords)": lambda: [
            seg.segment(normalize(t, True)) for t in texts
        ],
        "neardup fingerprint, 1 seed (segment + weights + hash + sketch)": lambda: [
            fp1.fingerprint(t, ti) for t, ti in zip(texts, titles, strict=True)
        ],
        "neardup fingerprint, 16 seeds (default), one document per call": lambda: [
            fp16.fingerprint(t, ti) for t, ti in zip(texts, titles, strict=True)
        ],
        "**neardup fingerprint_many, 16 seeds (batch API: cluster, index, service)**": lambda: fp16.fingerprint_many(
            list(zip(texts, titles, strict=True))
        ),
        "neardup fingerprint, 16 seeds, 2 processes": lambda: fingerprint_all(docs, 2, False),
    }
    poem_rows: dict[str, Callable[[], object]] = {
        "jieba.lcut alone (raw text)": lambda: [jieba.lcut(p.text) for p in poems],
        "neardup's precise-mode cut alone (the same words as lcut)": lambda: [seg.words(p.text) for p in poems],
        "neardup fingerprint_many, 16 seeds": lambda: fp16.fingerprint_many(poem_docs),
    }
    lines = [
        "# Fingerprinting throughput",
        "",
        f"Machine: {describe()}",
        "Command: `python -m bench.throughput`; median of 3 runs per row, all rows in one process.",
        f"Before timing: neardup's cut gave exactly `jieba.lcut`'s words on all {checked:,} texts below.",
        "",
        f"## People's Daily 1998-01 ({len(texts)} articles, {sum(map(len, texts)):,} characters): the target",
        "",
        *_table(news_rows, sum(map(len, texts))),
        "",
        f"## Tang poems ({len(poems):,} of both editions, {sum(len(p.text) for p in poems):,} characters)",
        "",
        "Short Traditional texts full of rare characters: most of jieba's time goes to its HMM (neardup",
        "runs an exact, faster copy of it), and neardup adds Traditional → Simplified folding.",
        "",
        *_table(poem_rows, sum(len(p.text) for p in poems)),
    ]
    write_results(OUT, lines)


if __name__ == "__main__":
    main()

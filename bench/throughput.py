"""Fingerprinting throughput vs ``jieba.lcut`` alone, on the People's Daily corpus, same run.

Run: ``python -m bench.throughput`` → bench/results/throughput.md
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import jieba
from neardup.ingest.fingerprint import FingerprintConfig, Fingerprinter
from neardup.ingest.normalize import normalize

from bench.machine import describe, write_results
from neardup.commands import InputDoc, fingerprint_all
from neardup.evaluation.corpus import load_peoples_daily

OUT = Path(__file__).parent / "results" / "throughput.md"


def _median_seconds(run: object, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    articles = load_peoples_daily()
    texts = [a.text for a in articles]
    titles = [a.title for a in articles]
    chars = sum(len(t) for t in texts)
    jieba.initialize()
    fp16 = Fingerprinter.default()
    fp1 = Fingerprinter.default(FingerprintConfig(seeds=1))
    seg = fp16.segmenter
    docs = [InputDoc(k, str(k), t, ti) for k, (t, ti) in enumerate(zip(texts, titles, strict=True))]
    fingerprint_all(docs[:50], 2, False)  # warm the pool's imports once
    rows = {
        "jieba.lcut alone (raw text)": lambda: [jieba.lcut(t) for t in texts],
        "neardup segmentation + POS (normalise, lcut, tags, stopwords)": lambda: [
            seg.segment(normalize(t, True)) for t in texts
        ],
        "neardup fingerprint, 1 seed (segment + weights + hash + sketch)": lambda: [
            fp1.fingerprint(t, ti) for t, ti in zip(texts, titles, strict=True)
        ],
        "neardup fingerprint, 16 seeds (default)": lambda: [
            fp16.fingerprint(t, ti) for t, ti in zip(texts, titles, strict=True)
        ],
        "neardup fingerprint_many, 16 seeds (batch API: cluster, index, service)": lambda: fp16.fingerprint_many(
            list(zip(texts, titles, strict=True))
        ),
        "neardup fingerprint, 16 seeds, 2 processes": lambda: fingerprint_all(docs, 2, False),
    }
    results = {name: _median_seconds(run) for name, run in rows.items()}
    base = results["jieba.lcut alone (raw text)"]
    lines = [
        "# Fingerprinting throughput",
        "",
        f"Machine: {describe()}",
        f"Corpus: People's Daily 1998-01, {len(texts)} articles, {chars} characters; median of 3 runs.",
        "Command: `python -m bench.throughput`",
        "",
        "| what | seconds | chars/s | × jieba.lcut |",
        "|---|---|---|---|",
    ]
    for name, secs in results.items():
        lines.append(f"| {name} | {secs:.2f} | {chars / secs:,.0f} | {base / secs:.2f} |")
    write_results(OUT, lines)


if __name__ == "__main__":
    main()

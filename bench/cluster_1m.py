"""Batch clustering of 1,000,000 (or 10,000,000) fingerprints (random + planted near-duplicates) vs
seomoz simhash-py's ``find_all`` (the ``simhash-pybind`` build), same run, each in its own process so
peak memory is its own; and the candidate stage of the offline clustering with all 16 seeds
(:func:`neardup.ingest.cluster.candidate_pairs` over 64 (seed, block) tables).

Run: ``python -m bench.cluster_1m`` → bench/results/cluster_1m.md;
``python -m bench.cluster_1m --docs 10000000 --planted 100000`` → bench/results/cluster_10m.md
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np

from bench.machine import RESULTS, describe, out_flag, out_option, write_results

SEEDS = 16


def _flips(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` masks of 0-3 random bits."""
    masks = np.zeros(count, dtype=np.uint64)
    bits = rng.integers(0, 4, size=count)
    for j in range(3):
        chosen = bits > j
        masks[chosen] |= np.uint64(1) << rng.integers(0, 64, size=int(chosen.sum())).astype(np.uint64)
    return masks


def make_data(n: int, planted: int, seeds: int = 1, seed: int = 42) -> tuple[np.ndarray, np.ndarray]:
    """n random fingerprints (``seeds`` per document), the last ``planted`` of which are copies of earlier
    ones with 0-3 bit flips under every seed. (Two flips may hit one bit: then fewer differ.)"""
    rng = np.random.default_rng(seed)
    fps = rng.integers(0, 2**64 - 1, size=(n, seeds), dtype=np.uint64, endpoint=True)
    sources = rng.choice(n - planted, size=planted, replace=False)
    for s in range(seeds):
        fps[n - planted :, s] = fps[sources, s] ^ _flips(rng, planted)
    return (fps[:, 0].copy() if seeds == 1 else fps), sources


def run_one(method: str, n: int, planted: int, max_bucket: int | None) -> dict[str, float]:
    if method == "candidates":
        from neardup.ingest.cluster import DEFAULT_MAX_BUCKET, DEFAULT_MIN_SHARED, candidate_pairs

        fps16, sources = make_data(n, planted, SEEDS)
        bucket = DEFAULT_MAX_BUCKET if max_bucket is None else max_bucket
        start = time.perf_counter()
        i, j = candidate_pairs(fps16, max_bucket=bucket, min_shared=DEFAULT_MIN_SHARED)
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before the check below
        planted_pairs = sources.astype(np.int64) * n + np.arange(n - planted, n, dtype=np.int64)
        found = int(np.isin(planted_pairs, i * n + j).sum())
        return {"seconds": seconds, "found": found, "peak_mib": peak, "pairs": int(i.size), "max_bucket": bucket}
    fps, sources = make_data(n, planted)
    if method == "neardup":
        from neardup.ingest.cluster import cluster_fingerprints
    else:
        import simhash
    start = time.perf_counter()  # imports are not timed
    if method == "neardup":
        a = cluster_fingerprints(fps, max_distance=3)
        found = int(sum(a.cluster[n - planted + k] == a.cluster[src] for k, src in enumerate(sources)))
    else:
        pairs = simhash.find_all([int(x) for x in fps], 6, 3)  # 6 blocks: k+1 = 4 needed, 6 is its usual
        linked = {(min(int(a), int(b)), max(int(a), int(b))) for a, b in pairs}
        found = int(
            sum(
                (min(int(fps[s]), int(fps[n - planted + k])), max(int(fps[s]), int(fps[n - planted + k]))) in linked
                or fps[s] == fps[n - planted + k]
                for k, s in enumerate(sources)
            )
        )
    seconds = time.perf_counter() - start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "found": found, "peak_mib": peak_mib}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("method", nargs="?", help="run one method in this process (used by the bench itself)")
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--planted", type=int, default=10_000)
    parser.add_argument("--no-candidates", action="store_true", help="skip the 16-seed candidate stage")
    out_option(parser, None)
    parser.add_argument(
        "--max-bucket",
        type=int,
        help="the candidate stage's max_bucket (default: the clustering's): larger (seed, block) buckets are split",
    )
    args = parser.parse_args()
    n, planted = args.docs, args.planted
    if args.method:
        print(json.dumps(run_one(args.method, n, planted, args.max_bucket)))
        return
    results = {}
    for method in ("neardup", "simhash-pybind", *(() if args.no_candidates else ("candidates",))):
        proc = subprocess.run(
            [sys.executable, "-m", "bench.cluster_1m", method, "--docs", str(n), "--planted", str(planted)]
            + ([] if args.max_bucket is None else ["--max-bucket", str(args.max_bucket)]),
            capture_output=True,
            text=True,
            check=True,
        )
        results[method] = json.loads(proc.stdout.strip().splitlines()[-1])
    base = results["simhash-pybind"]["seconds"]
    label = f"{n // 1_000_000}m" if n % 1_000_000 == 0 else str(n)
    command = "python -m bench.cluster_1m" + ("" if n == 1_000_000 else f" --docs {n} --planted {planted}")
    command += " --no-candidates" if args.no_candidates else ""
    command += "" if args.max_bucket is None else f" --max-bucket {args.max_bucket}"
    command += out_flag(args.out, None)
    cand = results.pop("candidates", None)
    lines = [
        f"# Batch clustering, {n:,} fingerprints (k = 3)",
        "",
        f"Machine: {describe()}",
        f"Data: {n:,} random 64-bit fingerprints, {planted:,} of them planted within 0-3 bits of another.",
        "Each method in its own process (data generation and imports in peak memory, not in time).",
        f"Command: `{command}`",
        "",
        "| method | seconds | planted pairs found | peak RSS MiB | speed vs simhash-pybind |",
        "|---|---|---|---|---|",
    ]
    for name, r in results.items():
        speed = base / r["seconds"]
        lines.append(
            f"| {name} | {r['seconds']:.2f} | {r['found']:,}/{planted:,} | {r['peak_mib']:.0f} | {speed:.2f}× |"
        )
    lines += (
        []
        if cand is None
        else [
            "",
            f"Candidate stage of the record clustering, {SEEDS} seeds per document ({SEEDS * 4} (seed, block) tables,",
            "each document keeping its 64 best-sharing candidates; the planted copies differ by 0-3 bits under",
            f"every seed). A (seed, block) bucket holds {n / 65536:.1f} documents on average; one of more than",
            "`max_bucket` is split by the 12-bit sub-blocks of the other 48 bits (pairs in it must share one too):",
            "",
            "| documents | max_bucket | seconds | candidate pairs | planted pairs among them | peak RSS MiB |",
            "|---|---|---|---|---|---|",
            f"| {n:,} | {cand['max_bucket']} | {cand['seconds']:.2f} | {cand['pairs']:,} | "
            f"{cand['found']:,}/{planted:,} | {cand['peak_mib']:.0f} |",
        ]
    )
    write_results(RESULTS / (args.out or f"cluster_{label}.md"), lines)


if __name__ == "__main__":
    main()

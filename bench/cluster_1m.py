"""Batch clustering of 1,000,000 fingerprints (random + planted near-duplicates) vs seomoz
simhash-py's ``find_all`` (the ``simhash-pybind`` build), same run, each in its own process so peak
memory is its own.

Run: ``python -m bench.cluster_1m`` → bench/results/cluster_1m.md
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bench.machine import describe, write_results

OUT = Path(__file__).parent / "results" / "cluster_1m.md"
N = 1_000_000
PLANTED = 10_000


def make_data(seed: int = 42) -> tuple[np.ndarray, np.ndarray]:
    """N random fingerprints, the last PLANTED of which are copies of earlier ones with 0-3 bit flips."""
    rng = np.random.default_rng(seed)
    fps = rng.integers(0, 2**64 - 1, size=N, dtype=np.uint64, endpoint=True)
    sources = rng.choice(N - PLANTED, size=PLANTED, replace=False)
    for k, src in enumerate(sources):
        v = fps[src]
        for f in rng.choice(64, size=int(rng.integers(0, 4)), replace=False):
            v ^= np.uint64(1) << np.uint64(int(f))
        fps[N - PLANTED + k] = v
    return fps, sources


def run_one(method: str) -> dict[str, float]:
    fps, sources = make_data()
    if method == "neardup":
        from neardup.ingest.cluster import cluster_fingerprints
    else:
        import simhash
    start = time.perf_counter()  # imports are not timed
    if method == "neardup":
        a = cluster_fingerprints(fps, max_distance=3)
        found = int(sum(a.cluster[N - PLANTED + k] == a.cluster[src] for k, src in enumerate(sources)))
    else:
        pairs = simhash.find_all([int(x) for x in fps], 6, 3)  # 6 blocks: k+1 = 4 needed, 6 is its usual
        linked = {(min(int(a), int(b)), max(int(a), int(b))) for a, b in pairs}
        found = int(
            sum(
                (min(int(fps[s]), int(fps[N - PLANTED + k])), max(int(fps[s]), int(fps[N - PLANTED + k]))) in linked
                or fps[s] == fps[N - PLANTED + k]
                for k, s in enumerate(sources)
            )
        )
    seconds = time.perf_counter() - start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "found": found, "peak_mib": peak_mib}


def main() -> None:
    if len(sys.argv) > 1:
        print(json.dumps(run_one(sys.argv[1])))
        return
    results = {}
    for method in ("neardup", "simhash-pybind"):
        proc = subprocess.run(
            [sys.executable, "-m", "bench.cluster_1m", method], capture_output=True, text=True, check=True
        )
        results[method] = json.loads(proc.stdout.strip().splitlines()[-1])
    base = results["simhash-pybind"]["seconds"]
    lines = [
        "# Batch clustering, 1,000,000 fingerprints (k = 3)",
        "",
        f"Machine: {describe()}",
        f"Data: {N} random 64-bit fingerprints, {PLANTED} of them planted within 0-3 bits of another.",
        "Each method in its own process (data generation and imports in peak memory, not in time).",
        "Command: `python -m bench.cluster_1m`",
        "",
        "| method | seconds | planted pairs found | peak RSS MiB | speed vs simhash-pybind |",
        "|---|---|---|---|---|",
    ]
    for name, r in results.items():
        speed = base / r["seconds"]
        lines.append(f"| {name} | {r['seconds']:.2f} | {r['found']}/{PLANTED} | {r['peak_mib']:.0f} | {speed:.2f}× |")
    write_results(OUT, lines)


if __name__ == "__main__":
    main()

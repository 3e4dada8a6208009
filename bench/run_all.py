"""Run every benchmark in turn (``make bench``); each writes its own results file."""

from __future__ import annotations

import subprocess
import sys

BENCHES = [
    ["bench.throughput"],
    ["bench.cluster_1m"],
    ["bench.cluster_1m", "--docs", "10000000", "--planted", "100000", "--no-candidates"],
    ["bench.lookup_latency"],
    ["bench.lookup_real"],
    ["bench.block_encoding"],
    ["bench.block_query", "--sizes", "100000,300000,1000000"],
    ["bench.service_eval"],
    ["bench.largest_request"],
    ["bench.scale"],
    ["bench.ingest_profile"],
    ["bench.merge_policy"],
]


def main() -> None:
    for args in BENCHES:
        print(f"== {' '.join(args)}", flush=True)
        subprocess.run([sys.executable, "-m", *args], check=True)


if __name__ == "__main__":
    main()

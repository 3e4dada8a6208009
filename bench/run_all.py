"""Run every benchmark in turn (``make bench``); each writes its own results file."""

from __future__ import annotations

import subprocess
import sys

BENCHES = [
    "bench.throughput",
    "bench.cluster_1m",
    "bench.lookup_latency",
    "bench.lookup_real",
    "bench.service_eval",
    "bench.largest_request",
]


def main() -> None:
    for module in BENCHES:
        print(f"== {module}", flush=True)
        subprocess.run([sys.executable, "-m", module], check=True)


if __name__ == "__main__":
    main()

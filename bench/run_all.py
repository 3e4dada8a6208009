"""Write the results files again: every one (``make bench``, many hours on 2 cores) or those named.

    python -m bench.run_all                      # all, in the order below
    python -m bench.run_all scale.md ingest.md   # only these

``BENCHES`` is where each file of ``bench/results`` is paired with the command that writes it, exactly as the
file's own ``Command:`` line states it (``tests/test_bench_commands.py`` holds the two together).
"""

from __future__ import annotations

import argparse
import subprocess
import sys

#: results file -> the arguments of ``python -m`` that write it; the corpus files a bench needs are written on its
#: first use and reused after
BENCHES: dict[str, str] = {
    "eval-table.md": "bench.eval_table",
    "throughput.md": "bench.throughput",
    "cluster_1m.md": "bench.cluster_1m",
    "cluster_10m.md": "bench.cluster_1m --docs 10000000 --planted 100000",
    "cluster_truth_20k.md": "bench.cluster_truth --docs 20000",
    "cluster_truth_1000k.md": "bench.cluster_truth --docs 1000000",
    "lookup_latency.md": "bench.lookup_latency",
    "lookup_latency_real.md": "bench.lookup_real",
    "field_cost.md": "bench.field_cost --docs 48000 --rounds 5",
    "block_encoding.md": "bench.block_encoding --sizes 100000,300000,1000000 --segments 10",
    "block_query.md": "bench.block_query --sizes 100000,300000,1000000 --rounds 3",
    "service_eval.md": "bench.service_eval",
    "largest_request.md": "bench.largest_request",
    "ingest.md": "bench.ingest --docs 20000 --refresh-docs 100000 --rounds 3",
    "ingest_news.md": "bench.ingest --corpus news --rounds 5",
    "scale.md": "bench.scale --docs 1000000 --flag-in-es",
    "min_shared.md": "bench.min_shared --docs 1000000 --ingest 50000 --rounds 4 --round-docs 6000",
    "late_peers.md": "bench.late_peers --docs 1000000 --ingest 50000 --rounds 3",
    "key_width.md": "bench.key_width",
    "ingest_profile.md": "bench.ingest_profile",
    "merge_policy.md": "bench.merge_policy --preload 0 --ingest 20000 --rounds 3 --corpus 100000",
    "merge_policy_1m.md": (
        "bench.merge_policy --preload 950000 --ingest 5000 --rounds 1 --corpus 1000000 --out merge_policy_1m.md"
    ),
    "dedupe_100k.md": "bench.dedupe_scale --docs 100000 --runs two,in-es,in-es-kill",
    "dedupe_100k_workers.md": "bench.dedupe_scale --docs 100000 --runs two,one --out dedupe_100k_workers.md",
    "dedupe_1000k.md": "bench.dedupe_scale --docs 1000000 --runs two",
    "dedupe_1000k_one.md": "bench.dedupe_scale --docs 1000000 --runs one --out dedupe_1000k_one.md",
    "dedupe_1000k_in_es.md": "bench.dedupe_scale --docs 1000000 --runs in-es --out dedupe_1000k_in_es.md",
    "node_loss.md": "bench.node_loss",
}


def command(results_file: str) -> str:
    """The command line that writes ``results_file``, as its ``Command:`` line gives it.

    >>> command("scale.md")
    'python -m bench.scale --docs 1000000 --flag-in-es'
    """
    return f"python -m {BENCHES[results_file]}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "files", nargs="*", metavar="FILE", help=f"results files to write (default: all {len(BENCHES)})"
    )
    args = parser.parse_args(argv)
    unknown = [f for f in args.files if f not in BENCHES]
    if unknown:
        parser.error(f"no bench writes {', '.join(unknown)}; known: {', '.join(BENCHES)}")
    for name in args.files or BENCHES:
        print(f"== {name}: {command(name)}", flush=True)
        subprocess.run([sys.executable, "-m", *BENCHES[name].split()], check=True)


if __name__ == "__main__":
    main()

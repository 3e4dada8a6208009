"""Pairwise precision and recall of neardup, its ablations and the baselines on the labelled sets built from real
text (:func:`neardup.evaluation.report.run_eval`, what ``neardup eval`` prints), written with the machine noted.

Run: ``python -m bench.eval_table`` → bench/results/eval-table.md, and the per-seed counts as eval.json beside it
"""

from __future__ import annotations

import argparse

from bench.machine import RESULTS, describe, write_results
from neardup.config import Settings
from neardup.evaluation.report import DEFAULT_GROUPS, DEFAULT_SEEDS, DEFAULT_SINGLES, run_eval


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    report = run_eval("all", list(DEFAULT_SEEDS), DEFAULT_GROUPS, DEFAULT_SINGLES, [], Settings.from_env().home)
    lines = [
        "# Evaluation: pairwise precision / recall on labelled sets from real text",
        "",
        f"Machine: {describe()}",
        "",
        "Command: `python -m bench.eval_table`, the sets and methods of "
        "`neardup eval --output bench/results/eval.json` "
        f'({len(DEFAULT_SEEDS)} seeds per set; "min" columns are the worst seed)',
        report.table(),
    ]
    write_results(RESULTS / "eval-table.md", lines)  # the table made first: its JSON is never newer than it
    write_results(RESULTS / "eval.json", [report.json_text()])


if __name__ == "__main__":
    main()

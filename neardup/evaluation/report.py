"""Build the sets, run the methods, print one table per set (seeds averaged, worst seed shown)."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neardup.ingest.fingerprint import Fingerprinter
from neardup.ingest.segment import Segmenter

from .corpus import load_peoples_daily, load_tang_editions
from .methods import Result, prepare, run_methods
from .record_methods import run_metadata_methods, run_record_methods
from .record_sets import petition_rows, tagged_docs
from .sets import Doc, news_set, poem_set

__all__ = ["DEFAULT_GROUPS", "DEFAULT_SEEDS", "DEFAULT_SINGLES", "Report", "run_eval"]

#: what ``neardup eval`` builds unless told otherwise: one set per seed; per news set, originals with variants and
#: singletons
DEFAULT_SEEDS = (1, 2, 3)
DEFAULT_GROUPS = 300
DEFAULT_SINGLES = 600


@dataclass
class Report:
    results: dict[str, dict[int, list[Result]]] = field(default_factory=lambda: defaultdict(dict))
    sizes: dict[str, dict[int, int]] = field(default_factory=lambda: defaultdict(dict))

    def table(self) -> str:
        lines = []
        for set_name, by_seed in self.results.items():
            seeds = sorted(by_seed)
            sizes = ", ".join(f"seed {s}: {self.sizes[set_name][s]} docs" for s in seeds)
            lines.append(f"\n## {set_name} ({sizes})\n")
            lines.append("| method | precision | recall | F1 | min P | min R | seconds |")
            lines.append("|---|---|---|---|---|---|---|")
            names = [r.method for r in by_seed[seeds[0]]]
            for k, name in enumerate(names):
                rs = [by_seed[s][k] for s in seeds]
                p = sum(r.scores.precision for r in rs) / len(rs)
                r_ = sum(r.scores.recall for r in rs) / len(rs)
                f = sum(r.scores.f1 for r in rs) / len(rs)
                lines.append(
                    f"| {name} | {p:.3f} | {r_:.3f} | {f:.3f} | {min(r.scores.precision for r in rs):.3f} "
                    f"| {min(r.scores.recall for r in rs):.3f} | {sum(r.seconds for r in rs) / len(rs):.1f} |"
                )
        return "\n".join(lines)

    def json_text(self) -> str:
        """:meth:`as_json` as indented JSON text."""
        return json.dumps(self.as_json(), ensure_ascii=False, indent=2)

    def as_json(self) -> dict[str, Any]:
        return {
            name: {
                str(seed): [
                    {
                        "method": r.method,
                        "tp": r.scores.tp,
                        "fp": r.scores.fp,
                        "fn": r.scores.fn,
                        "precision": r.scores.precision,
                        "recall": r.scores.recall,
                        "seconds": r.seconds,
                    }
                    for r in results
                ]
                for seed, results in by_seed.items()
            }
            for name, by_seed in self.results.items()
        }


def run_eval(which: str, seeds: list[int], groups: int, singles: int, only: list[str], home: Path) -> Report:
    segmenter = Segmenter.default()
    report = Report()
    builders: dict[str, Any] = {}
    if which in {"news", "all"}:
        articles = load_peoples_daily()
        builders["news (People's Daily 1998-01, reprint variants + boilerplate hard negatives)"] = lambda s: news_set(
            articles, s, groups, singles
        )
    if which in {"poems", "all"}:
        first, second = load_tang_editions(home / "npm")
        builders["poems (全唐詩 vs 御定全唐詩, short texts)"] = lambda s: poem_set(first, second, s)
    fp = Fingerprinter.default()
    articles_for_records = load_peoples_daily() if which in {"records", "metadata", "all"} else []
    record_sets: dict[str, tuple[Any, Any]] = {}
    if which in {"records", "all"}:
        record_sets["records (petition rows from People's Daily: short fields, nulls, shared office notice)"] = (
            lambda s: petition_rows(articles_for_records, s),
            run_record_methods,
        )
    if which in {"metadata", "all"}:
        record_sets["metadata (tagged documents: reprints vs template look-alikes with other tags)"] = (
            lambda s: tagged_docs(articles_for_records, s),
            run_metadata_methods,
        )
    for name, (build_rows, run) in record_sets.items():
        for seed in seeds:
            rows = build_rows(seed)
            print(f"[{name[:8]} seed {seed}] {len(rows)} records", file=sys.stderr)
            report.results[name][seed] = run(rows, fp, only or None)
            report.sizes[name][seed] = len(rows)
    for name, build in builders.items():
        for seed in seeds:
            docs: list[Doc] = build(seed)
            print(f"[{name[:5]} seed {seed}] {len(docs)} documents", file=sys.stderr)
            prepared = prepare(docs, segmenter)
            report.results[name][seed] = run_methods(prepared, only=only or None)
            report.sizes[name][seed] = len(docs)
    return report

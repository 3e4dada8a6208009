"""Batch ``neardup dedupe`` of an index filled without neardup, at up to a million documents.

The :mod:`bench.corpus` documents (text only) are bulk-loaded into a fresh index; then ``neardup dedupe``
runs as a user would run it, in its own process: once with 1 and once with 2 fingerprinting processes
(each on a fresh copy of the index), once fingerprinting with the cluster's ``neardup`` processor
(``--fingerprint-in-es``), and once interrupted (killed halfway through fingerprinting) and run again.
Reported: wall time and the fingerprint stage's, peak RSS of the command's process tree, precision/recall
of the clusters against the generator's groups, and whether the interrupted-and-resumed run ends with
exactly the clusters of the uninterrupted one.

Run: ``python -m bench.dedupe_scale --docs 1000000`` → bench/results/dedupe_1000k.md; ``--runs`` picks the runs, in
order (2 or 1 fingerprinting processes, in Elasticsearch, and either killed; the default is ``two``), and ``--out``
names another file for them (``bench/run_all.py`` lists the ones kept)
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import NamedTuple

import psutil
from elasticsearch import Elasticsearch, helpers

from bench.corpus import GENERATOR, Doc, corpus_path, read_corpus
from bench.harness import bulk_load, elasticsearch
from bench.machine import RESULTS, describe, out_flag, out_option, write_results
from neardup.evaluation.metrics import pairwise_scores
from neardup.mappings import schema


def _load(client: Elasticsearch, index: str, docs: Sequence[Doc]) -> float:
    client.indices.delete(index=index, ignore_unavailable=True)
    client.indices.create(index=index)
    return bulk_load(client, index, ({"_index": index, "_id": d.id, "text": d.text} for d in docs))


class Ran(NamedTuple):
    """One ``neardup dedupe`` process: wall seconds, peak RSS of its tree, exit code, the seconds its fingerprint
    stage took as it reported them (None when it was killed or failed), the last line of its error output when it
    failed."""

    seconds: float
    peak: int
    code: int | None
    fingerprint_seconds: float | None
    failure: str


def _dedupe(es_url: str, index: str, workers: int, in_es: bool, kill_after: float | None = None) -> Ran:
    """Run ``neardup dedupe``; with ``kill_after`` the command is killed (SIGKILL, whole tree) after that many
    seconds."""
    env = os.environ | {"NEARDUP_ES_URL": es_url}
    where = "--fingerprint-in-es" if in_es else "--fingerprint-here"
    with tempfile.TemporaryFile(mode="w+") as errors, tempfile.TemporaryFile(mode="w+") as report:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "neardup", "dedupe", index, "--workers", str(workers), where],
            env=env,
            stdout=report,
            stderr=errors,
        )
        peak = _watch(proc, t0, kill_after)
        seconds = time.perf_counter() - t0
        errors.seek(0)
        lines = [line.strip() for line in errors.read().replace("\r", "\n").splitlines() if line.strip()]
        report.seek(0)
        stage = re.search(r"fingerprint_seconds=([0-9.]+)", report.read())
    failure = lines[-1] if proc.returncode not in (0, None, -9) and lines else ""
    return Ran(seconds, peak, proc.returncode, float(stage[1]) if stage else None, failure)


def _watch(proc: subprocess.Popen[bytes], t0: float, kill_after: float | None) -> int:
    """The peak RSS of ``proc``'s tree until it ends (killed, with the tree, ``kill_after`` s after ``t0``)."""
    root = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in tree))
        except psutil.NoSuchProcess:
            pass
        if kill_after is not None and time.perf_counter() - t0 > kill_after:
            for p in [*root.children(recursive=True), root]:
                p.kill()
            proc.wait()
            break
        time.sleep(0.2)
    return peak


def _clusters(client: Elasticsearch, index: str) -> dict[str, str]:
    client.indices.refresh(index=index)
    hits = helpers.scan(client, index=index, _source=[schema.path(schema.CLUSTER)], size=5000)
    return {h["_id"]: ((h["_source"].get(schema.ROOT) or {}).get(schema.CLUSTER) or "") for h in hits}


#: ``--runs`` keys → (row name, fingerprinting processes, fingerprint in Elasticsearch, killed at this share of
#: the reference run's fingerprint stage or None, the reference run: the uninterrupted run of the same kind)
RUNS: dict[str, tuple[str, int, bool, float | None, str | None]] = {
    "two": ("2 processes", 2, False, None, None),
    "one": ("1 process", 1, False, None, None),
    "in-es": ("in Elasticsearch (the neardup processor)", 1, True, None, None),
    "kill": ("2 processes, killed", 2, False, 0.5, "two"),
    "in-es-kill": ("in Elasticsearch, killed", 1, True, 0.5, "in-es"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument(
        "--runs",
        default="two",
        help=f"comma-separated, in order, of {', '.join(RUNS)}; a killed run needs its uninterrupted one before it",
    )
    out_option(parser, None)
    args = parser.parse_args()
    keys = [k.strip() for k in args.runs.split(",") if k.strip()]
    for k, key in enumerate(keys):
        if key not in RUNS:
            parser.error(f"unknown run {key!r}; choose from {', '.join(RUNS)}")
        reference = RUNS[key][4]
        if reference is not None and reference not in keys[:k]:
            parser.error(f"run {key!r} is timed against run {reference!r}, which must come before it")
    docs = read_corpus(corpus_path(1_000_000), args.docs)  # the first documents of one corpus for every size
    truth = {d.id: d.group for d in docs}
    rows: list[tuple[str, float, int, int | None, float, float, float, str]] = []
    runs: dict[str, dict[str, str]] = {}
    stage: dict[str, float] = {}
    with elasticsearch(port=9285, heap="4g") as (url, es_label):
        client = Elasticsearch(url, request_timeout=120)
        for key in keys:
            name, workers, in_es, kill, reference = RUNS[key]
            index = f"bench-dedupe-{key}"
            load_s = _load(client, index, docs)
            if kill is None or reference is None:
                ran = _dedupe(url, index, workers, in_es)
                seconds, peak, code = ran.seconds, ran.peak, ran.code
                if ran.fingerprint_seconds is not None:
                    stage[key] = ran.fingerprint_seconds
                note = ran.failure or f"fingerprint stage {stage.get(key, 0):.0f} s"
            elif not stage.get(reference):
                raise SystemExit(f"run {reference!r} reported no fingerprint stage, so {key!r} has no time to kill at")
            else:
                # killed halfway through the uninterrupted run's fingerprint stage (counted from the command's
                # start, which takes a few seconds more), then run again to the end
                first = _dedupe(url, index, workers, in_es, kill_after=kill * stage[reference])
                second = _dedupe(url, index, workers, in_es)
                seconds, peak, code = first.seconds + second.seconds, max(first.peak, second.peak), second.code
                note = (
                    f"killed after {first.seconds:.0f} s; the second run took {second.seconds:.0f} s, its fingerprint "
                    f"stage {second.fingerprint_seconds or 0:.0f} s {second.failure}"
                ).strip()
            clusters = _clusters(client, index)
            runs[key] = clusters
            ids = sorted(truth)
            scores = pairwise_scores([truth[i] for i in ids], [clusters.get(i, "") for i in ids])
            rows.append((name, seconds, peak, code, scores.precision, scores.recall, load_s, note))
            client.indices.delete(index=index)
            print(rows[-1], flush=True)
        client.close()
    lines = [
        f"# Batch dedupe of {args.docs:,} documents filled without neardup",
        "",
        f"Machine: {describe()}",
        f"Elasticsearch: {es_label}{', 4 GB heap' if es_label.startswith('embedded') else ''}, 1 shard. "
        f"Corpus: the first {args.docs:,} documents of `python -m bench.corpus` (generator {GENERATOR}).",
        f"Command: `python -m bench.dedupe_scale --docs {args.docs} --runs {','.join(keys)}"
        f"{out_flag(args.out, None)}`; "
        "each run is `neardup dedupe INDEX --workers N` (`--fingerprint-in-es` in the row that says so)",
        "on a fresh bulk-loaded index (text only), in its own process; peak RSS is the command's whole process",
        "tree (the fingerprinting processes included; not Elasticsearch, which fingerprints in the rows that say so).",
        "",
        "| run | wall s | peak RSS MiB | exit | precision | recall | bulk load s | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, seconds, peak, code, p, r, load_s, note in rows:
        lines.append(
            f"| {name} | {seconds:.0f} | {peak / 2**20:,.0f} | {code} | {p:.4f} | {r:.4f} | {load_s:.0f} | {note} |"
        )
    for key in keys:
        reference = RUNS[key][4]
        if reference is not None:
            same = runs[key] == runs[reference]
            lines += [
                "",
                f"{RUNS[key][0]} and resumed vs {RUNS[reference][0]}, uninterrupted: "
                f"{'identical clusters for every document' if same else 'the clusters DIFFER'}.",
            ]
    write_results(RESULTS / (args.out or f"dedupe_{args.docs // 1000}k.md"), lines)


if __name__ == "__main__":
    main()

"""Batch ``neardup dedupe`` of an index filled without neardup, at up to a million documents.

The :mod:`bench.corpus` documents (text only) are bulk-loaded into a fresh index; then ``neardup dedupe``
runs as a user would run it, in its own process: once with 1 and once with 2 fingerprinting processes
(each on a fresh copy of the index), once fingerprinting with the cluster's ``neardup`` processor
(``--fingerprint-in-es``), and once interrupted (killed halfway through fingerprinting) and run again.
Reported: wall time and the fingerprint stage's, peak RSS of the command's process tree, precision/recall
of the clusters against the generator's groups, and whether the interrupted-and-resumed run ends with
exactly the clusters of the uninterrupted one.

Run: ``python -m bench.dedupe_scale --docs 1000000`` → bench/results/dedupe_1000k.md (``--one-process``
adds the run with one fingerprinting process, ``--in-es`` the one fingerprinting in Elasticsearch, ``--kill``
the interrupted one)
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
from pathlib import Path

import psutil
from elasticsearch import Elasticsearch, helpers

from bench.corpus import GENERATOR, Doc, corpus_path, read_corpus
from bench.harness import elasticsearch
from bench.machine import describe, write_results
from neardup.evaluation.metrics import pairwise_scores
from neardup.mappings import schema

RESULTS = Path(__file__).parent / "results"


def _load(client: Elasticsearch, index: str, docs: Sequence[Doc]) -> float:
    client.indices.delete(index=index, ignore_unavailable=True)
    client.indices.create(index=index, settings={"refresh_interval": "-1"})
    t0 = time.perf_counter()
    actions = ({"_index": index, "_id": d.id, "text": d.text} for d in docs)
    for _ in helpers.parallel_bulk(client.options(request_timeout=600), actions, thread_count=2, chunk_size=2000):
        pass
    client.indices.put_settings(index=index, settings={"refresh_interval": None})
    client.indices.refresh(index=index)
    return time.perf_counter() - t0


def _dedupe(
    es_url: str, index: str, workers: int, in_es: bool, kill_after: float | None = None
) -> tuple[float, int, int | None, str]:
    """(seconds, peak RSS of the process tree, exit code, a note) of ``neardup dedupe``; the note is the last line
    of its error output when it failed, else the seconds its fingerprint stage took; with ``kill_after`` the
    command is killed (SIGKILL, whole tree) after that many seconds."""
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
    return seconds, peak, proc.returncode, failure or (f"fingerprint stage {float(stage[1]):.0f} s" if stage else "")


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--one-process", action="store_true", help="also the run with 1 fingerprinting process")
    parser.add_argument("--in-es", action="store_true", help="also the run fingerprinting in Elasticsearch")
    parser.add_argument("--kill", action="store_true", help="also the run killed halfway and run again")
    args = parser.parse_args()
    plan = [
        ("2 processes", 2, False, None),
        *([("1 process", 1, False, None)] if args.one_process else []),
        *([("in Elasticsearch (the neardup processor)", 1, True, None)] if args.in_es else []),
        *([("2, killed", 2, False, 0.4)] if args.kill else []),
    ]
    docs = read_corpus(corpus_path(1_000_000), args.docs)  # the first documents of one corpus for every size
    truth = {d.id: d.group for d in docs}
    rows: list[tuple[str, float, int, int | None, float, float, float, str]] = []
    runs: dict[str, dict[str, str]] = {}
    with elasticsearch(port=9285, heap="4g") as (url, es_label):
        client = Elasticsearch(url, request_timeout=120)
        for name, workers, in_es, kill in plan:
            index = f"bench-dedupe-{workers}-{'k' if kill else 'u'}{'-es' if in_es else ''}"
            load_s = _load(client, index, docs)
            if kill is None:
                seconds, peak, code, note = _dedupe(url, index, workers, in_es)
            else:
                # killed at 40 % of the uninterrupted run's time, then run again to the end
                full = next(r for r in rows if r[0] == "2 processes")[1]
                first, peak1, _, _ = _dedupe(url, index, workers, in_es, kill_after=kill * full)
                second, peak2, code, failure = _dedupe(url, index, workers, in_es)
                seconds, peak = first + second, max(peak1, peak2)
                note = f"killed after {first:.0f}s, the second run took {second:.0f}s {failure}".strip()
            clusters = _clusters(client, index)
            runs[name] = clusters
            ids = sorted(truth)
            scores = pairwise_scores([truth[i] for i in ids], [clusters.get(i, "") for i in ids])
            rows.append((name, seconds, peak, code, scores.precision, scores.recall, load_s, note))
            client.indices.delete(index=index)
            print(rows[-1], flush=True)
        client.close()
    same = runs.get("2, killed") == runs["2 processes"]
    lines = [
        f"# Batch dedupe of {args.docs:,} documents filled without neardup",
        "",
        f"Machine: {describe()}",
        f"Elasticsearch: {es_label}, 4 GB heap, 1 shard. "
        f"Corpus: the first {args.docs:,} documents of `python -m bench.corpus` (generator {GENERATOR}).",
        f"Command: `python -m bench.dedupe_scale --docs {args.docs}{' --one-process' if args.one_process else ''}"
        f"{' --in-es' if args.in_es else ''}{' --kill' if args.kill else ''}`; "
        "each run is `neardup dedupe INDEX --workers N` (`--fingerprint-in-es` in the row that says so)",
        "on a fresh bulk-loaded index (text only), in its own process; peak RSS is the command's whole process",
        "tree (the fingerprinting processes included).",
        "",
        "| run | wall s | peak RSS MiB | exit | precision | recall | bulk load s | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, seconds, peak, code, p, r, load_s, note in rows:
        lines.append(
            f"| {name} | {seconds:.0f} | {peak / 2**20:,.0f} | {code} | {p:.4f} | {r:.4f} | {load_s:.0f} | {note} |"
        )
    if args.kill:
        lines += [
            "",
            f"Interrupted and resumed vs uninterrupted (2 processes): "
            f"{'identical clusters for every document' if same else 'the clusters DIFFER'}.",
        ]
    write_results(RESULTS / f"dedupe_{args.docs // 1000}k.md", lines)


if __name__ == "__main__":
    main()

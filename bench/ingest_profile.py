"""Where the CPU of ingest through the service goes, into an empty index and into one of 950,000 documents.

The ingest half of :mod:`bench.scale` run the same way (``neardup serve`` with 2 workers writing through the
cluster's ``neardup-flag`` pipeline, ``NEARDUP_FLAG_IN_ES=true``; batches of 500 from 2 client threads), with
the node profiled by Java Flight Recorder (``jcmd JFR.start``, default settings) while each phase is written:

- **early**: the first ``--ingest`` documents of the corpus into an empty index;
- **late**: the last ``--ingest`` documents into the index holding the ones in between, bulk-loaded with their
  fingerprints computed beforehand (merges waited for).

Reported per phase: CPU seconds per 1,000 documents of the node, the service's workers and this client
(``psutil``, user + system), and the node's CPU by thread pool (each thread's CPU time from ``jcmd
Thread.print`` before and after the phase, the JIT compilers and garbage collection apart), the search pool
divided further (block-term seeks, the second check, the rest of the block match, the rest of the search)
and the write pool (the processor's fingerprinting, the rest) in proportion to what the pool's own profiled
samples were running (JFR samples threads running Java code, not the compilers or the collector, so its
samples do not measure a pool's CPU; the threads' own times do). Also, from the fingerprints alone: how
many stored block postings a document's 64 (seed, block) tokens reach, against what chance alone gives
(64 × documents / 65,536): each is a candidate the search must check.

Needs the JDK's ``jcmd`` and ``jfr`` beside the ``java`` that runs the node, and an embedded node (not
``NEARDUP_ES_URL``): the profile is of the node's own process.

Run: ``python -m bench.ingest_profile`` → bench/results/ingest_profile.md
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import psutil
from elasticsearch import Elasticsearch

from bench.corpus import GENERATOR, Doc, corpus_path, corpus_records, read_corpus
from bench.harness import (
    Served,
    bulk_load,
    cpu_seconds,
    embedded_node,
    post_in_threads,
    segments_during,
    serve,
    stored_document,
    unwritten,
    wait_for_merges,
)
from bench.machine import RESULTS, describe, out_flag, out_option, write_results
from neardup.es.client import setup_index
from neardup.ingest.bits import BLOCKS, blocks
from neardup.ingest.fingerprint import Record

#: the results file in bench/results unless --out names another
OUT = "ingest_profile.md"
INDEX = "bench-profile"
WARM = "bench-profile-warm"
BATCH = 500

#: the node's thread pools whose CPU is split further by what their profiled samples ran
SPLIT = ("search", "write")
#: (pool, part, test on a sample's frames, top first): within a pool, the first part whose test holds names a
#: sample; a pool's CPU is divided among its parts in proportion to their samples
PARTS: list[tuple[str, str, Callable[[list[str]], bool]]] = [
    ("search", "block-term seeks", lambda f: "BlockMatchQuery.match" in f and "SegmentTermsEnum.seekExact" in f),
    (
        "search",
        "the second check of block matches (sketch doc values, Jaccard bound)",
        lambda f: "BlockMatchQuery.match" in f and "SketchCheck$Leaf.accepts" in f,
    ),
    (
        "search",
        "the rest of the block match (term filters, postings, counting)",
        lambda f: "BlockMatchQuery.match" in f,
    ),
    ("search", "the rest (query set-up, other clauses, doc values of hits, flagging's callbacks)", lambda f: True),
    ("write", "fingerprinting (the processor)", lambda f: "Fingerprinter.fields" in f),
    ("write", "the rest (indexing, the pipeline, bulk handling)", lambda f: True),
]
#: how the other pools are named in the report
POOLS = {
    "merge": "merges",
    "refresh": "refresh",
    "get": "real-time gets (the service's read-back, canonicals)",
    "flush": "flush",
    "transport_worker": "network (HTTP and transport workers)",
    "generic": "generic pool (flagging's continuations)",
    "jit": "JVM: the JIT compilers",
    "gc": "JVM: garbage collection",
    "jvm": "JVM: the other threads of the VM",
}
_POOL = re.compile(r"\]\[([a-z_]+)\]\[T#")
_THREAD = re.compile(r'^"(?P<name>.*)" .*?cpu=(?P<cpu>[0-9.]+)ms .*?nid=(?P<nid>0x[0-9a-f]+)')


def pool_of(thread: str) -> str:
    """The thread pool of an Elasticsearch thread name (``search_worker`` counted as ``search``); ``jit``, ``gc``
    or ``jvm`` for the JVM's own threads."""
    found = _POOL.search(thread)
    if found is not None:
        return "search" if found.group(1) == "search_worker" else found.group(1)
    if thread.startswith("elasticsearch["):
        return "other"
    if "CompilerThread" in thread:
        return "jit"
    return "gc" if thread.startswith(("GC Thread", "G1 ")) else "jvm"


@dataclass(frozen=True)
class Phase:
    name: str
    docs: int
    seconds: float
    #: CPU seconds (user + system) of the node, the service's workers, this process
    node_cpu: float
    workers_cpu: float
    client_cpu: float
    #: the node's CPU seconds by thread pool (``jcmd Thread.print`` before and after)
    pools: dict[str, float]
    #: the profiled samples of the pools in :data:`SPLIT`, by (pool, part)
    samples: Counter[tuple[str, str]]
    segments_mean: float
    segments_most: int

    def per_thousand(self, seconds: float) -> float:
        return 1000 * seconds / self.docs

    def breakdown(self) -> dict[str, float]:
        """The node's CPU seconds by part of a split pool, by other pool, the rest, and all together."""
        out = {f"{pool} pool: {part}": self.part(pool, part) for pool, part, _ in PARTS}
        out |= {label: self.pools.get(pool, 0.0) for pool, label in POOLS.items()}
        out["other pools"] = sum(v for k, v in self.pools.items() if k not in SPLIT and k not in POOLS)
        out["all the node's threads"] = sum(self.pools.values())
        return out

    def part(self, pool: str, part: str) -> float:
        """CPU seconds of one part of a split pool: its share of the pool's samples times the pool's CPU."""
        total = sum(n for (p, _), n in self.samples.items() if p == pool)
        return self.pools.get(pool, 0.0) * self.samples[(pool, part)] / total if total else 0.0


def jdk_tool(name: str) -> str:
    """``name`` (jcmd, jfr) of the JDK whose ``java`` runs the node."""
    java = shutil.which("java")
    tool = Path(java).resolve().parent / name if java else None
    if tool is None or not tool.exists():
        raise SystemExit(f"bench.ingest_profile needs the JDK's {name} beside java ({java}); install a full JDK")
    return str(tool)


def thread_cpu(pid: int) -> dict[tuple[str, str], float]:
    """CPU seconds of each of the JVM's live threads, by (native id, name), from ``jcmd Thread.print``."""
    printed = subprocess.run([jdk_tool("jcmd"), str(pid), "Thread.print"], capture_output=True, text=True, check=True)
    out: dict[tuple[str, str], float] = {}
    for line in printed.stdout.splitlines():
        found = _THREAD.match(line)
        if found:
            out[(found["nid"], found["name"])] = float(found["cpu"]) / 1000
    return out


def pool_cpu(before: dict[tuple[str, str], float], after: dict[tuple[str, str], float]) -> dict[str, float]:
    """CPU seconds by pool between two :func:`thread_cpu` snapshots (a thread started meanwhile counts whole; one
    that ended meanwhile is not seen)."""
    out: dict[str, float] = {}
    for key, cpu in after.items():
        pool = pool_of(key[1])
        out[pool] = out.get(pool, 0.0) + cpu - before.get(key, 0.0)
    return out


def categorise(recording: Path) -> Counter[tuple[str, str]]:
    """The JFR recording's execution samples of the pools in :data:`SPLIT`, counted by :data:`PARTS`."""
    printed = subprocess.run(
        [jdk_tool("jfr"), "print", "--json", "--stack-depth", "96", "--events", "jdk.ExecutionSample", str(recording)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    counts: Counter[tuple[str, str]] = Counter()
    for event in json.loads(printed)["recording"]["events"]:
        values = event["values"]
        pool = pool_of(values["sampledThread"]["javaName"] or "")
        if pool not in SPLIT:
            continue
        frames = [
            f"{fr['method']['type']['name'].rsplit('/', 1)[-1]}.{fr['method']['name']}"
            for fr in values["stackTrace"]["frames"]
        ]
        counts[(pool, next(part for p, part, holds in PARTS if p == pool and holds(frames)))] += 1
    return counts


def profiled(client: Elasticsearch, node_pid: int, served: Served, docs: Sequence[Doc], name: str, tmp: Path) -> Phase:
    """``docs`` posted to the service while the node records a profile."""
    jcmd = jdk_tool("jcmd")
    recording = tmp / f"{name}.jfr"
    subprocess.run([jcmd, str(node_pid), "JFR.start", f"name={name}"], check=True, capture_output=True)
    me = psutil.Process()
    threads = thread_cpu(node_pid)
    before = (cpu_seconds([node_pid]), cpu_seconds(served.workers), sum(me.cpu_times()[:2]))
    (seconds, _, items), mean, most = segments_during(
        client, INDEX, lambda: post_in_threads(served, INDEX, docs, BATCH, 2)
    )
    after = (cpu_seconds([node_pid]), cpu_seconds(served.workers), sum(me.cpu_times()[:2]))
    pools = pool_cpu(threads, thread_cpu(node_pid))
    subprocess.run(
        [jcmd, str(node_pid), "JFR.stop", f"name={name}", f"filename={recording}"], check=True, capture_output=True
    )
    refused = unwritten(items)
    if refused:
        raise SystemExit(f"the service did not write {len(refused)} documents of the {name} phase: {refused[0]}")
    return Phase(
        name,
        len(docs),
        seconds,
        after[0] - before[0],
        after[1] - before[1],
        after[2] - before[2],
        pools,
        categorise(recording),
        mean,
        most,
    )


def block_keys(records: Sequence[Record]) -> npt.NDArray[np.int64]:
    """Per ``ok`` record, its (seed, block) tokens (:func:`~neardup.ingest.bits.blocks` of each seed's
    fingerprint) as ``(seed * 4 + block) << 16 | value``; the rows of the others -1."""
    out = np.full((len(records), 16 * BLOCKS), -1, np.int64)
    for k, r in enumerate(records):
        if r.status == "ok" and len(r.fingerprints) == 16:
            out[k] = [(s * BLOCKS + b) << 16 | v for s, f in enumerate(r.fingerprints) for b, v in enumerate(blocks(f))]
    return out


def postings_reached(keys: npt.NDArray[np.int64], start: int, end: int) -> tuple[float, float]:
    """(mean postings a document of [start, end) reaches among the documents before it, chance's mean): the
    documents before ``start`` all stored, those of the phase stored in order."""
    held = keys[:start][keys[:start, 0] >= 0].ravel()
    df = np.bincount(held, minlength=16 * BLOCKS << 16)
    reached: list[int] = []
    chance: list[float] = []
    stored = int((keys[:start, 0] >= 0).sum())
    for k in range(start, end):
        if keys[k, 0] < 0:
            continue
        reached.append(int(df[keys[k]].sum()))
        chance.append(keys.shape[1] * stored / (1 << 16))
        np.add.at(df, keys[k], 1)
        stored += 1
    return float(np.mean(reached)), float(np.mean(chance))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000, help="the late phase's documents end the index here")
    parser.add_argument("--ingest", type=int, default=50_000, help="documents through the service per phase")
    parser.add_argument(
        "--warm-up", type=int, default=50_000, help="documents through the service into another index first, not timed"
    )
    out_option(parser, OUT)
    args = parser.parse_args()
    n, ingest = args.docs, args.ingest
    warm = args.warm_up
    if n < 2 * ingest + warm:
        parser.error("--docs must be at least 2 × --ingest + --warm-up")
    command = "python -m bench.ingest_profile" + (f" --docs {n}" if n != 1_000_000 else "")
    command += f" --ingest {ingest}" if ingest != 50_000 else ""
    command += f" --warm-up {warm}" if warm != 50_000 else ""
    command += out_flag(args.out, OUT)
    docs = read_corpus(corpus_path(n))
    records = corpus_records(docs)
    keys = block_keys(records)
    reach = {"early": postings_reached(keys, 0, ingest), "late": postings_reached(keys, n - ingest, n)}
    with (
        tempfile.TemporaryDirectory(prefix="neardup-profile-") as tmp,
        embedded_node(port=9287, heap="4g") as info,
        serve(info.url, es_timeout="60", flag_in_es="true") as served,
    ):
        client = Elasticsearch(info.url, request_timeout=600)
        setup_index(client, INDEX)
        setup_index(client, WARM)
        post_in_threads(served, WARM, docs[ingest : ingest + warm], BATCH, 2)  # not timed: no phase meets a cold node
        client.indices.delete(index=WARM)
        wait_for_merges(client, poll=2.0)
        early = profiled(client, info.pid, served, docs[:ingest], "early", Path(tmp))
        actions = (stored_document(INDEX, docs[k].id, docs[k].text, records[k], k) for k in range(ingest, n - ingest))
        load_s = bulk_load(client, [INDEX], actions)
        merge_s = wait_for_merges(client, poll=2.0)
        late = profiled(client, info.pid, served, docs[n - ingest :], "late", Path(tmp))
        client.close()
    write_results(RESULTS / args.out, report(early, late, reach, n, ingest, warm, command, load_s, merge_s))


def report(
    early: Phase,
    late: Phase,
    reach: dict[str, tuple[float, float]],
    n: int,
    ingest: int,
    warm: int,
    command: str,
    load_s: float,
    merge_s: float,
) -> list[str]:
    out = [
        "# Where the CPU of ingest through the service goes, early and late",
        "",
        f"Machine: {describe()}",
        "Elasticsearch: embedded, 4 GB heap, 1 shard; `neardup serve` with 2 workers writing through the "
        "cluster's `neardup-flag` pipeline (`NEARDUP_FLAG_IN_ES=true`), on the same 2 cores.",
        f"Corpus: `python -m bench.corpus --docs {n}`, generator {GENERATOR}. Command: `{command}`",
        "",
        f"{ingest:,} documents per phase, batches of {BATCH} from 2 client threads; early into an empty index, late "
        f"into the index holding {n - ingest:,} (the early phase's, and the {n - 2 * ingest:,} in between, bulk-loaded "
        f"with their fingerprints in "
        f"{load_s:.0f} s, then {merge_s:.0f} s of merges waited for). Before either, {warm:,} other documents "
        "went through the service into an index of their own (not timed). The node was profiled by Java Flight "
        "Recorder while each phase was written (default settings); profiling costs the node CPU, so these rates are "
        "not comparable with `scale.md`'s.",
        "",
        "| | early | late | late ÷ early |",
        "|---|---|---|---|",
        f"| documents/s | {early.docs / early.seconds:,.0f} | {late.docs / late.seconds:,.0f} | "
        f"{(late.docs / late.seconds) / (early.docs / early.seconds):.2f} |",
        f"| segments while written (mean, most) | {early.segments_mean:.1f}, {early.segments_most} | "
        f"{late.segments_mean:.1f}, {late.segments_most} | |",
    ]
    for label, cpu in [
        ("node CPU s per 1,000 documents", lambda p: p.node_cpu),
        ("service workers' CPU s per 1,000 documents", lambda p: p.workers_cpu),
        ("client CPU s per 1,000 documents", lambda p: p.client_cpu),
    ]:
        e, lt = early.per_thousand(cpu(early)), late.per_thousand(cpu(late))
        out.append(f"| {label} | {e:.3f} | {lt:.3f} | {lt / e:.2f} |")
    out += [
        "",
        "The node's CPU by thread pool (each thread's CPU time from `jcmd Thread.print` before and after the phase), "
        "the search and write pools divided further in proportion to what their own profiled samples were running; "
        "CPU s per 1,000 documents:",
        "",
        "| what | early | late | late − early |",
        "|---|---|---|---|",
    ]
    late_parts = late.breakdown()
    for label, seconds in early.breakdown().items():
        e, lt = early.per_thousand(seconds), late.per_thousand(late_parts[label])
        out.append(f"| {label} | {e:.3f} | {lt:.3f} | {lt - e:+.3f} |")
    (e_reach, e_chance), (l_reach, l_chance) = reach["early"], reach["late"]
    out += [
        "",
        "Samples of the split pools (search, write): early "
        + ", ".join(f"{sum(n for (p, _), n in early.samples.items() if p == pool):,}" for pool in SPLIT)
        + "; late "
        + ", ".join(f"{sum(n for (p, _), n in late.samples.items() if p == pool):,}" for pool in SPLIT)
        + ". The threads' sum differs from the process's CPU above by what threads that ended during a phase used.",
        "",
        "Block postings a document's 64 (seed, block) tokens reach among the documents stored before it (from the "
        "fingerprints; each is a candidate the block match reads and checks): early "
        f"{e_reach:,.0f} on average (chance alone {e_chance:,.0f}), late {l_reach:,.0f} (chance alone "
        f"{l_chance:,.0f}).",
    ]
    return out


if __name__ == "__main__":
    main()

"""What machine a benchmark ran on (written into every results file)."""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import time
from pathlib import Path

import psutil

from neardup.ingest.fingerprint import FingerprintConfig, version_of


def cpu_reference(samples: int = 20, steps: int = 200_000) -> tuple[float, float, float]:
    """Millions of steps a second of a fixed pure-Python loop on one thread: (median, slowest, fastest) of
    ``samples`` runs, about a second in all. A shared host's speed moves by more than its hardware says (here it
    switched between two speeds within a second); results files compared with each other should be compared
    with this too."""
    rates = []
    for _ in range(samples):
        t0 = time.perf_counter()
        acc = 0
        for i in range(steps):
            acc = (acc * 31 + i) & 0xFFFFFFFF
        rates.append(steps / (time.perf_counter() - t0) / 1e6)
    return statistics.median(rates), min(rates), max(rates)


def cpu_model() -> str:
    """The processor's name: Linux's ``/proc/cpuinfo`` "model name" (``platform.processor()`` is empty there)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def code_revision() -> str:
    """The commit the bench ran from, ``+changes`` when the checkout had uncommitted changes to tracked files, so a
    results file can be told stale against the code it measured; "not a git checkout" otherwise."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=10", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10
        )
        dirty = subprocess.run(  # results files are rewritten by the benches themselves: not a change of the code
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ":(top)", ":(top,exclude)bench/results"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return "not a git checkout"
    if head.returncode != 0:
        return "not a git checkout"
    return head.stdout.strip() + (" +changes" if dirty.stdout.strip() else "")


#: the code a bench runs is the code of its start: a results file written at the end names that commit
STARTED_AT = code_revision()


def describe() -> str:
    freq = psutil.cpu_freq()
    median, low, high = cpu_reference()
    return (
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; code {STARTED_AT}, fingerprint version "
        f"{version_of(FingerprintConfig())}; {platform.platform()}; "
        f"Python {platform.python_version()}; {os.cpu_count()} CPUs ({cpu_model()}"
        f"{f', {freq.max:.0f} MHz' if freq and freq.max else ''}); "
        f"{psutil.virtual_memory().total / 2**30:.0f} GiB RAM; "
        f"CPU reference when written {median:.1f} M loop steps/s on one thread ({low:.1f}–{high:.1f}; "
        "`bench.machine.cpu_reference`)"
    )


def write_results(path: Path, lines: list[str]) -> None:
    """Write a results file whole (creating bench/results; through a part file moved into place, so an
    interrupted write leaves the last results as they were) and echo it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    part.write_text("\n".join(lines) + "\n", encoding="utf-8")
    part.replace(path)
    print("\n".join(lines))


#: where the results files live
RESULTS = Path(__file__).parent / "results"


def out_option(parser: argparse.ArgumentParser, default: str | None) -> None:
    """``--out NAME``: the results file's name in bench/results (``default``; None: the bench derives it). A run with
    other options than its file's Command line names another file, so it never writes over that one."""
    shown = f"default {default}" if default else "default: named after the run's size"
    parser.add_argument("--out", default=default, help=f"the results file's name in bench/results ({shown})")


def out_flag(out: str | None, default: str | None) -> str:
    """The ``--out`` part of a Command line: none for the default file.

    >>> out_flag("scale.md", "scale.md"), out_flag("scale_100k.md", "scale.md")
    ('', ' --out scale_100k.md')
    """
    return "" if out is None or out == default else f" --out {out}"


def no_options(description: str | None) -> None:
    """The command line of a bench that takes no options: ``--help`` describes it, anything else is refused (either
    way before it runs and overwrites its results)."""
    argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()

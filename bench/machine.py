"""What machine a benchmark ran on (written into every results file)."""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path

import psutil


def describe() -> str:
    freq = psutil.cpu_freq()
    return (
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {platform.platform()}; "
        f"Python {platform.python_version()}; {os.cpu_count()} CPUs ({platform.processor() or 'unknown'}"
        f"{f', {freq.max:.0f} MHz' if freq and freq.max else ''}); "
        f"{psutil.virtual_memory().total / 2**30:.0f} GiB RAM"
    )


def write_results(path: Path, lines: list[str]) -> None:
    """Write a results file (creating bench/results) and echo it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))

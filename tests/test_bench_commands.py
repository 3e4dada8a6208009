"""Every results file in bench/results states the command that wrote it, and ``bench/run_all.py`` (``make bench``)
runs exactly that command for it, so running the benches again writes the same files the same way."""

from __future__ import annotations

import doctest
import subprocess
import sys
from pathlib import Path

import pytest

from bench import run_all

RESULTS = Path(__file__).resolve().parent.parent / "bench" / "results"


def test_every_results_file_is_written_by_one_bench_of_run_all() -> None:
    files = {p.name for p in RESULTS.glob("*.md")}
    assert sorted(files - set(run_all.BENCHES)) == []  # a file no command writes again
    assert sorted(set(run_all.BENCHES) - files) == []  # a command whose file is not there


@pytest.mark.parametrize("name", sorted(run_all.BENCHES))
def test_the_file_states_the_command_run_all_runs_for_it(name: str) -> None:
    assert f"`{run_all.command(name)}`" in (RESULTS / name).read_text(encoding="utf-8")


def test_run_all_refuses_a_file_no_bench_writes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        run_all.main(["nothing.md"])
    assert exited.value.code == 2
    assert "no bench writes nothing.md" in capsys.readouterr().err


def test_the_doctests_of_run_all() -> None:
    assert doctest.testmod(run_all).failed == 0


@pytest.mark.parametrize("module", sorted({run_all.BENCHES[name].split()[0] for name in run_all.BENCHES}))
def test_every_bench_answers_help_and_refuses_an_unknown_option_without_running(module: str) -> None:
    """A bench run by mistake overwrites its results file: ``--help`` and a misspelt option must stop first."""
    before = {p.name: p.stat().st_mtime_ns for p in RESULTS.iterdir()}
    helped = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=120)
    assert helped.returncode == 0 and "usage:" in helped.stdout, helped.stderr[-500:]
    refused = subprocess.run(
        [sys.executable, "-m", module, "--no-such-option"], capture_output=True, text=True, timeout=120
    )
    assert refused.returncode == 2 and "unrecognized arguments" in refused.stderr, refused.stderr[-500:]
    assert {p.name: p.stat().st_mtime_ns for p in RESULTS.iterdir()} == before

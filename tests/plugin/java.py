"""Running the plugin's Java code from Python tests: build once per session, then feed a parity main
(``plugin/src/test/java/io/neardup/parity``) JSON lines and read its JSON answers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from neardup.node.plugin_build import PluginBuild, build_plugin

CACHE = Path(os.environ.get("NEARDUP_HOME", Path.home() / ".cache" / "neardup"))


def plugin_or_skip() -> PluginBuild:
    if shutil.which("mvn") is None or shutil.which("java") is None:
        pytest.skip("the plugin needs Java and Maven")
    return build_plugin(CACHE)


def run_main(build: PluginBuild, main: str, texts: Iterable[str], *args: str) -> list[Any]:
    """One JVM for all ``texts``: each goes in as a JSON string line, each answer comes back as JSON."""
    lines = [json.dumps(t) for t in texts]
    proc = subprocess.run(
        ["java", "-Xss8m", "-cp", build.test_classpath(), main, *args],
        input="\n".join(lines) + ("\n" if lines else ""),
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    if proc.returncode != 0:
        raise AssertionError(f"{main} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(out) == len(lines), f"{main} answered {len(out)} of {len(lines)} lines"
    return out


class JavaSession:
    """One JVM answering one text at a time (a parity main that flushes each answer), so hypothesis can
    shrink a failing text and ``@example``s work without a JVM start per example."""

    def __init__(self, main: str, proc: subprocess.Popen[str], stderr: IO[str]) -> None:
        self._main = main
        self._proc = proc
        self._stderr = stderr

    def ask(self, text: str) -> Any:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps(text) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            self._stderr.seek(0)
            raise AssertionError(f"{self._main} stopped on {text!r}:\n{self._stderr.read()[-3000:]}")
        return json.loads(line)


def java_session(build: PluginBuild, main: str, *args: str) -> Iterator[JavaSession]:
    """A :class:`JavaSession` of ``main`` for a fixture to yield from; the JVM ends with the fixture."""
    command = ["java", "-Xss8m", "-cp", build.test_classpath(), main, *args]
    with (
        tempfile.TemporaryFile("w+", encoding="utf-8") as stderr,
        subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True, encoding="utf-8"
        ) as proc,
    ):
        yield JavaSession(main, proc, stderr)
        # leaving the Popen block closes stdin, which ends the JVM's loop, and waits for it

"""Running the plugin's Java code from Python tests: build once per session, then feed a parity main
(``plugin/src/test/java/io/neardup/parity``) JSON lines and read its JSON answers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

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

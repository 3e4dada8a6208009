"""Two processes (here threads) building the plugin's same sources at once take turns, and the second reuses the
first's build: Maven writing one build directory twice at once left class files of one in the other's place."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from neardup.node import plugin_build
from neardup.node.versions import ES_VERSION

FAKE_MVN = """#!/bin/sh
# a stand-in for Maven: notes when it runs, takes a moment, and writes the build's jar and zip
log="$NEARDUP_FAKE_LOG"
echo start >> "$log"
sleep 1
for a in "$@"; do case "$a" in -Dneardup.build.dir=*) dir="${a#-Dneardup.build.dir=}";; esac; done
touch "$dir/neardup-plugin-VERSION.jar" "$dir/neardup-plugin-VERSION.zip"
echo end >> "$log"
"""


def test_builds_of_the_same_sources_at_once_take_turns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    mvn = bin_dir / "mvn"
    mvn.write_text(FAKE_MVN.replace("VERSION", ES_VERSION), encoding="utf-8")
    mvn.chmod(mvn.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "mvn.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("NEARDUP_FAKE_LOG", str(log))
    monkeypatch.setattr(plugin_build, "export", lambda directory: directory.mkdir(parents=True, exist_ok=True))
    if plugin_build.shutil.which("java") is None:
        pytest.skip("no java on PATH")
    home = tmp_path / "home"
    built: list[Path] = []

    def build() -> None:
        built.append(plugin_build.build_plugin(home).directory)

    threads = [threading.Thread(target=build) for _ in range(3)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(built) == 3 and len(set(built)) == 1
    assert log.read_text(encoding="utf-8").split() == ["start", "end"], "Maven ran more than once, or at once"
    assert time.monotonic() - started < 30
    assert plugin_build.build_plugin(home).directory == built[0]  # reused, no Maven
    assert log.read_text(encoding="utf-8").split() == ["start", "end"]

"""Every JUnit test of the plugin passes: the processor's configuration and error paths and the descriptor
(``io.neardup.plugin``), the text layer's pinned cases (``io.neardup.text``) and the duplicate rules'
(``io.neardup.flag``). Maven runs them in a build directory of their own."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from neardup.node.plugin_build import PLUGIN_SOURCE, PluginBuild


def test_every_junit_test_passes(plugin: PluginBuild, tmp_path: Path) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        pytest.skip("needs Maven")
    proc = subprocess.run(
        [
            mvn,
            "-q",
            "-B",
            "-f",
            str(PLUGIN_SOURCE / "pom.xml"),
            f"-Dneardup.build.dir={tmp_path}",
            f"-Dneardup.data.dir={plugin.data}",
            "test",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, "\n".join((proc.stdout + proc.stderr).splitlines()[-60:])
    suites = [ET.parse(p).getroot() for p in (tmp_path / "surefire-reports").glob("TEST-*.xml")]
    ran = {s.get("name"): int(s.get("tests", "0")) for s in suites}
    print(ran)
    print(f"JUnit ran {sum(ran.values())} tests in {len(ran)} classes")
    for package in ("io.neardup.plugin.", "io.neardup.text.", "io.neardup.flag."):
        assert sum(n for name, n in ran.items() if name and name.startswith(package)) > 0, package
    assert ran.get("io.neardup.plugin.NeardupProcessorTest", 0) > 0
    assert all(int(s.get("failures", "0")) + int(s.get("errors", "0")) == 0 for s in suites)

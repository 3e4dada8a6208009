"""Build the neardup Elasticsearch plugin (``plugin/``, a Maven project) with its exported data.

The build goes into ``home/plugin-<version>-<digest>``, where the digest covers the plugin's sources, the
exporter's sources and the versions of the packages the data comes from, so a changed port or an upgraded
jieba or OpenCC builds again, and an unchanged one is reused.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import sys
import unicodedata
from importlib import metadata
from pathlib import Path

from neardup.errors import EmbeddedESError

from .export import export
from .versions import ES_VERSION

__all__ = ["PLUGIN_SOURCE", "PluginBuild", "build_plugin", "missing_build_tools"]

PLUGIN_SOURCE = Path(__file__).parent / "plugin"
_EXPORT_SOURCE = Path(__file__).parent / "export"
_DATA_PACKAGES = ("jieba", "opencc")


class PluginBuild:
    """A finished build: the plugin jar, its runtime libraries, and (when built with tests) a classpath for
    running the test sources."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @property
    def jar(self) -> Path:
        return self.directory / f"neardup-plugin-{ES_VERSION}.jar"

    @property
    def zip(self) -> Path:
        return self.directory / f"neardup-plugin-{ES_VERSION}.zip"

    @property
    def lib(self) -> Path:
        """The plugin's runtime libraries (ICU4J, zero-allocation-hashing); the zip carries the same jars."""
        return self.directory / "lib"

    @property
    def data(self) -> Path:
        return self.directory / "neardup-data"

    def test_classpath(self) -> str:
        """Classes, test classes and every test-scope dependency, joined for ``java -cp``."""
        deps = (self.directory / "test-classpath.txt").read_text(encoding="utf-8").strip()
        return ":".join([str(self.directory / "classes"), str(self.directory / "test-classes"), deps])


def _digest() -> str:
    digest = hashlib.sha256()
    for root in (PLUGIN_SOURCE, _EXPORT_SOURCE):
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root).parts
            if path.is_file() and "target" not in rel and "__pycache__" not in rel:
                digest.update(str(path.relative_to(root.parent)).encode() + b"\0" + path.read_bytes())
    for name in _DATA_PACKAGES:
        digest.update(f"{name}={metadata.version(name)}".encode())
    digest.update(f"unicode={unicodedata.unidata_version};python={sys.version_info[:2]}".encode())
    return digest.hexdigest()[:12]


def build_plugin(home: Path, run_tests: bool = False) -> PluginBuild:
    """Export the data and build the plugin into ``home``; JUnit runs when ``run_tests``. A finished build of
    the same sources is reused (its JUnit run counts only if it ran). Processes building the same sources at once
    (two ``neardup es start``, a test session and a command) take turns: Maven writing one build directory twice
    at once leaves class files of one in the other's place."""
    build = PluginBuild(home / f"plugin-{ES_VERSION}-{_digest()}")
    marker = build.directory / ("tested.ok" if run_tests else "built.ok")
    if marker.exists():
        return build
    home.mkdir(parents=True, exist_ok=True)
    with open(build.directory.with_name(build.directory.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process ends
        if not marker.exists():  # unless the process before in turn built it
            _build(build, run_tests, marker)
    return build


def missing_build_tools() -> list[str]:
    """Which of the commands the plugin's build runs (``java``, ``mvn``) are not on the PATH."""
    return [tool for tool in ("java", "mvn") if shutil.which(tool) is None]


def _build(build: PluginBuild, run_tests: bool, marker: Path) -> None:
    mvn = shutil.which("mvn")
    if mvn is None or missing_build_tools():
        raise EmbeddedESError("building the neardup plugin needs Java 17+ and Maven (`apt-get install maven`)")
    build.directory.mkdir(parents=True, exist_ok=True)
    if not (build.data / ".complete").exists():
        export(build.data)
        (build.data / ".complete").write_text("", encoding="utf-8")
    cmd = [
        mvn,
        "-q",
        "-B",
        "-f",
        str(PLUGIN_SOURCE / "pom.xml"),
        f"-Dneardup.build.dir={build.directory}",
        f"-Dneardup.data.dir={build.data}",
        f"-Dmdep.outputFile={build.directory / 'test-classpath.txt'}",
        "-Dmdep.includeScope=test",
        *([] if run_tests else ["-DskipTests"]),
        "package",
        "dependency:build-classpath",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not build.jar.exists() or not build.zip.exists():
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-40:])
        raise EmbeddedESError("building the neardup plugin with Maven failed", tail)
    (build.directory / "built.ok").write_text("", encoding="utf-8")
    marker.write_text("", encoding="utf-8")

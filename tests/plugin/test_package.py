"""The plugin zip installs and loads as on a user's node: Elasticsearch's own installer checks and plugin loader
(``io.neardup.plugin.InstallCheck``) in a JVM whose module path holds Elasticsearch alone, as a node's does, so
everything the plugin needs must come from the zip."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from neardup.ingest.fingerprint import Fingerprinter
from neardup.mappings import schema
from neardup.node import ES_VERSION
from neardup.node.plugin_build import PluginBuild

#: what the node has and the zip must not carry (Elasticsearch is ``provided``), and the test-only jars
_NOT_ON_A_NODE = ("icu4j", "zero-allocation-hashing", "junit", "opentest4j", "apiguardian")
TEXT = "国务院今天召开常务会议，部署进一步推动经济稳定增长的措施。"


def _install(plugin: PluginBuild, home: Path) -> dict[str, Any]:
    deps = (plugin.directory / "test-classpath.txt").read_text(encoding="utf-8").strip().split(":")
    module_path = ":".join(d for d in deps if not any(name in Path(d).name for name in _NOT_ON_A_NODE))
    proc = subprocess.run(
        [
            "java",
            "--module-path",
            module_path,
            "--add-modules",
            "ALL-MODULE-PATH",
            "-cp",
            str(plugin.directory / "test-classes"),
            "io.neardup.plugin.InstallCheck",
            str(plugin.zip),
            str(home),
            TEXT,
        ],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return result


@pytest.fixture(scope="module")
def installed(plugin: PluginBuild, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _install(plugin, tmp_path_factory.mktemp("es-home"))


def test_the_zip_holds_the_descriptor_the_plugin_and_its_libraries_at_its_root(plugin: PluginBuild) -> None:
    assert plugin.zip.name == f"neardup-plugin-{ES_VERSION}.zip"
    with zipfile.ZipFile(plugin.zip) as bundle:
        names = sorted(bundle.namelist())
        descriptor = bundle.read("plugin-descriptor.properties").decode("utf-8")
    assert names == sorted(
        [
            "plugin-descriptor.properties",
            f"neardup-plugin-{ES_VERSION}.jar",
            "icu4j-70.1.jar",
            "zero-allocation-hashing-0.16.jar",
        ]
    )
    props = dict(line.split("=", 1) for line in descriptor.splitlines() if line and not line.startswith("#"))
    assert props["name"] == "neardup" and props["classname"] == "io.neardup.plugin.NeardupPlugin"
    assert props["elasticsearch.version"] == ES_VERSION and props["version"] == ES_VERSION
    assert props["java.version"] == "17"


def test_elasticsearch_installs_and_loads_the_zip(installed: dict[str, Any]) -> None:
    assert installed["name"] == "neardup" and installed["loaded"] == ["neardup"]
    # its own class loader, as on a node: the plugin's classes and libraries came from the zip
    assert installed["same_loader_as_check"] is False
    assert installed["processors"] == ["neardup"]
    assert installed["script_lang"] == "neardup"
    # no permissions to grant at install time, and no SecurityManager policy (8.18+ warns about one)
    assert installed["entitlements"] == [] and installed["legacy_policy"] is False


def test_the_installed_plugin_fingerprints_like_python(installed: dict[str, Any], fp: Fingerprinter) -> None:
    """The processor created from the installed zip fingerprints a document as Python does: its code and tables
    resolve through the plugin's own class loader, as on a user's node."""
    assert installed["error"] is None, installed["error"]
    nd = dict(installed["source"][schema.ROOT])
    nd.pop(schema.INDEXED_AT)
    assert nd == schema.record_fields(fp.fingerprint(TEXT))

"""`neardup es start|status|stop` as a user runs them: messages and exit codes."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from elasticsearch import Elasticsearch

from neardup import node as esnode
from neardup.config import Settings
from neardup.es.client import make_client
from tests.ports import free_node_port

pytestmark = pytest.mark.es

NEARDUP = [sys.executable, "-m", "neardup"]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*NEARDUP, *args], capture_output=True, text=True, env=env, timeout=300, check=False)


def test_start_status_stop_cycle_leaves_no_java(tmp_path: Path, es_url: str) -> None:
    port = free_node_port()
    data = tmp_path / "es"
    started = run("es", "start", "--port", str(port), "--data", str(data), "--heap", "512m")
    assert started.returncode == 0, started.stderr
    assert f"http://127.0.0.1:{port}" in started.stdout
    info = esnode.running_node(data)
    assert info is not None
    import urllib.request

    body = urllib.request.urlopen(f"http://127.0.0.1:{port}", timeout=10).read().decode()
    assert '"number":"8.' in body

    again = run("es", "start", "--port", str(port), "--data", str(data))
    assert again.returncode == 0
    assert "already running" in again.stdout

    status = run("es", "status", "--data", str(data))
    assert status.returncode == 0 and "running" in status.stdout

    stopped = run("es", "stop", "--data", str(data))
    assert stopped.returncode == 0, stopped.stderr
    assert not psutil.pid_exists(info.pid) or psutil.Process(info.pid).status() == psutil.STATUS_ZOMBIE

    status = run("es", "status", "--data", str(data))
    assert status.returncode == 3 and "not running" in status.stdout


def test_stop_when_none_runs_fails_clearly(tmp_path: Path) -> None:
    result = run("es", "stop", "--data", str(tmp_path))
    assert result.returncode == 1
    assert "no embedded Elasticsearch is running" in result.stderr
    assert "Traceback" not in result.stderr


def test_busy_port_fails_clearly(tmp_path: Path, es_url: str) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        result = run("es", "start", "--port", str(port), "--data", str(tmp_path))
    assert result.returncode == 1
    assert f"port {port} on 127.0.0.1 is busy" in result.stderr


def test_missing_java_says_what_to_install(tmp_path: Path) -> None:
    python_dir = str(Path(sys.executable).parent)
    assert shutil.which("java", path=python_dir) is None
    env = {**os.environ, "PATH": python_dir, "NEARDUP_HOME": str(tmp_path / "home")}
    result = run("es", "start", "--data", str(tmp_path / "d"), "--port", str(free_node_port()), env=env)
    assert result.returncode == 1
    assert "Java not found: install a JDK 17" in result.stderr


def test_one_node_of_a_cluster_stops_and_starts_again(tmp_path: Path, es_url: str) -> None:
    """`neardup es node stop|start N`: the other nodes keep serving (3 nodes: two still elect a master);
    the node comes back and rejoins."""
    port = free_node_port()
    data = tmp_path / "es"
    started = run("es", "start", "--port", str(port), "--nodes", "3", "--data", str(data), "--heap", "1g")
    assert started.returncode == 0, started.stderr
    client = Elasticsearch(f"http://127.0.0.1:{port}", request_timeout=60)
    try:
        client.indices.create(index="kept", settings={"number_of_shards": 1, "number_of_replicas": 1})
        client.index(index="kept", id="a", document={"text": "x"}, refresh=True)
        assert client.cluster.health(index="kept", wait_for_status="green", timeout="60s")["status"] == "green"

        stopped = run("es", "node", "stop", "2", "--data", str(data))
        assert stopped.returncode == 0 and "node-2 stopped" in stopped.stdout, stopped.stderr
        assert client.cluster.health(wait_for_nodes="2", timeout="60s")["number_of_nodes"] == 2
        assert client.get(index="kept", id="a")["found"]  # a copy on a running node serves it

        out_of_range = run("es", "node", "stop", "3", "--data", str(data))
        assert out_of_range.returncode != 0 and "nodes 0 to 2" in out_of_range.stderr

        again = run("es", "node", "start", "2", "--data", str(data))
        assert again.returncode == 0 and "node-2 started" in again.stdout, again.stderr
        health = client.cluster.health(index="kept", wait_for_nodes="3", wait_for_status="green", timeout="120s")
        assert health["number_of_nodes"] == 3 and health["status"] == "green"

        # the service's client, given every node, keeps answering when the node it was told first stops
        urls = ",".join(f"http://127.0.0.1:{port + n}" for n in range(3))
        every = make_client(Settings(es_url=urls, es_timeout=30))
        try:
            assert run("es", "node", "stop", "0", "--data", str(data)).returncode == 0
            assert all(every.get(index="kept", id="a")["found"] for _ in range(6))  # round-robin meets node 0
        finally:
            every.close()
    finally:
        client.close()
        run("es", "stop", "--data", str(data))


def test_data_of_a_cluster_of_other_size_is_refused_before_any_start(tmp_path: Path) -> None:
    for name in ("node-0", "node-1", "node-2"):  # what `es start --nodes 3` leaves in its data directory
        (tmp_path / name).mkdir()
    (tmp_path / "control").mkdir()
    result = run("es", "start", "--data", str(tmp_path), "--port", str(free_node_port()))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "holds the data of a 3-node cluster" in result.stderr and "--nodes 3" in result.stderr
    assert esnode.running_node(tmp_path) is None


def test_a_home_that_cannot_be_made_is_a_message(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory", encoding="utf-8")
    env = {**os.environ, "NEARDUP_HOME": str(blocker / "home")}
    result = run("plugin", "build", env=env)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"neardup: cannot use {blocker / 'home'}" in result.stderr

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

from neardup import node as esnode

pytestmark = pytest.mark.es

NEARDUP = [sys.executable, "-m", "neardup"]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*NEARDUP, *args], capture_output=True, text=True, env=env, timeout=300, check=False)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_start_status_stop_cycle_leaves_no_java(tmp_path: Path, es_url: str) -> None:
    port = _free_port()
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
    result = run("es", "start", "--data", str(tmp_path / "d"), "--port", str(_free_port()), env=env)
    assert result.returncode == 1
    assert "Java not found: install a JDK 17" in result.stderr

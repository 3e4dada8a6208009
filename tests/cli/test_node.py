"""`neardup es start|status|stop` as a user runs them: messages and exit codes."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from elasticsearch import Elasticsearch

from neardup import node as esnode
from neardup.config import Settings, default_home
from neardup.errors import EmbeddedESError
from neardup.es.client import make_client
from tests.ports import free_node_port

pytestmark = pytest.mark.es

NEARDUP = [sys.executable, "-m", "neardup"]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*NEARDUP, *args], capture_output=True, text=True, env=env, timeout=300, check=False)


def launchers_of(data: Path) -> list[psutil.Process]:
    """The launchers running from ``data``, whatever a state file says."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if esnode.LAUNCHER_CLASS in cmdline and str(data.resolve()) in cmdline:
            found.append(proc)
    return found


@pytest.fixture
def es_data(tmp_path: Path) -> Iterator[Path]:
    """A data directory for a cluster the test starts; whatever still runs from it at the end is stopped, and a
    launcher no state file names (what the bugs tested here left) is killed."""
    data = tmp_path / "es"
    yield data
    run("es", "stop", "--data", str(data))
    for proc in launchers_of(data):
        with contextlib.suppress(psutil.Error):
            proc.kill()
            proc.wait(30)


def ask_launcher(data: Path, action: str, node: int) -> str:
    """Ask the launcher itself to stop or start a node (as `neardup es node` does, without its checks); return the
    state it records."""
    request = data / "control" / f"{action}-node-{node}"
    request.touch()
    deadline = time.monotonic() + 120
    while request.exists():
        assert time.monotonic() < deadline, f"the launcher did not {action} node-{node}"
        time.sleep(0.2)
    return (data / "control" / f"node-{node}").read_text(encoding="utf-8")


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def test_start_status_stop_cycle_leaves_no_java(es_data: Path, es_url: str) -> None:
    port = free_node_port()
    data = es_data
    started = run("es", "start", "--port", str(port), "--data", str(data), "--heap", "512m")
    assert started.returncode == 0, started.stderr
    assert f"http://127.0.0.1:{port}" in started.stdout
    info = esnode.running_node(data)
    assert info is not None
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}", timeout=10).read().decode()
    assert '"number":"8.' in body
    # Elasticsearch's own log, in its pattern with the node's name, beside the launcher's lines
    log = (data / "neardup-es.log").read_text(encoding="utf-8")
    assert "][INFO ][o.e.n.Node               ] [node-0] started" in log, log[-2000:]

    again = run("es", "start", "--port", str(port), "--data", str(data))
    assert again.returncode == 0
    assert "already running" in again.stdout

    status = run("es", "status", "--data", str(data))
    assert status.returncode == 0 and "running" in status.stdout
    assert f"node-0 http://127.0.0.1:{port}: up" in status.stdout and "cluster green" in status.stdout
    assert "for NEARDUP_ES_URL" not in started.stdout  # one node: its URL is the one printed

    for action, number in (("stop", "0"), ("stop", "1"), ("start", "1")):
        one = run("es", "node", action, number, "--data", str(data))
        assert one.returncode != 0 and "the cluster has only node 0: `neardup es stop` stops it" in one.stderr

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


def without_java_homes() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("ES_JAVA_HOME", "JAVA_HOME")}


def test_missing_java_says_what_to_install(tmp_path: Path) -> None:
    python_dir = str(Path(sys.executable).parent)
    assert shutil.which("java", path=python_dir) is None
    env = {**without_java_homes(), "PATH": python_dir, "NEARDUP_HOME": str(tmp_path / "home")}
    result = run("es", "start", "--data", str(tmp_path / "d"), "--port", str(free_node_port()), env=env)
    assert result.returncode == 1
    assert "Java not found: install a JDK 17" in result.stderr


def test_one_node_of_a_cluster_stops_and_starts_again(es_data: Path, es_url: str) -> None:
    """`neardup es node stop|start N`: the other nodes keep serving (3 nodes: two still elect a master);
    the node comes back and rejoins."""
    port = free_node_port()
    data = es_data
    started = run("es", "start", "--port", str(port), "--nodes", "3", "--data", str(data), "--heap", "1g")
    assert started.returncode == 0, started.stderr
    urls = ",".join(f"http://127.0.0.1:{port + n}" for n in range(3))
    assert f"for NEARDUP_ES_URL (requests go on while one stops): {urls}" in started.stdout
    client = Elasticsearch(f"http://127.0.0.1:{port}", request_timeout=60)
    try:
        client.indices.create(index="kept", settings={"number_of_shards": 1, "number_of_replicas": 1})
        client.index(index="kept", id="a", document={"text": "x"}, refresh=True)
        assert client.cluster.health(index="kept", wait_for_status="green", timeout="60s")["status"] == "green"

        stopped = run("es", "node", "stop", "2", "--data", str(data))
        assert stopped.returncode == 0 and "node-2 stopped" in stopped.stdout, stopped.stderr
        assert "warning" not in stopped.stderr  # two of three elect a master
        assert client.cluster.health(wait_for_nodes="2", timeout="60s")["number_of_nodes"] == 2
        assert client.get(index="kept", id="a")["found"]  # a copy on a running node serves it

        out_of_range = run("es", "node", "stop", "3", "--data", str(data))
        assert out_of_range.returncode != 0 and "nodes 0 to 2" in out_of_range.stderr

        again = run("es", "node", "start", "2", "--data", str(data))
        assert again.returncode == 0 and "node-2 started" in again.stdout, again.stderr
        assert client.cluster.health()["number_of_nodes"] == 3  # in the cluster when the command returns
        health = client.cluster.health(index="kept", wait_for_nodes="3", wait_for_status="green", timeout="120s")
        assert health["number_of_nodes"] == 3 and health["status"] == "green"

        # the service's client, given every node, keeps answering when the node it was told first stops
        every = make_client(Settings(es_url=urls, es_timeout=30))
        try:
            first = run("es", "node", "stop", "0", "--data", str(data))
            assert first.returncode == 0
            others = f"http://127.0.0.1:{port + 1},http://127.0.0.1:{port + 2}"
            assert f"the cluster goes on at {others} (name them in NEARDUP_ES_URL)" in first.stderr, first.stderr
            assert all(every.get(index="kept", id="a")["found"] for _ in range(6))  # round-robin meets node 0
        finally:
            every.close()
        # one node of three left: no majority, no master, and the command says so
        last = run("es", "node", "stop", "1", "--data", str(data))
        assert last.returncode == 0 and "node-1 stopped" in last.stdout
        assert "warning: the cluster has no elected master now: node-2 of 3 cannot elect one" in last.stderr
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


def fake_jdk(home: Path, version: str) -> Path:
    """A JDK home whose bin/java only says it is ``version`` (as `java -version` does, on stderr)."""
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text(f"#!/bin/sh\necho 'openjdk version \"{version}\" 2021-01-19' >&2\n", encoding="utf-8")
    java.chmod(0o755)
    return home


def test_java_is_found_as_elasticsearch_finds_it_and_an_old_one_is_named(tmp_path: Path) -> None:
    """ES_JAVA_HOME, then PATH, then JAVA_HOME; a Java older than 17 is refused by name before anything is built
    (it failed inside the JVM, with only an UnsupportedClassVersionError in the log)."""
    python_dir = str(Path(sys.executable).parent)  # no java on this PATH
    base = {**without_java_homes(), "PATH": python_dir, "NEARDUP_HOME": str(tmp_path / "home")}
    start = ("es", "start", "--data", str(tmp_path / "d"), "--port", str(free_node_port()))
    java11 = fake_jdk(tmp_path / "jdk11", "11.0.2")
    java8 = fake_jdk(tmp_path / "jdk8", "1.8.0_392")

    result = run(*start, env={**base, "JAVA_HOME": str(java11)})
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"JAVA_HOME ({java11 / 'bin' / 'java'}) is Java 11" in result.stderr
    assert "needs a JDK 17 or newer" in result.stderr

    result = run(*start, env={**base, "JAVA_HOME": str(java11), "ES_JAVA_HOME": str(java8)})
    assert result.returncode == 1 and f"ES_JAVA_HOME ({java8 / 'bin' / 'java'}) is Java 8" in result.stderr

    # a java on PATH comes before JAVA_HOME, which often names a JDK other tools want
    result = run(*start, env={**base, "PATH": f"{java11 / 'bin'}{os.pathsep}{python_dir}", "JAVA_HOME": str(java8)})
    assert result.returncode == 1 and f"{java11 / 'bin' / 'java'} is Java 11" in result.stderr, result.stderr

    result = run(*start, env={**base, "ES_JAVA_HOME": str(tmp_path / "nowhere")})
    assert result.returncode == 1 and "ES_JAVA_HOME is" in result.stderr and "has no bin/java" in result.stderr
    assert not (tmp_path / "home").exists()  # refused before any build


def test_data_missing_a_node_is_refused_naming_it(tmp_path: Path) -> None:
    """node-1 gone from a 3-node cluster's data: no --nodes starts it (`--nodes 2` started node-0 and a new node-1,
    ignored node-2 and waited 3 minutes for a quorum), so none is advised."""
    for name in ("node-0", "node-2"):
        (tmp_path / name).mkdir()
    for nodes in ("1", "2", "3"):
        result = run("es", "start", "--data", str(tmp_path), "--nodes", nodes, "--port", str(free_node_port()))
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        assert "holds the data of a 3-node cluster without node-1" in result.stderr, result.stderr
        assert "put node-1 back" in result.stderr and "--nodes" not in result.stderr
        assert esnode.running_node(tmp_path) is None


def test_two_starts_at_once_make_one_cluster_that_both_report(es_data: Path, es_url: str) -> None:
    """The second start waits for the first's lock, then finds its cluster (it failed on the node lock, and
    removed the state file of the cluster the first had started: status said not running, stop could not stop it)."""
    port = free_node_port()
    cmd = [*NEARDUP, "es", "start", "--port", str(port), "--data", str(es_data), "--heap", "512m"]
    both = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [proc.communicate(timeout=300) for proc in both]
    assert [proc.returncode for proc in both] == [0, 0], outs
    said = sorted(out for out, _ in outs)
    assert said[0].startswith("Elasticsearch") and " is up: " in said[0], said
    assert said[1].startswith("already running: "), said
    assert len(launchers_of(es_data)) == 1

    status = run("es", "status", "--data", str(es_data))
    assert status.returncode == 0 and status.stdout.startswith("running: "), status.stdout
    stopped = run("es", "stop", "--data", str(es_data))
    assert stopped.returncode == 0, stopped.stderr
    assert launchers_of(es_data) == []


def test_a_start_waits_for_the_start_holding_the_lock(es_data: Path, es_url: str) -> None:
    """While another start holds the data directory's lock (checks, launches, records, waits), a start launches
    nothing; then it goes on (it launched a second cluster on the same data, which failed on the node lock)."""
    es_data.mkdir()
    cmd = [*NEARDUP, "es", "start", "--port", str(free_node_port()), "--data", str(es_data), "--heap", "512m"]
    with open(es_data / "neardup-es.lock", "ab") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline and proc.poll() is None and launchers_of(es_data) == []:
            time.sleep(0.2)
        launched_meanwhile = proc.poll() is not None or launchers_of(es_data) != []
    out, err = proc.communicate(timeout=300)
    assert "waiting for it" in err, err  # it reached the lock and waited there
    assert not launched_meanwhile, "it went on while the lock was held"
    assert proc.returncode == 0 and " is up: " in out, err


def test_a_running_cluster_answers_at_once_refuses_other_options_and_shows_its_nodes(
    es_data: Path, tmp_path: Path, es_url: str
) -> None:
    port = free_node_port()
    started = run("es", "start", "--port", str(port), "--data", str(es_data), "--heap", "512m")
    assert started.returncode == 0, started.stderr
    pid = esnode.running_node(es_data).pid  # type: ignore[union-attr]

    # options that do not match what runs are an error naming what runs (was exit 0 "as it was started")
    other = run("es", "start", "--port", str(port + 1), "--nodes", "3", "--data", str(es_data))
    assert other.returncode == 1, other.stdout
    assert f"already runs from {es_data.resolve()} with --port {port} --nodes 1 --heap 512m" in other.stderr
    assert f"not --port {port + 1} --nodes 3" in other.stderr
    same = run("es", "start", "--port", str(port), "--data", str(es_data))
    assert same.returncode == 0 and same.stdout.startswith("already running: "), same.stderr
    same_heap = run("es", "start", "--port", str(port), "--data", str(es_data), "--heap", "524288K")
    assert same_heap.returncode == 0 and same_heap.stdout.startswith("already running: "), same_heap.stderr
    no_size = run("es", "start", "--data", str(tmp_path / "other"), "--heap", "512mb")
    assert no_size.returncode == 2 and "'512mb' is not a heap size" in no_size.stderr, no_size.stderr
    too_small = run("es", "start", "--data", str(tmp_path / "other"), "--heap", "512k")
    assert too_small.returncode == 2 and "512k is too small for Elasticsearch" in too_small.stderr, too_small.stderr
    assert not (tmp_path / "other").exists()

    # node 0 stopped: status says so (was "running", exit 0), and a start answers at once (it waited 180 s)
    assert ask_launcher(es_data, "stop", 0) == "stopped"
    status = run("es", "status", "--data", str(es_data))
    assert status.returncode == 4 and status.stdout.startswith("degraded: "), status.stdout
    assert f"node-0 http://127.0.0.1:{port}: stopped" in status.stdout
    began = time.monotonic()
    again = run("es", "start", "--port", str(port), "--data", str(es_data))
    assert again.returncode == 0 and again.stdout.startswith("already running: "), again.stderr
    assert "0 of 1 node(s) answer" in again.stderr
    assert time.monotonic() - began < 30

    # a copy of the state file names the original's launcher, which does not run from the copy
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(es_data / "neardup-es.json", copy)
    status = run("es", "status", "--data", str(copy))
    assert status.returncode == 3 and "not running" in status.stdout
    stop_copy = run("es", "stop", "--data", str(copy))
    assert stop_copy.returncode == 1 and "no embedded Elasticsearch is running" in stop_copy.stderr
    assert psutil.pid_exists(pid) and esnode.running_node(es_data) is not None


def test_a_node_that_failed_to_start_starts_when_asked_again(es_data: Path, es_url: str) -> None:
    """A node start that failed (its HTTP port taken) closes the node: asked again, it starts and serves (the
    half-started node stayed in the launcher, which then said "started" without HTTP)."""
    port = free_node_port()
    url = f"http://127.0.0.1:{port}"
    assert run("es", "start", "--port", str(port), "--data", str(es_data), "--heap", "512m").returncode == 0
    assert ask_launcher(es_data, "stop", 0) == "stopped"
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the stopped node's connections linger
        taken.bind(("127.0.0.1", port))
        taken.listen()
        busy = run("es", "node", "start", "0", "--data", str(es_data))
        assert busy.returncode == 1 and "Traceback" not in busy.stderr
        assert f"port {port} on 127.0.0.1 is busy: node-0 takes HTTP port {port}" in busy.stderr, busy.stderr
        assert ask_launcher(es_data, "start", 0).startswith("failed: ")  # the launcher itself tried
    again = run("es", "node", "start", "0", "--data", str(es_data))
    assert again.returncode == 0 and "node-0 started" in again.stdout, again.stderr
    assert answers(url)
    assert run("es", "status", "--data", str(es_data)).returncode == 0


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_while_starting_stops_what_it_started(es_data: Path, es_url: str, sig: signal.Signals) -> None:
    """The JVM runs in its own session, so Ctrl-C does not reach it: `es start` stops it (it kept starting); so does
    a SIGTERM (`timeout`, a supervisor)."""
    cmd = [*NEARDUP, "es", "start", "--port", str(free_node_port()), "--data", str(es_data), "--heap", "512m"]
    # as from a terminal: a test run started in the background (`make test &`) ignores SIGINT, and passes that on
    restore = functools.partial(signal.signal, signal.SIGINT, signal.SIG_DFL)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=restore)
    state = es_data / "neardup-es.json"
    deadline = time.monotonic() + 120
    while not state.exists():  # written as the launcher is launched, before the wait
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    pid = json.loads(state.read_text())["pid"]
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted: nothing was left starting from" in err and "Traceback" not in err
    assert not psutil.pid_exists(pid) and launchers_of(es_data) == []
    assert not state.exists()


def test_a_start_that_times_out_shows_what_elasticsearch_said_and_leaves_nothing(
    es_data: Path, es_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cluster that is not healthy in time: the error shows Elasticsearch's own lines of this run only (only the
    launcher's lines were written, appended to every earlier run's), and says the cluster was stopped (it said
    `neardup es stop` stops it). The node is real; its health is never taken as healthy here, so that the time out
    does not depend on how fast nodes start (two form a cluster in about 5 s)."""
    monkeypatch.setattr(esnode, "_healthy", lambda health, nodes: False)
    es_data.mkdir()
    (es_data / "neardup-es.log").write_text("a line of an earlier run\n", encoding="utf-8")
    home = Path(os.environ.get("NEARDUP_HOME") or default_home())
    with pytest.raises(EmbeddedESError) as failed:
        esnode.start(home, es_data, port=free_node_port(), nodes=1, heap="512m", timeout=15, plugin=False)
    assert "did not become healthy in time and was stopped" in str(failed.value)
    assert "neardup es stop" not in str(failed.value)
    tail = failed.value.log_tail
    # Elasticsearch's own lines, naming their node (which ones by 15 s depends on the machine's load)
    assert re.search(r"\[(INFO|WARN) \]\[o\.e\.[^\]]*\] \[node-0\] ", tail), tail
    assert "an earlier run" not in tail and "an earlier run" in (es_data / "neardup-es.log.1").read_text()
    assert launchers_of(es_data) == [] and esnode.running_node(es_data) is None

"""The embedded Elasticsearch: build the launcher with Maven, start it detached, find it, stop it.

The launcher (``es_runner/``, a small Maven project) runs real Elasticsearch 8.x nodes from
Elastic's jars on Maven Central inside one JVM, bound to 127.0.0.1, with neardup's own plugin
(``plugin/``: the ``neardup`` ingest processor and script language, the same build users install as a
zip) on its class path. This module owns its life cycle; the state of a running node is a JSON file in
its data directory (pid, port, url).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

from neardup.errors import EmbeddedESError

from .plugin_build import build_plugin
from .versions import ES_VERSION

__all__ = [
    "ES_VERSION",
    "NodeInfo",
    "TemporaryCluster",
    "build_runner",
    "running_node",
    "start",
    "stop",
    "temporary_cluster",
]

LAUNCHER_CLASS = "io.neardup.es.Launcher"
#: loaded by name from the class path (``--plugin``): the launcher does not compile against the plugin
PLUGIN_CLASS = "io.neardup.plugin.NeardupPlugin"
RUNNER_SOURCE = Path(__file__).parent / "es_runner"
STATE_FILE = "neardup-es.json"
# Launchers outlive the command that started them by design; holding their Popen objects here
# keeps Python from warning that a child is still running when the object is collected.
_DETACHED: list[subprocess.Popen[bytes]] = []
LOG_FILE = "neardup-es.log"


@dataclass(frozen=True)
class NodeInfo:
    pid: int
    port: int
    nodes: int
    url: str
    data: str
    started_at: float


def _java() -> str:
    java = shutil.which("java")
    if java is None:
        raise EmbeddedESError(
            "Java not found: install a JDK 17 or newer (e.g. `apt-get install openjdk-17-jdk-headless`)"
        )
    return java


def _source_digest() -> str:
    """A digest of the launcher's sources: a build is reused only for the sources it was built from."""
    digest = hashlib.sha256()
    for path in sorted(RUNNER_SOURCE.rglob("*")):
        if path.is_file() and "target" not in path.relative_to(RUNNER_SOURCE).parts:
            digest.update(str(path.relative_to(RUNNER_SOURCE)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def build_runner(home: Path) -> Path:
    """Build the launcher into ``home/es-runner-<version>-<digest of its sources>`` once; return that
    build directory.

    Maven downloads the Elasticsearch jars on first use (about 45 MB) and caches them in ~/.m2.
    """
    build_dir = home / f"es-runner-{ES_VERSION}-{_source_digest()}"
    jar = build_dir / "neardup-es-runner-0.1.0.jar"
    built = build_dir / "built.ok"  # written last: a build cut short is built again
    if built.exists():
        return build_dir
    _java()
    mvn = shutil.which("mvn")
    if mvn is None:
        raise EmbeddedESError(
            "Maven not found: install it (e.g. `apt-get install maven`) so neardup can fetch Elasticsearch"
        )
    build_dir.mkdir(parents=True, exist_ok=True)
    cmd = [
        mvn,
        "-q",
        "-B",
        "-f",
        str(RUNNER_SOURCE / "pom.xml"),
        f"-Dneardup.build.dir={build_dir}",
        "package",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not jar.exists():
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-20:])
        raise EmbeddedESError("building the embedded Elasticsearch with Maven failed", tail)
    built.write_text("", encoding="utf-8")
    return build_dir


def _state_path(data: Path) -> Path:
    return data / STATE_FILE


def _is_launcher(pid: int) -> bool:
    try:
        cmdline = psutil.Process(pid).cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False
    return LAUNCHER_CLASS in cmdline


def running_node(data: Path) -> NodeInfo | None:
    """The node recorded in ``data`` if its process is still alive, else None (stale state is removed)."""
    path = _state_path(data)
    try:
        info = NodeInfo(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None
    if _is_launcher(info.pid):
        return info
    path.unlink(missing_ok=True)
    return None


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # like the node itself: connections left in TIME_WAIT by a stopped node do not make it busy
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _health(url: str, timeout: float = 2.0) -> dict[str, object] | None:
    try:
        with urllib.request.urlopen(f"{url}/_cluster/health", timeout=timeout) as resp:
            body = json.loads(resp.read())
    except (OSError, ValueError, urllib.error.URLError):
        return None
    return body if isinstance(body, dict) else None


def _log_tail(data: Path, lines: int = 15) -> str:
    try:
        text = (data / LOG_FILE).read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _classpath(home: Path, plugin: bool) -> str:
    """The launcher's class path: the launcher with Elasticsearch, then (``plugin``) neardup's plugin with
    its libraries; each built once per version of its sources."""
    runner = build_runner(home)
    parts = [runner / "neardup-es-runner-0.1.0.jar", runner / "lib" / "*"]
    if plugin:
        build = build_plugin(home)
        parts += [build.jar, build.lib / "*"]
    return os.pathsep.join(str(p) for p in parts)


def start(
    home: Path,
    data: Path,
    port: int = 9200,
    nodes: int = 1,
    heap: str = "1g",
    timeout: float = 180.0,
    plugin: bool = True,
) -> tuple[NodeInfo, bool]:
    """Start the embedded cluster (or find the one already running). Returns (info, started_now).

    ``plugin`` False starts bare Elasticsearch nodes, without neardup's plugin (as a cluster where it is not
    installed)."""
    data = data.resolve()
    deadline = time.monotonic() + timeout
    current = running_node(data)
    if current is not None:
        if time.time() - current.started_at < timeout and _health(current.url) is None:  # an earlier start's, starting
            _wait_until_healthy(current, deadline, lambda: None if running_node(data) else "it stopped", data)
        return current, False
    if nodes < 1 or nodes > 9:
        raise EmbeddedESError("--nodes must be between 1 and 9")
    held = sorted(p.name for p in data.glob("node-[0-9]") if p.is_dir())
    if held and len(held) != nodes:  # the cluster state on disk expects its own nodes: it would wait for them
        raise EmbeddedESError(
            f"{data} holds the data of a {len(held)}-node cluster ({', '.join(held)}); start it with "
            f"`neardup es start --nodes {len(held)}`, or give another --data"
        )
    for stale in (data / "control").glob("st*-node-*"):  # a request to a cluster that is gone
        stale.unlink(missing_ok=True)
    java = _java()
    for p in [*range(port, port + nodes), *range(port + 100, port + 100 + nodes)]:
        if not _port_free(p):
            raise EmbeddedESError(
                f"port {p} on 127.0.0.1 is busy (the nodes take HTTP ports from {port} and transport ports from "
                f"{port + 100}); choose another first port: neardup es start --port, neardup demo --es-port"
            )
    classpath = _classpath(home, plugin)
    data.mkdir(parents=True, exist_ok=True)
    cmd = [
        java,
        f"-Xms{heap}",
        f"-Xmx{heap}",
        "-XX:+UseG1GC",
        "-Djava.awt.headless=true",
        "-Dfile.encoding=UTF-8",
        "-Dlog4j2.disable.jmx=true",
        "-cp",
        classpath,
        LAUNCHER_CLASS,
        "--port",
        str(port),
        "--nodes",
        str(nodes),
        "--data",
        str(data),
        *(["--plugin", PLUGIN_CLASS] if plugin else []),
    ]
    with open(data / LOG_FILE, "ab") as log:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    _DETACHED.append(proc)
    url = f"http://127.0.0.1:{port}"
    info = NodeInfo(pid=proc.pid, port=port, nodes=nodes, url=url, data=str(data), started_at=time.time())
    _state_path(data).write_text(json.dumps(asdict(info)))

    def exited() -> str | None:
        return None if proc.poll() is None else f"it exited with status {proc.returncode}"

    try:
        _wait_until_healthy(info, deadline, exited, data)
    except EmbeddedESError:
        _terminate(proc.pid)
        _state_path(data).unlink(missing_ok=True)
        raise
    return info, True


def _wait_until_healthy(info: NodeInfo, deadline: float, gone: Callable[[], str | None], data: Path) -> None:
    """Wait until the cluster ``info`` describes answers with all its nodes, green or yellow; raise when ``gone``
    says why it never will, or at ``deadline``."""
    while True:
        why = gone()
        if why is not None:
            raise EmbeddedESError(f"Elasticsearch at {info.url}: {why}", _log_tail(data))
        health = _health(info.url)
        if health and health.get("number_of_nodes") == info.nodes and health.get("status") in {"green", "yellow"}:
            return
        if time.monotonic() > deadline:
            raise EmbeddedESError(
                f"Elasticsearch at {info.url} (pid {info.pid}) did not become healthy in time; "
                "its log is below (`neardup es stop` stops it)",
                _log_tail(data),
            )
        time.sleep(0.5)


def _terminate(pid: int, grace: float = 30.0) -> None:
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        psutil.Process(pid).wait(timeout=grace)
    except psutil.NoSuchProcess:
        return
    except psutil.TimeoutExpired:
        os.killpg(pid, signal.SIGKILL)


def stop(data: Path) -> NodeInfo:
    """Stop the node recorded in ``data``; raise if none runs there."""
    data = data.resolve()
    info = running_node(data)
    if info is None:
        raise EmbeddedESError(f"no embedded Elasticsearch is running from {data}")
    _terminate(info.pid)
    for proc in [p for p in _DETACHED if p.pid == info.pid]:  # started by this process: reap it
        proc.wait(timeout=30)
        _DETACHED.remove(proc)
    _state_path(data).unlink(missing_ok=True)
    return info


def control(data: Path, node: int, action: str, timeout: float = 180.0) -> str:
    """Stop (``action`` "stop") or start again ("start") node ``node`` of the cluster running from
    ``data``, while the other nodes run on; wait until the launcher has done it and return the node's
    state ("stopped" or "started")."""
    if action not in ("stop", "start"):
        raise ValueError(f"action must be stop or start, not {action!r}")
    data = data.resolve()
    info = running_node(data)
    if info is None:
        raise EmbeddedESError(f"no embedded Elasticsearch is running from {data}")
    if not 0 <= node < info.nodes:
        raise EmbeddedESError(f"the cluster has nodes 0 to {info.nodes - 1}, not {node}")
    if action == "stop" and info.nodes == 1:
        raise EmbeddedESError("the cluster has only node 0: `neardup es stop` stops it")
    request = data / "control" / f"{action}-node-{node}"
    request.parent.mkdir(parents=True, exist_ok=True)
    request.touch()
    deadline = time.monotonic() + timeout
    while request.exists():
        if time.monotonic() > deadline:
            raise EmbeddedESError(f"node-{node} did not {action} within {timeout:.0f}s", _log_tail(data))
        time.sleep(0.2)
    state = (data / "control" / f"node-{node}").read_text(encoding="utf-8").strip()
    if state.startswith("failed"):
        raise EmbeddedESError(f"node-{node}: {state}", _log_tail(data))
    return state


class TemporaryCluster:
    """An embedded cluster on a new temporary data directory, kept across stops (so it starts again where it was
    left) until :meth:`remove` deletes it: what tests and benchmarks start for themselves."""

    def __init__(
        self, home: Path, port: int, heap: str = "1g", nodes: int = 1, plugin: bool = True, prefix: str = "neardup-"
    ) -> None:
        self.home = home
        self.port = port
        self.heap = heap
        self.nodes = nodes
        self.plugin = plugin
        self.data = Path(tempfile.mkdtemp(prefix=prefix))

    def start(self) -> NodeInfo:
        """Start the cluster (its data as it was left), or find it running."""
        info, _ = start(self.home, self.data, port=self.port, nodes=self.nodes, heap=self.heap, plugin=self.plugin)
        return info

    def stop(self) -> None:
        """Stop the cluster if it runs."""
        if running_node(self.data) is not None:
            stop(self.data)

    def remove(self) -> None:
        """Stop the cluster and delete its data (a large benchmark leaves gigabytes)."""
        self.stop()
        shutil.rmtree(self.data, ignore_errors=True)


@contextmanager
def temporary_cluster(
    home: Path, port: int, heap: str = "1g", nodes: int = 1, plugin: bool = True, prefix: str = "neardup-"
) -> Iterator[TemporaryCluster]:
    """A :class:`TemporaryCluster`, not started yet; removed at the end, pass or fail."""
    cluster = TemporaryCluster(home, port, heap, nodes, plugin, prefix)
    try:
        yield cluster
    finally:
        cluster.remove()

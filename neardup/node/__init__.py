"""The embedded Elasticsearch: build the launcher with Maven, start it detached, find it, stop it.

The launcher (``es_runner/``, a small Maven project) runs real Elasticsearch 8.x nodes from
Elastic's jars on Maven Central inside one JVM, bound to 127.0.0.1, with neardup's own plugin
(``plugin/``: the ``neardup`` ingest processor and script language, the same build users install as a
zip) on its class path. This module owns its life cycle; the state of a running node is a JSON file in
its data directory (pid, port, url), written under a lock file there by the one start that launched it. The
launcher's output, Elasticsearch's log included, goes to ``neardup-es.log`` beside it (the previous run's is kept
as ``neardup-es.log.1``).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

from neardup.errors import EmbeddedESError

from .plugin_build import build_plugin
from .versions import ES_VERSION

__all__ = [
    "ES_VERSION",
    "ClusterStatus",
    "NodeInfo",
    "NodeState",
    "TemporaryCluster",
    "build_runner",
    "cluster_status",
    "control",
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
#: held (flock) by a start while it checks, launches, records and waits: two starts never launch two clusters
LOCK_FILE = "neardup-es.lock"
#: the oldest Java Elasticsearch 8 runs on (and the launcher is compiled for)
JAVA_MIN = 17


@dataclass(frozen=True)
class NodeInfo:
    pid: int
    port: int
    nodes: int
    url: str
    data: str
    started_at: float
    heap: str = ""  # not in the state files of earlier versions

    @property
    def urls(self) -> list[str]:
        """Each node's HTTP address, node-0 first (``url`` is node-0's)."""
        return [f"http://127.0.0.1:{self.port + n}" for n in range(self.nodes)]


def _java() -> str:
    """The java of ES_JAVA_HOME (the variable Elasticsearch's own scripts read), else the one on PATH, else that of
    JAVA_HOME (a machine whose JDK is not on PATH), checked to be new enough. JAVA_HOME comes last: it often names a
    JDK other tools want, older than this one needs, while a good java is on PATH."""
    home = os.environ.get("ES_JAVA_HOME")
    if home:
        in_home = Path(home) / "bin" / "java"
        if not (in_home.is_file() and os.access(in_home, os.X_OK)):
            raise EmbeddedESError(
                f"ES_JAVA_HOME is {home}, which has no bin/java: point it at a JDK {JAVA_MIN} or newer"
            )
        return _new_enough(str(in_home), f"ES_JAVA_HOME ({in_home})")
    java = shutil.which("java")
    if java is not None:
        return _new_enough(java, java)
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.access(Path(java_home) / "bin" / "java", os.X_OK):
        return _new_enough(str(Path(java_home) / "bin" / "java"), f"JAVA_HOME ({Path(java_home) / 'bin' / 'java'})")
    raise EmbeddedESError(
        f"Java not found: install a JDK {JAVA_MIN} or newer (e.g. `apt-get install openjdk-17-jdk-headless`), "
        "or set ES_JAVA_HOME to one"
    )


_JAVA_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?')


@functools.lru_cache(maxsize=8)
def _java_major(java: str) -> int | None:
    """The major version ``java -version`` reports (8 for "1.8.0_392"), or None when it says none."""
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    found = _JAVA_VERSION.search(proc.stderr + proc.stdout)
    if found is None:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def _new_enough(java: str, where: str) -> str:
    # an older java fails only inside the JVM, with an UnsupportedClassVersionError in the log
    major = _java_major(java)
    if major is not None and major < JAVA_MIN:
        raise EmbeddedESError(
            f"{where} is Java {major}: Elasticsearch {ES_VERSION} needs a JDK {JAVA_MIN} or newer; "
            "set ES_JAVA_HOME (or JAVA_HOME) to one"
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


def _is_launcher(pid: int, data: Path) -> bool:
    """Whether ``pid`` is a launcher running from ``data``: a state file copied with its directory (``cp -r``)
    names the original's launcher, which is not this directory's."""
    try:
        cmdline = psutil.Process(pid).cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False
    if LAUNCHER_CLASS not in cmdline or "--data" not in cmdline[:-1]:
        return False
    try:  # the same directory, however spelt (a symbolic link, a bind mount)
        return os.path.samefile(cmdline[cmdline.index("--data") + 1], data)
    except OSError:  # its directory is gone
        return False


def running_node(data: Path) -> NodeInfo | None:
    """The node recorded in ``data`` if its launcher is still alive and runs from ``data``, else None (stale state
    is removed)."""
    data = data.resolve()
    path = _state_path(data)
    try:
        info = NodeInfo(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None
    if _is_launcher(info.pid, data):
        return info
    _forget(data, info.pid)  # unless a start recorded another launcher since it was read
    return None


def _record(data: Path, info: NodeInfo) -> None:
    """Write ``data``'s state file whole (a status reading it meanwhile sees the old one or the new, never half)."""
    part = _state_path(data).with_suffix(".part")
    part.write_text(json.dumps(asdict(info)))
    part.replace(_state_path(data))


def _forget(data: Path, pid: int) -> None:
    """Remove the state file if it still records ``pid``: never one another start wrote."""
    path = _state_path(data)
    try:
        recorded = json.loads(path.read_text()).get("pid")
    except (OSError, ValueError, AttributeError):
        return
    if recorded == pid:
        path.unlink(missing_ok=True)


@contextmanager
def _locked(data: Path) -> Iterator[None]:
    """Hold ``data``'s lock file until the block ends, waiting for another start to let go first: that start may
    be building the launcher and the plugin (minutes on a new machine) before its own wait, so this one waits as long,
    saying so once (Ctrl-C ends the wait)."""
    data.mkdir(parents=True, exist_ok=True)
    with open(data / LOCK_FILE, "ab") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(
                f"neardup: another `neardup es start` is starting Elasticsearch from {data}; waiting for it",
                file=sys.stderr,
                flush=True,
            )
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


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
    # master_timeout: without an elected master the health API would wait 30 s for one, then answer 503
    query = f"master_timeout={max(1, int(timeout))}s"
    try:
        with urllib.request.urlopen(f"{url}/_cluster/health?{query}", timeout=timeout + 1) as resp:
            body = json.loads(resp.read())
    except (OSError, ValueError, urllib.error.URLError):
        return None
    return body if isinstance(body, dict) else None


def _healthy(health: dict[str, object] | None, nodes: int) -> bool:
    """Whether a cluster health answer says all ``nodes`` are in, green or yellow."""
    return health is not None and health.get("number_of_nodes") == nodes and health.get("status") in {"green", "yellow"}


def _answers(url: str, timeout: float = 2.0) -> bool:
    """Whether a node serves HTTP at ``url`` (``GET /`` needs no elected master)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return bool(resp.status == 200)
    except (OSError, ValueError, urllib.error.URLError):
        return False


#: the frames of a Java stack trace: a tail of them says nothing
_STACK_FRAME = re.compile(r"^\s+(at |\.\.\. \d+ more)")


def _log_tail(data: Path, lines: int = 20, width: int = 600) -> str:
    """The last ``lines`` messages of this run's log (stack frames left out, long lines cut at ``width``)."""
    try:
        with open(data / LOG_FILE, "rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - 256_000))
            text = log.read().decode(errors="replace")
    except OSError:
        return ""
    kept = [line if len(line) <= width else line[:width] + " …" for line in text.splitlines()]
    return "\n".join([line for line in kept if not _STACK_FRAME.match(line)][-lines:])


def _new_log(data: Path) -> Path:
    """This run's log file, empty; the previous run's is kept as ``.1`` (so each file holds one run, and a failed
    start shows only its own lines)."""
    log = data / LOG_FILE
    if log.exists() and log.stat().st_size > 0:
        os.replace(log, data / f"{LOG_FILE}.1")
    return log


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

    A start holds ``data``'s lock file from its check to the end of its wait, so a second start waits for the
    first, then finds its cluster. A start that fails, times out or is interrupted (KeyboardInterrupt, re-raised)
    stops what it launched.

    ``plugin`` False starts bare Elasticsearch nodes, without neardup's plugin (as a cluster where it is not
    installed)."""
    if nodes < 1 or nodes > 9:
        raise EmbeddedESError("--nodes must be between 1 and 9")
    data = data.resolve()
    with _locked(data):
        current = running_node(data)
        if current is not None:  # under the lock: the start that launched it is done, whatever came of it
            return current, False
        _check_held(data, nodes)
        java = _java()
        _check_ports(port, nodes)
        classpath = _classpath(home, plugin)
        control = data / "control"
        # requests to, and states of, the nodes of a cluster that is gone
        for stale in [*control.glob("st*-node-*"), *control.glob("node-[0-9]")]:
            stale.unlink(missing_ok=True)
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
        with open(_new_log(data), "wb") as log:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        _DETACHED.append(proc)
        try:
            url = f"http://127.0.0.1:{port}"
            info = NodeInfo(
                pid=proc.pid, port=port, nodes=nodes, url=url, data=str(data), started_at=time.time(), heap=heap
            )
            _record(data, info)
            _wait_until_healthy(info, proc, time.monotonic() + timeout, data)
        except BaseException:  # failed, timed out, or Ctrl-C: the JVM (in its own session) would start on unseen
            _abandon(proc, data)
            raise
    return info, True


def _check_held(data: Path, nodes: int) -> None:
    """Refuse a start the node directories in ``data`` would keep from forming a cluster: the cluster state on disk
    expects its own nodes, node-0 to node-(N-1), and would wait for them."""
    held = sorted(int(p.name.removeprefix("node-")) for p in data.glob("node-[0-9]") if p.is_dir())
    if not held:
        return
    size = held[-1] + 1
    there = ", ".join(f"node-{n}" for n in held)
    missing = [f"node-{n}" for n in range(size) if n not in held]
    if missing:
        raise EmbeddedESError(
            f"{data} holds the data of a {size}-node cluster without {', '.join(missing)} (it has {there}): "
            f"no number of nodes starts it; put {' and '.join(missing)} back, or give another --data"
        )
    if size != nodes:
        raise EmbeddedESError(
            f"{data} holds the data of a {size}-node cluster ({there}); start it with "
            f"`neardup es start --nodes {size}`, or give another --data"
        )


def _node_ports(port: int, nodes: range) -> list[int]:
    """The HTTP ports, then the transport ports, of ``nodes`` of a cluster whose first port is ``port``."""
    return [*(port + n for n in nodes), *(port + 100 + n for n in nodes)]


def _busy(ports: list[int]) -> int | None:
    """The first of ``ports`` something listens on, or None."""
    return next((p for p in ports if not _port_free(p)), None)


def _check_ports(port: int, nodes: int) -> None:
    p = _busy(_node_ports(port, range(nodes)))
    if p is not None:
        raise EmbeddedESError(
            f"port {p} on 127.0.0.1 is busy (the nodes take HTTP ports from {port} and transport ports from "
            f"{port + 100}); choose another first port: neardup es start --port, neardup demo --es-port"
        )


def _wait_until_healthy(info: NodeInfo, proc: subprocess.Popen[bytes], deadline: float, data: Path) -> None:
    """Wait until the cluster ``info`` describes answers with all its nodes, green or yellow; raise when its launcher
    ``proc`` exits, or at ``deadline``."""
    while True:
        if proc.poll() is not None:
            tail = _log_tail(data)
            why = f"Elasticsearch at {info.url} exited with status {proc.returncode} before it was healthy"
            if "UnsupportedClassVersionError" in tail:
                why += f" (the launcher needs a JDK {JAVA_MIN} or newer: set ES_JAVA_HOME)"
            raise EmbeddedESError(f"{why}; its log ({data / LOG_FILE}) ends above", tail)
        if _healthy(_health(info.url), info.nodes):
            return
        if time.monotonic() > deadline:
            raise EmbeddedESError(
                f"Elasticsearch at {info.url} did not become healthy in time and was stopped; "
                f"its log ({data / LOG_FILE}) ends above",
                _log_tail(data),
            )
        time.sleep(0.5)


def _abandon(proc: subprocess.Popen[bytes], data: Path) -> None:
    """Stop a launcher this process started and forget it; a second Ctrl-C meanwhile kills it at once."""
    try:
        _terminate(proc.pid)
    except KeyboardInterrupt:
        _kill(proc.pid)
        raise
    finally:
        _reap(proc.pid)
        _forget(data, proc.pid)


def _reap(pid: int) -> None:
    for proc in [p for p in _DETACHED if p.pid == pid]:  # started by this process: collect its exit status
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            continue
        _DETACHED.remove(proc)


def _kill(pid: int) -> None:
    with suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


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
        _kill(pid)


def stop(data: Path) -> NodeInfo:
    """Stop the node recorded in ``data``; raise if none runs there."""
    data = data.resolve()
    info = running_node(data)
    if info is None:
        raise EmbeddedESError(f"no embedded Elasticsearch is running from {data}")
    _terminate(info.pid)
    _reap(info.pid)
    _forget(data, info.pid)
    return info


def _launcher_state(data: Path, node: int) -> str:
    """What the launcher last recorded of ``node``: "started", "stopped", "failed: …", or "" (nothing yet)."""
    try:
        return (data / "control" / f"node-{node}").read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def control(data: Path, node: int, action: str, timeout: float = 180.0) -> str:
    """Stop (``action`` "stop") or start again ("start") node ``node`` of the cluster running from
    ``data``, while the other nodes run on; wait until the launcher has done it (and a started node has joined the
    cluster, for up to :data:`_JOIN_SECONDS`) and return the node's state ("stopped" or "started")."""
    if action not in ("stop", "start"):
        raise ValueError(f"action must be stop or start, not {action!r}")
    data = data.resolve()
    info = running_node(data)
    if info is None:
        raise EmbeddedESError(f"no embedded Elasticsearch is running from {data}")
    if info.nodes == 1 and (node != 0 or action == "stop"):
        raise EmbeddedESError("the cluster has only node 0: `neardup es stop` stops it")
    if not 0 <= node < info.nodes:
        raise EmbeddedESError(f"the cluster has nodes 0 to {info.nodes - 1}, not {node}")
    if action == "start" and _launcher_state(data, node) != "started":  # as `es start` does, before the launcher
        p = _busy(_node_ports(info.port, range(node, node + 1)))
        if p is not None:
            raise EmbeddedESError(
                f"port {p} on 127.0.0.1 is busy: node-{node} takes HTTP port {info.port + node} and transport "
                f"port {info.port + 100 + node}; free it, then start the node again"
            )
    request = data / "control" / f"{action}-node-{node}"
    request.parent.mkdir(parents=True, exist_ok=True)
    request.touch()
    deadline = time.monotonic() + timeout
    while request.exists():
        if time.monotonic() > deadline:
            raise EmbeddedESError(f"node-{node} did not {action} within {timeout:.0f}s", _log_tail(data))
        time.sleep(0.2)
    state = _launcher_state(data, node)
    if state.startswith("failed"):
        raise EmbeddedESError(f"node-{node}: {state}", _log_tail(data))
    if action == "start":
        _wait_until_joined(info.urls[node], min(deadline, time.monotonic() + _JOIN_SECONDS))
    return state


#: how long a node started again may take to join its cluster before ``control`` returns all the same (the others
#: may have no master for it to join)
_JOIN_SECONDS = 30.0


def _wait_until_joined(url: str, deadline: float) -> None:
    """Wait until the node at ``url`` gives the cluster's health, which it does once it knows the elected master:
    once it has joined. A node's start returns before that (it does not wait for a cluster state)."""
    while _health(url) is None and time.monotonic() < deadline:
        time.sleep(0.2)


@dataclass(frozen=True)
class NodeState:
    """One node of a running cluster as ``neardup es status`` shows it."""

    name: str
    url: str
    answers: bool  # serves HTTP now
    launcher: str  # what the launcher recorded (see _launcher_state)

    def describe(self) -> str:
        number = self.name.removeprefix("node-")
        if self.answers:
            return "up"
        if self.launcher == "stopped":
            return f"stopped (`neardup es node start {number}` starts it again)"
        if self.launcher.startswith("failed"):
            return f"down, {self.launcher}"
        if self.launcher == "":
            return "not up yet (starting)"
        return "not answering"


@dataclass(frozen=True)
class ClusterStatus:
    """A running cluster as it answers: each node, and the cluster health when a node gives it."""

    info: NodeInfo
    nodes: tuple[NodeState, ...]
    health: dict[str, object] | None

    @property
    def whole(self) -> bool:
        """Every node answers, and the cluster is green or yellow with all of them."""
        return all(n.answers for n in self.nodes) and _healthy(self.health, self.info.nodes)


def cluster_status(data: Path) -> ClusterStatus | None:
    """The cluster running from ``data`` as it answers now (each node's HTTP port probed), or None when none runs."""
    data = data.resolve()
    info = running_node(data)
    if info is None:
        return None
    nodes = tuple(
        NodeState(f"node-{n}", url, _answers(url), _launcher_state(data, n)) for n, url in enumerate(info.urls)
    )
    health = next((h for h in (_health(n.url) for n in nodes if n.answers) if h is not None), None)
    return ClusterStatus(info, nodes, health)


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

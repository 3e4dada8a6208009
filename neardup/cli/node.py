"""``neardup es start|status|stop``: the embedded Elasticsearch."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from neardup import node as esnode
from neardup.config import Settings
from neardup.errors import EmbeddedESError

from .common import EXIT_INTERRUPTED, fail, reports_errors, settings_from

__all__ = ["es"]

F = TypeVar("F", bound=Callable[..., Any])

#: `neardup es status`: the launcher runs but a node does not answer, no master is elected, or the cluster is red
EXIT_DEGRADED = 4
#: `neardup es status`: no embedded Elasticsearch runs from the data directory
EXIT_NOT_RUNNING = 3


def _data_option(func: F) -> F:
    return click.option(
        "--data",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Data directory of the embedded node (default: $NEARDUP_HOME/es-data).",
    )(func)


def _data_dir(settings: Settings, data: Path | None) -> Path:
    return data if data is not None else settings.home / "es-data"


@click.group()
def es() -> None:
    """Run the embedded Elasticsearch (real 8.x nodes from Maven Central, loopback only)."""


_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
#: the least heap the embedded cluster starts with (the JVM refuses one under a few MiB; Elasticsearch needs more)
_LEAST_HEAP = 256 << 20


def _heap_bytes(size: str) -> int | None:
    """A JVM heap size (``-Xmx``'s form: digits, then k, m, g or t in either case) in bytes; None for another form.

    >>> _heap_bytes("1g") == _heap_bytes("1024M"), _heap_bytes("1.5g"), _heap_bytes("512")
    (True, None, 512)
    """
    digits, unit = (size[:-1], size[-1].lower()) if size[-1:].isalpha() else (size, "")
    if not digits.isdecimal() or not digits.isascii() or unit not in _UNITS:
        return None
    return int(digits) * _UNITS[unit]


def _heap(ctx: click.Context, param: click.Parameter, size: str) -> str:
    """``--heap``, checked before a JVM is started with it."""
    size_bytes = _heap_bytes(size)
    if size_bytes is None:
        raise click.BadParameter(
            f"{size!r} is not a heap size: digits, then k, m or g (512m, 2g)", param_hint="'--heap'"
        )
    if size_bytes < _LEAST_HEAP:
        raise click.BadParameter(f"{size} is too small for Elasticsearch: give 256m or more", param_hint="'--heap'")
    return size


@es.command("start")
@click.option("--port", type=click.IntRange(1024, 65000), default=9200, show_default=True)
@click.option("--nodes", type=click.IntRange(1, 9), default=1, show_default=True)
@click.option(
    "--heap",
    default="1g",
    show_default=True,
    callback=_heap,
    help="JVM heap for the whole cluster.",
)
@_data_option
@click.pass_context
@reports_errors
def es_start(ctx: click.Context, port: int, nodes: int, heap: str, data: Path | None) -> None:
    """Start the embedded cluster in the background and wait until it is healthy.

    If it already runs from the data directory, say so at once; options given that differ from the running
    cluster's are an error. Ctrl-C while it starts stops it again (exit 130)."""
    settings = settings_from(ctx)
    where = _data_dir(settings, data)

    def terminated(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # `timeout`, a closed terminal, a supervisor: stopped as Ctrl-C stops it

    previous = {sig: signal.signal(sig, terminated) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        info, started = esnode.start(settings.home, where, port=port, nodes=nodes, heap=heap)
    except KeyboardInterrupt:
        fail(f"interrupted: nothing was left starting from {where.resolve()}", EXIT_INTERRUPTED)
        return
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if started:
        click.echo(f"Elasticsearch {esnode.ES_VERSION} is up: {info.url} ({info.nodes} node(s), pid {info.pid})")
        if info.nodes > 1:  # the default NEARDUP_ES_URL names node-0 alone
            click.echo(f"every node, for NEARDUP_ES_URL (requests go on while one stops): {','.join(info.urls)}")
        return
    asked = {"port": port, "nodes": nodes, "heap": heap}
    given = [name for name in asked if ctx.get_parameter_source(name) not in _DEFAULTS]
    # a state file of an earlier version records no heap: then it cannot differ
    differs = [
        name for name in given if getattr(info, name) != "" and not _same(name, getattr(info, name), asked[name])
    ]
    if differs:
        runs = " ".join(f"--{name} {getattr(info, name)}" for name in asked if getattr(info, name) != "")
        raise EmbeddedESError(
            f"Elasticsearch already runs from {info.data} with {runs} (pid {info.pid}), not "
            + " ".join(f"--{name} {asked[name]}" for name in differs)
            + ": `neardup es stop` it first, or give another --data"
        )
    click.echo(f"already running: {info.url} ({info.nodes} node(s), pid {info.pid}); nothing to do")
    status = esnode.cluster_status(where)
    if status is not None and not status.whole:
        click.echo(f"but {_shortfall(status)}: see `neardup es status`", err=True)


_DEFAULTS = (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP, None)


def _same(option: str, running: Any, asked: Any) -> bool:
    """Does the running cluster's value of ``option`` equal the one asked for (heap sizes by their bytes)?"""
    return _heap_bytes(running) == _heap_bytes(asked) if option == "heap" else bool(running == asked)


def _shortfall(status: esnode.ClusterStatus) -> str:
    """What keeps a running cluster from being whole, in a few words."""
    down = [n.name for n in status.nodes if not n.answers]
    if down:
        return f"{len(status.nodes) - len(down)} of {len(status.nodes)} node(s) answer ({', '.join(down)} not)"
    health = status.health
    if health is None:
        return "no elected master answers"
    if health.get("number_of_nodes") != status.info.nodes:
        return f"the cluster has {health.get('number_of_nodes')} of its {status.info.nodes} nodes"
    return f"the cluster is {health.get('status')}"


@es.command("status")
@_data_option
@click.pass_context
@reports_errors
def es_status(ctx: click.Context, data: Path | None) -> None:
    """Say whether the embedded cluster runs, and what of it answers: each node, and the cluster health.

    Exit 0: it runs, every node answers and the cluster is green or yellow; 4: it runs degraded (a node does not
    answer, no master is elected, or the cluster is red); 3: it does not run."""
    settings = settings_from(ctx)
    status = esnode.cluster_status(_data_dir(settings, data))
    if status is None:
        click.echo("not running")
        sys.exit(EXIT_NOT_RUNNING)
    info, health = status.info, status.health
    if health is not None:
        cluster = f"cluster {health.get('status')}, {health.get('number_of_nodes')} of {info.nodes} node(s)"
    elif any(node.answers for node in status.nodes):
        cluster = "no cluster health (no elected master answers)"
    else:
        cluster = "no node answers"
    state = "running" if status.whole else "degraded"
    click.echo(f"{state}: {info.url} ({info.nodes} node(s), pid {info.pid}, data {info.data}); {cluster}")
    for node in status.nodes:
        click.echo(f"  {node.name} {node.url}: {node.describe()}")
    if not status.whole:
        sys.exit(EXIT_DEGRADED)


#: how long the nodes left after a stop may take to elect a master before the command says they have none (the last
#: probe of their health, 2 s a node, may end after it)
_ELECTION_SECONDS = 10.0


@es.command("node")
@click.argument("action", type=click.Choice(["stop", "start"]))
@click.argument("number", type=click.IntRange(0, 8))
@_data_option
@click.pass_context
@reports_errors
def es_node(ctx: click.Context, action: str, number: int, data: Path | None) -> None:
    """Stop one node of a multi-node embedded cluster, or start it again (the others keep running)."""
    settings = settings_from(ctx)
    where = _data_dir(settings, data)
    state = esnode.control(where, number, action)
    click.echo(f"node-{number} {state}")
    if action != "stop":
        return
    deadline = time.monotonic() + _ELECTION_SECONDS
    status = esnode.cluster_status(where)
    while status is not None and status.health is None and time.monotonic() < deadline:
        time.sleep(0.5)  # the stopped node was the master: the others may be electing another
        status = esnode.cluster_status(where)
    if status is None:
        return
    up = [n.name for n in status.nodes if n.answers]
    if status.health is None:
        click.echo(
            f"warning: the cluster has no elected master now: {', '.join(up) or 'no node'} of {status.info.nodes} "
            "cannot elect one (a majority of the nodes must be up), so searches and writes wait, then fail; "
            "`neardup es node start` a stopped node",
            err=True,
        )
    elif number == 0:
        click.echo(
            f"node-0 served {status.info.url}, the URL the default NEARDUP_ES_URL names; the cluster goes on at "
            f"{','.join(n.url for n in status.nodes if n.answers)} (name them in NEARDUP_ES_URL)",
            err=True,
        )


@es.command("stop")
@_data_option
@click.pass_context
@reports_errors
def es_stop(ctx: click.Context, data: Path | None) -> None:
    """Stop the embedded cluster started from this data directory."""
    settings = settings_from(ctx)
    info = esnode.stop(_data_dir(settings, data))
    click.echo(f"stopped Elasticsearch (pid {info.pid})")

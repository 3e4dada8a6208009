"""``neardup es start|status|stop``: the embedded Elasticsearch."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from neardup import node as esnode
from neardup.config import Settings

from .common import reports_errors, settings_from

__all__ = ["es"]

F = TypeVar("F", bound=Callable[..., Any])


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


@es.command("start")
@click.option("--port", type=click.IntRange(1024, 65000), default=9200, show_default=True)
@click.option("--nodes", type=click.IntRange(1, 9), default=1, show_default=True)
@click.option("--heap", default="1g", show_default=True, help="JVM heap for the whole cluster.")
@_data_option
@click.pass_context
@reports_errors
def es_start(ctx: click.Context, port: int, nodes: int, heap: str, data: Path | None) -> None:
    """Start the embedded cluster in the background and wait until it is healthy."""
    settings = settings_from(ctx)
    info, started = esnode.start(settings.home, _data_dir(settings, data), port=port, nodes=nodes, heap=heap)
    if started:
        click.echo(f"Elasticsearch {esnode.ES_VERSION} is up: {info.url} ({info.nodes} node(s), pid {info.pid})")
    else:
        asked = "" if (info.port, info.nodes) == (port, nodes) else " (as it was started; `neardup es stop` it first)"
        click.echo(f"already running: {info.url} ({info.nodes} node(s), pid {info.pid}){asked}; nothing to do")


@es.command("status")
@_data_option
@click.pass_context
@reports_errors
def es_status(ctx: click.Context, data: Path | None) -> None:
    """Say whether the embedded cluster runs (exit 0) or not (exit 3)."""
    settings = settings_from(ctx)
    info = esnode.running_node(_data_dir(settings, data))
    if info is None:
        click.echo("not running")
        sys.exit(3)
    click.echo(f"running: {info.url} ({info.nodes} node(s), pid {info.pid}, data {info.data})")


@es.command("node")
@click.argument("action", type=click.Choice(["stop", "start"]))
@click.argument("number", type=click.IntRange(0, 8))
@_data_option
@click.pass_context
@reports_errors
def es_node(ctx: click.Context, action: str, number: int, data: Path | None) -> None:
    """Stop one node of a multi-node embedded cluster, or start it again (the others keep running)."""
    settings = settings_from(ctx)
    state = esnode.control(_data_dir(settings, data), number, action)
    click.echo(f"node-{number} {state}")


@es.command("stop")
@_data_option
@click.pass_context
@reports_errors
def es_stop(ctx: click.Context, data: Path | None) -> None:
    """Stop the embedded cluster started from this data directory."""
    settings = settings_from(ctx)
    info = esnode.stop(_data_dir(settings, data))
    click.echo(f"stopped Elasticsearch (pid {info.pid})")

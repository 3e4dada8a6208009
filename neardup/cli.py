"""The ``neardup`` command line: one group, commands registered from small modules.

Every failure that neardup foresees exits non-zero with a one-line reason on stderr, never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click
from elasticsearch import ApiError as ESApiError
from elasticsearch import ConnectionError as ESConnectionError
from elasticsearch import ConnectionTimeout

from . import esnode
from .config import Settings
from .errors import EmbeddedESError, NeardupError

__all__ = ["cli", "main", "settings_from"]

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int = 1) -> None:
    click.echo(f"neardup: {message}", err=True)
    sys.exit(code)


def reports_errors(func: F) -> F:
    """Turn neardup's own errors into a one-line message and a non-zero exit."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except EmbeddedESError as exc:
            if exc.log_tail:
                click.echo(exc.log_tail, err=True)
            fail(str(exc), exc.exit_code)
        except NeardupError as exc:
            fail(str(exc), exc.exit_code)
        except ValueError as exc:  # bad NEARDUP_* values
            fail(str(exc), 2)
        except (ESConnectionError, ConnectionTimeout) as exc:
            fail(
                f"Elasticsearch is unreachable ({type(exc).__name__}); "
                "start it (neardup es start) or set NEARDUP_ES_URL"
            )
        except ESApiError as exc:
            fail(f"Elasticsearch refused the request: {exc.message} ({exc.meta.status})")

    return wrapper  # type: ignore[return-value]


def settings_from(ctx: click.Context) -> Settings:
    settings: Settings = ctx.ensure_object(dict).setdefault("settings", Settings.from_env())
    return settings


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="neardup")
def cli() -> None:
    """Near-duplicate detection for Elasticsearch, Chinese text first."""


# --------------------------------------------------------------------------- es


def _data_option(func: F) -> F:
    return click.option(
        "--data",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Data directory of the embedded node (default: $NEARDUP_HOME/es-data).",
    )(func)


def _data_dir(settings: Settings, data: Path | None) -> Path:
    return data if data is not None else settings.home / "es-data"


@cli.group()
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
        click.echo(f"already running: {info.url} (pid {info.pid}); nothing to do")


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


@es.command("stop")
@_data_option
@click.pass_context
@reports_errors
def es_stop(ctx: click.Context, data: Path | None) -> None:
    """Stop the embedded cluster started from this data directory."""
    settings = settings_from(ctx)
    info = esnode.stop(_data_dir(settings, data))
    click.echo(f"stopped Elasticsearch (pid {info.pid})")


# ------------------------------------------------------------------------ setup


@cli.command()
@click.argument("index")
@click.option("--es-url", envvar="NEARDUP_ES_URL", default=None, help="Elasticsearch URL.")
@click.pass_context
@reports_errors
def setup(ctx: click.Context, index: str, es_url: str | None) -> None:
    """Install the neardup templates and create INDEX (idempotent)."""
    from .store import make_client, setup_index

    settings = Settings.from_env(es_url=es_url)
    created = setup_index(make_client(settings), index)
    click.echo(f"{'created' if created else 'updated'} index {index} with the neardup mappings")


def main() -> None:
    from . import commands, es_commands

    commands.register(cli)
    es_commands.register(cli)
    cli(prog_name="neardup")

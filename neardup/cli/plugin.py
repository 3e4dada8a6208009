"""``neardup plugin build``: the Elasticsearch plugin users install on their own cluster."""

from __future__ import annotations

import click

from neardup.node.plugin_build import build_plugin

from .common import reports_errors, settings_from

__all__ = ["plugin"]


@click.group()
def plugin() -> None:
    """The neardup Elasticsearch plugin (the `neardup` ingest processor and script language)."""


@plugin.command("build")
@click.option("--tests", is_flag=True, help="Run the plugin's JUnit tests too.")
@click.pass_context
@reports_errors
def plugin_build(ctx: click.Context, tests: bool) -> None:
    """Build the plugin zip (once per version of its sources) and print its path.

    Install it on every node of a cluster with `bin/elasticsearch-plugin install file:///PATH`, restart the
    nodes, then `neardup setup INDEX --pipeline`.
    """
    settings = settings_from(ctx)
    build = build_plugin(settings.home, run_tests=tests)
    click.echo(str(build.zip))
    click.echo(f"install: bin/elasticsearch-plugin install {build.zip.as_uri()}", err=True)

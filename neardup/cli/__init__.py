"""The ``neardup`` command line: one click group; each module below holds a family of commands.

- :mod:`.offline`: ``fingerprint``, ``cluster``, ``idf fit``, ``eval`` (no Elasticsearch)
- :mod:`.index`: ``setup``, ``index``, ``dedupe``, ``reconcile``, ``import``, ``serve``, ``kibana``
- :mod:`.node`: ``es start|status|stop`` (the embedded Elasticsearch)
- :mod:`.plugin`: ``plugin build`` (the Elasticsearch plugin zip)
- :mod:`.demo`: ``demo``, the main job

A command's module is imported when that command runs (click's lazy subcommands), so ``neardup es
status`` does not pay for the service, SQLAlchemy or the evaluation: about 0.4 s to start instead of 2 s.
"""

from __future__ import annotations

import importlib

import click

__all__ = ["COMMANDS", "cli", "main"]

#: command name → ``module:attribute`` below this package
COMMANDS = {
    "fingerprint": "offline:fingerprint_cmd",
    "cluster": "offline:cluster_cmd",
    "idf": "offline:idf",
    "eval": "offline:eval_cmd",
    "setup": "index:setup_cmd",
    "index": "index:index_cmd",
    "dedupe": "index:dedupe_cmd",
    "reconcile": "index:reconcile_cmd",
    "import": "index:import_cmd",
    "serve": "index:serve_cmd",
    "kibana": "index:kibana",
    "es": "node:es",
    "plugin": "plugin:plugin",
    "demo": "demo:demo_cmd",
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = COMMANDS.get(cmd_name)
        if spec is None:
            return None
        module, attribute = spec.split(":")
        command: click.Command = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="neardup")
def cli() -> None:
    """Near-duplicate detection for Elasticsearch, Chinese text first."""


def main() -> None:
    cli(prog_name="neardup")

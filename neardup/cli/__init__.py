"""The ``neardup`` command line: one click group; each module below adds a family of commands.

- :mod:`.offline`: ``fingerprint``, ``cluster``, ``idf fit``, ``eval`` (no Elasticsearch)
- :mod:`.index`: ``setup``, ``index``, ``dedupe``, ``reconcile``, ``import``, ``serve``, ``kibana``
- :mod:`.node`: ``es start|status|stop`` (the embedded Elasticsearch)
- :mod:`.demo`: ``demo``, the main job
"""

from __future__ import annotations

import click

from . import demo, index, node, offline

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="neardup")
def cli() -> None:
    """Near-duplicate detection for Elasticsearch, Chinese text first."""


for _command in (*offline.COMMANDS, *index.COMMANDS, node.es, demo.demo_cmd):
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="neardup")

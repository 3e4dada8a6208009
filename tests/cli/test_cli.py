"""The one command group (:mod:`neardup.cli`): every command of the command modules is reachable, and a
command's module is imported only when it runs."""

from __future__ import annotations

import importlib
import subprocess
import sys

import click
from click.testing import CliRunner

from neardup.cli import COMMANDS, cli


def test_every_command_of_the_command_modules_is_registered_once() -> None:
    defined: set[int] = set()
    nested: set[int] = set()
    for module in ("offline", "index", "node", "plugin", "demo"):
        for value in vars(importlib.import_module(f"neardup.cli.{module}")).values():
            if isinstance(value, click.Command):
                defined.add(id(value))
                if isinstance(value, click.Group):
                    nested |= {id(c) for c in value.commands.values()}
    ctx = click.Context(cli)
    registered = [cli.get_command(ctx, name) for name in cli.list_commands(ctx)]
    assert all(c is not None for c in registered)
    assert {id(c) for c in registered} == defined - nested
    assert len(registered) == len(COMMANDS)
    assert cli.get_command(ctx, "no-such-command") is None


def test_help_lists_every_command() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert all(name in result.output for name in COMMANDS)


def test_a_node_command_does_not_import_the_service_or_sqlalchemy() -> None:
    code = (
        "import sys; from neardup.cli import cli; from click.testing import CliRunner; "
        "CliRunner().invoke(cli, ['es', '--help']); "
        "print(sorted(m for m in ('neardup.service', 'sqlalchemy', 'neardup.evaluation') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"

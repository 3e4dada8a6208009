"""Embedded Elasticsearch clusters a test starts for itself (:class:`neardup.node.TemporaryCluster`): the session's
node (conftest), and nodes a test may stop and start again, or starts without neardup's plugin."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from neardup.config import default_home
from neardup.node import TemporaryCluster, temporary_cluster
from tests.ports import free_node_port

__all__ = ["new_node", "own_node"]


def _home() -> Path:
    return Path(os.environ.get("NEARDUP_HOME") or default_home())


def new_node(prefix: str, heap: str, plugin: bool = True) -> TemporaryCluster:
    """A one-node :class:`TemporaryCluster` on a free port, not started yet; the caller removes it."""
    return TemporaryCluster(_home(), free_node_port(), heap, plugin=plugin, prefix=prefix)


@contextmanager
def own_node(prefix: str, heap: str, plugin: bool = True) -> Iterator[TemporaryCluster]:
    """A one-node cluster on a free port, not started yet; stopped and deleted at the end, pass or fail."""
    with temporary_cluster(_home(), free_node_port(), heap, plugin=plugin, prefix=prefix) as node:
        yield node

"""Embedded Elasticsearch nodes a test starts for itself: the session's node (conftest), and nodes a test may
stop and start again, or starts without neardup's plugin."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from neardup import node as esnode
from neardup.config import default_home
from tests.ports import free_node_port

__all__ = ["OwnNode", "own_node"]


class OwnNode:
    """One embedded node on a data directory and port of its own, kept across stops, so a test can stop it and
    start it again where it was."""

    def __init__(self, prefix: str, heap: str, plugin: bool = True) -> None:
        self.home = Path(os.environ.get("NEARDUP_HOME") or default_home())
        self.data = Path(tempfile.mkdtemp(prefix=prefix))
        self.port = free_node_port()
        self.heap = heap
        self.plugin = plugin

    def start(self) -> str:
        """Start the node (its data as it was left); its URL."""
        info, _ = esnode.start(self.home, self.data, port=self.port, heap=self.heap, plugin=self.plugin)
        return info.url

    def stop(self) -> None:
        """Stop the node if it runs."""
        if esnode.running_node(self.data) is not None:
            esnode.stop(self.data)

    def remove(self) -> None:
        """Stop the node and delete its data."""
        self.stop()
        shutil.rmtree(self.data, ignore_errors=True)


@contextmanager
def own_node(prefix: str, heap: str, plugin: bool = True) -> Iterator[OwnNode]:
    """An :class:`OwnNode`, not started yet; stopped and deleted at the end, pass or fail."""
    node = OwnNode(prefix, heap, plugin)
    try:
        yield node
    finally:
        node.remove()

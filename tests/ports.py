"""Free local ports for what the tests start themselves."""

from __future__ import annotations

import socket

__all__ = ["free_node_port"]


def free_node_port() -> int:
    """A free HTTP port for an embedded Elasticsearch node whose transport neighbour (port + 100) is free too."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port: int = sock.getsockname()[1]
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port + 100))
            except OSError:
                continue
        return port

"""The production server: gunicorn with several worker processes, each with its own app
(and so its own Elasticsearch client).

Request lines and header fields are limited by the app (``MAX_REQUEST_LINE_BYTES``,
``MAX_HEADER_FIELD_BYTES`` in ``service/__init__.py``), which refuses with the API's JSON errors; gunicorn
lets them through to it, and stops only what is over twice those limits. Its header-field limit is set
so; its request-line limit can only be set up to 8,190 bytes (too short for a ``q`` of 2,000 Chinese
characters, 18,000 bytes percent-encoded) or to none, and none is unbounded and quadratic in gunicorn's
own parser (a 4 MiB line cost 1.5 s of a worker), so it is set to none and the request line is bounded
by :class:`_BoundedRequest`. What gunicorn refuses itself (those, more than 100 header fields, a request it
cannot parse) is answered in the same JSON shape, not its HTML page.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from gunicorn import util
from gunicorn.app.base import BaseApplication
from gunicorn.http.message import Request
from gunicorn.http.parser import RequestParser

from neardup.config import Settings

from . import MAX_HEADER_FIELD_BYTES, MAX_REQUEST_LINE_BYTES, create_app
from .errors import error_body

__all__ = ["serve", "shared_journal"]


class _BoundedRequest(Request):  # type: ignore[misc]
    """gunicorn's HTTP/1 request, its request line read up to twice the app's limit (then a 414)."""

    def read_line(self, unreader: Any, buf: Any, limit: int = 0) -> Any:
        return super().read_line(unreader, buf, limit or 2 * MAX_REQUEST_LINE_BYTES)


def _write_json_error(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's ``util.write_error`` (its refusals of requests the app never sees), in the JSON error shape."""
    body = json.dumps(error_body(status_int, None, mesg or reason)).encode("utf-8")
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


class _Gunicorn(BaseApplication):  # type: ignore[misc]
    def __init__(self, settings: Settings, options: dict[str, Any]) -> None:
        self.settings = settings
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)
        # gunicorn calls util.write_error for every request it refuses before the app, and parses
        # HTTP/1 requests with RequestParser.mesg_class; this process (and the workers it forks)
        # serves only this app
        util.write_error = _write_json_error
        RequestParser.mesg_class = _BoundedRequest

    def load(self) -> Any:
        return create_app(self.settings)


@contextmanager
def shared_journal(settings: Settings, workers: int) -> Iterator[Settings]:
    """``settings`` with a recent-writes journal for ``workers`` processes: a new one in memory-backed
    storage (removed on leaving) when there are several workers and ``recent_journal`` names none; a worker
    then finds the near-duplicates another wrote before the next refresh (:mod:`neardup.recent.journal`)."""
    if workers < 2 or settings.recent_journal:
        yield settings
        return
    shm = "/dev/shm"
    with tempfile.TemporaryDirectory(prefix="neardup-", dir=shm if os.access(shm, os.W_OK) else None) as where:
        yield replace(settings, recent_journal=os.path.join(where, "recent.sqlite3"))


def serve(settings: Settings, host: str, port: int, workers: int) -> None:
    """Serve until interrupted."""
    with shared_journal(settings, workers) as shared:
        _run(shared, host, port, workers)


def _run(settings: Settings, host: str, port: int, workers: int) -> None:
    options = {
        "bind": f"{host}:{port}",
        "workers": workers,
        "threads": 4,
        "timeout": 120,
        "accesslog": "-",
        "errorlog": "-",
        "limit_request_line": 0,  # none: _BoundedRequest bounds it, the app's own limit applies (module doc)
        "limit_request_field_size": 2 * MAX_HEADER_FIELD_BYTES,
    }
    _Gunicorn(settings, options).run()

"""A proxy in front of Elasticsearch that holds back, drops or refuses one ``_bulk`` request: what a slow network,
a node that dies after a write, or a shard without a copy do to a client, made to happen on the request a test
names."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

#: the client timeout the held answer outlasts (the proxy holds it twice as long); well above what Elasticsearch takes
#: to carry out a test's small bulk, which the client's undo must come after
TIMEOUT = 4.0


class HoldingProxy(ThreadingHTTPServer):
    """Forwards every request to ``target``; the answer to the ``hold``-th request whose path holds ``path`` (a
    ``_bulk`` by default; counting from 1, in :attr:`matched`), and to
    the ``times - 1`` after it, comes only after ``TIMEOUT`` and more, when the client has given up on it; with
    ``refuse``, such a request is not forwarded, and every item of it is refused with that status (503 as a shard
    without a copy would, 429 as a full queue would; ``True``: 503); with ``fail``, it is not forwarded and is
    answered with that HTTP status and an error as Elasticsearch words one; with ``drop``, it is forwarded and its
    connection closed without an answer (a node that dies after the write)."""

    daemon_threads = True

    def __init__(
        self,
        target: str,
        hold: int,
        refuse: bool | int = False,
        drop: bool = False,
        times: int = 1,
        path: str = "_bulk",
        fail: int = 0,
    ) -> None:
        super().__init__(("127.0.0.1", 0), _Forward)
        self.target = urlsplit(target)
        self.held = range(hold, hold + times)
        self.refuse = 503 if refuse is True else int(refuse)
        self.drop = drop
        self.fail = fail
        self.path = path
        #: how many requests ``path`` matched so far
        self.matched = 0
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Forward(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: HoldingProxy

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        held = False
        if self.server.path in self.path:
            with self.server.lock:
                self.server.matched += 1
                held = self.server.matched in self.server.held
        headers = [("Content-Type", "application/json"), ("X-Elastic-Product", "Elasticsearch")]
        if held and self.server.refuse:
            self._answer(200, headers, refusal(body, self.server.refuse))
            return
        if held and self.server.fail:
            error = {"type": "unavailable", "reason": "failed by the test's proxy"}
            self._answer(self.server.fail, headers, json.dumps({"error": error, "status": self.server.fail}).encode())
            return
        target = self.server.target
        conn = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        conn.request(self.command, self.path, body=body, headers=headers)
        answer = conn.getresponse()
        data = answer.read()
        conn.close()
        if held:  # carried out by Elasticsearch; the client hears nothing in time
            if not self.server.drop:
                time.sleep(TIMEOUT * 2)
            self.close_connection = True
            return
        self._answer(answer.status, answer.getheaders(), data)

    def _answer(self, status: int, headers: list[tuple[str, str]], data: bytes) -> None:
        self.send_response(status)
        for k, v in headers:
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _forward


def refusal(bulk: bytes, status: int) -> bytes:
    """A bulk answer refusing every item of ``bulk`` (NDJSON of action and source lines) with ``status``."""
    lines = [json.loads(line) for line in bulk.decode("utf-8").splitlines() if line.strip()]
    items = [
        {
            op: {
                "_index": meta.get("_index"),
                "_id": meta.get("_id"),
                "status": status,
                "error": {"type": "unavailable", "reason": "refused by the test's proxy"},
            }
        }
        for action in lines[::2]
        for op, meta in action.items()
    ]
    return json.dumps({"took": 1, "errors": True, "items": items}).encode("utf-8")


@contextmanager
def holding_proxy(target: str, **how: Any) -> Iterator[HoldingProxy]:
    """A running :class:`HoldingProxy` in front of ``target`` (``how``: its arguments), shut when the block ends."""
    proxy = HoldingProxy(target, **how)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        proxy.shutdown()
        proxy.server_close()

"""Helpers of the tests that talk HTTP to a real ``neardup serve``: starting one, one request to it, the JSON
error shape; and the text of the request-limit tests."""

from __future__ import annotations

import http.client
import json
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: the text of the request-limit tests (``test_body_limit``, ``test_small_limits``)
TEXT = "国务院今天召开常务会议，部署进一步推动经济稳定增长的措施，会议指出要扩大内需，稳定就业。"


def json_error(status: int, body: Any, expected: int) -> dict[str, Any]:
    """The JSON error shape of service/errors.py, with the expected status."""
    assert status == expected, (status, body)
    assert isinstance(body, dict) and set(body) == {"error"}, body
    err: dict[str, Any] = body["error"]
    assert err["type"] and err["message"], err
    return err


@contextmanager
def serve_one_worker(neardup_serve: Callable[..., Any], **settings: str) -> Iterator[str]:
    """A real ``neardup serve`` (gunicorn, one worker); its base URL. It must log no traceback."""
    with neardup_serve(workers=1, **settings) as srv:
        yield srv.url
    assert "Traceback" not in srv.log and srv.log.count("Booting worker") == 1, srv.log[-3000:]


def http_json(
    url: str, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    """One request through http.client; an iterable body goes chunked (no Content-Length). Status and
    the body decoded as JSON (the raw text when it is not JSON, so a test shows what came back)."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers or {}, encode_chunked=not isinstance(body, bytes | None))
        resp = conn.getresponse()
        raw = resp.read()
        assert resp.getheader("Content-Type", "").startswith("application/json"), (resp.status, raw[:300])
        return resp.status, json.loads(raw)
    finally:
        conn.close()

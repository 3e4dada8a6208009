"""A request body over the size limit, chunked or not, is refused whole (413, or 411 for a stream that cannot be
read safely) and never cut and written in part, through the Flask test client and a real ``neardup serve``."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from neardup.service import create_app
from tests.service.http_helpers import TEXT, http_json, json_error, serve_one_worker

pytestmark = pytest.mark.es


def _line(k: int) -> bytes:
    """One NDJSON line; every line has the same length, so a cut at a multiple of it falls between lines."""
    doc = {"id": f"c{k:04d}", "text": f"{TEXT}第{k:04d}号"}
    return (json.dumps(doc, ensure_ascii=False) + "\n").encode("utf-8")


LINE = len(_line(0))
MAX_BODY = LINE * 20  # the body limit in these tests: exactly 20 lines


def _body(lines: int) -> bytes:
    return b"".join(_line(k) for k in range(lines))


def _count(es: Elasticsearch, index: str) -> int:
    if not es.indices.exists(index=index):
        return 0
    es.indices.refresh(index=index)
    return int(es.count(index=index)["count"])


@pytest.fixture
def api(es_url: str) -> FlaskClient:
    return create_app({"es_url": es_url, "max_body_bytes": MAX_BODY}).test_client()


@pytest.fixture(scope="module")
def served(neardup_serve: Callable[..., Any]) -> Iterator[str]:
    """A real ``neardup serve`` with the same body limit as ``api``."""
    with serve_one_worker(neardup_serve, max_body_bytes=str(MAX_BODY)) as url:
        yield url


def test_chunked_body_over_the_limit_is_refused_not_cut_flask_client(
    api: FlaskClient, es: Elasticsearch, index_name: str
) -> None:
    """A chunked stream (no Content-Length), terminated by the server (as gunicorn says it is): 30 lines
    against a 20-line limit. Cut at the limit it would still be valid NDJSON; it must be refused whole."""
    path = f"/v1/indices/{index_name}/documents?refresh=true"
    terminated = {"wsgi.input_terminated": True, "HTTP_TRANSFER_ENCODING": "chunked"}
    resp = api.post(
        path, input_stream=io.BytesIO(_body(30)), content_type="application/x-ndjson", environ_overrides=terminated
    )
    err = json_error(resp.status_code, resp.json, 413)
    assert err["type"] == "request_too_large" and str(MAX_BODY) in err["message"]
    assert _count(es, index_name) == 0
    # one byte over is refused too (the cut would fall inside the last line's newline)
    resp = api.post(
        path,
        input_stream=io.BytesIO(_body(20) + b" "),
        content_type="application/x-ndjson",
        environ_overrides=terminated,
    )
    json_error(resp.status_code, resp.json, 413)
    assert _count(es, index_name) == 0
    # exactly at the limit, streamed: every line is read and written
    resp = api.post(
        path, input_stream=io.BytesIO(_body(20)), content_type="application/x-ndjson", environ_overrides=terminated
    )
    assert resp.status_code == 200, resp.json
    assert len(resp.json["items"]) == 20 and _count(es, index_name) == 20


def test_a_stream_the_server_does_not_terminate_is_refused_not_read_as_empty(
    api: FlaskClient, es: Elasticsearch, index_name: str
) -> None:
    """Chunked, but the WSGI server does not say it ends the stream: it cannot be read safely, and an
    empty body would silently drop it: 411, not a 400 about an empty or broken body."""
    resp = api.post(
        f"/v1/indices/{index_name}/documents",
        input_stream=io.BytesIO(_body(2)),
        content_type="application/x-ndjson",
        headers={"Transfer-Encoding": "chunked"},
    )
    assert json_error(resp.status_code, resp.json, 411)["type"] == "length_required"
    assert _count(es, index_name) == 0


def test_chunked_body_over_the_limit_is_refused_not_cut_gunicorn(
    served: str, es: Elasticsearch, index_name: str
) -> None:
    path = f"/v1/indices/{index_name}/documents?refresh=true"
    ndjson = {"Content-Type": "application/x-ndjson"}
    status, body = http_json(served, "POST", path, (_line(k) for k in range(30)), ndjson)
    err = json_error(status, body, 413)
    assert err["type"] == "request_too_large"
    assert _count(es, index_name) == 0
    # the same body with Content-Length: refused before it is read
    status, body = http_json(served, "POST", path, _body(30), ndjson)
    json_error(status, body, 413)
    assert _count(es, index_name) == 0
    # chunked and under the limit: all of it arrives
    status, body = http_json(served, "POST", path, (_line(k) for k in range(20)), ndjson)
    assert status == 200, body
    assert _count(es, index_name) == 20


def test_a_body_up_to_twice_the_limit_gets_its_413_not_a_broken_pipe(
    neardup_serve: Callable[..., Any], es: Elasticsearch, index_name: str
) -> None:
    """Most clients (http.client, requests) send their whole body before they read the answer. When the
    server refused at the limit and closed, 14 MiB were still unsent: the client saw a broken pipe, not
    the 413. The server reads (and drops) up to another limit's worth first."""
    block = _body(6000)  # 1 MiB of NDJSON
    blocks = 30 * 1024 * 1024 // len(block)  # 30 MiB: under twice the default 16 MiB
    path = f"/v1/indices/{index_name}/documents"
    ndjson = {"Content-Type": "application/x-ndjson"}
    with serve_one_worker(neardup_serve) as url:  # the default limit
        status, body = http_json(url, "POST", path, (block for _ in range(blocks)), ndjson)
        assert json_error(status, body, 413)["type"] == "request_too_large"
        status, body = http_json(url, "POST", path, block * blocks, ndjson)
        assert json_error(status, body, 413)["type"] == "request_too_large"
    assert _count(es, index_name) == 0

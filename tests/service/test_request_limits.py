"""Request limits, against the real Elasticsearch: the body limit refuses a chunked body (no
Content-Length) instead of cutting it, ``from + size`` stays inside Elasticsearch's result window,
request lines and header fields get the service's own limits and JSON refusals (through a real
``neardup serve`` too, not only the Flask test client), and ids containing ``/`` are reachable."""

from __future__ import annotations

import http.client
import io
import json
import socket
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from neardup.service import create_app

pytestmark = pytest.mark.es

TEXT = "国务院今天召开常务会议，部署进一步推动经济稳定增长的措施，会议指出要扩大内需，稳定就业。"


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


def _error(status: int, body: Any, expected: int) -> dict[str, Any]:
    """The JSON error shape of service/errors.py, with the expected status."""
    assert status == expected, (status, body)
    assert isinstance(body, dict) and set(body) == {"error"}, body
    err: dict[str, Any] = body["error"]
    assert err["type"] and err["message"], err
    return err


@pytest.fixture
def api(es_url: str) -> FlaskClient:
    return create_app({"es_url": es_url, "max_body_bytes": MAX_BODY}).test_client()


@contextmanager
def _serve(neardup_serve: Callable[..., Any], **settings: str) -> Iterator[str]:
    """A real ``neardup serve`` (gunicorn, one worker); its base URL. It must log no traceback."""
    with neardup_serve(workers=1, **settings) as srv:
        yield srv.url
    assert "Traceback" not in srv.log and srv.log.count("Booting worker") == 1, srv.log[-3000:]


@pytest.fixture(scope="module")
def served(neardup_serve: Callable[..., Any]) -> Iterator[str]:
    """A real ``neardup serve`` with the same body limit as ``api``."""
    with _serve(neardup_serve, max_body_bytes=str(MAX_BODY)) as url:
        yield url


def _http(url: str, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
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


def _raw(url: str, request: bytes) -> tuple[int, bytes, Any]:
    """Send bytes as they are (for request lines and headers http.client would not send); status, head, JSON body."""
    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname or "", parts.port or 80), timeout=30) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    assert b"content-type: application/json" in head.lower(), data[:400]
    return status, head, json.loads(body)


# -- 1. a chunked body over the limit is refused, never cut -------------------------------------


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
    err = _error(resp.status_code, resp.json, 413)
    assert err["type"] == "request_too_large" and str(MAX_BODY) in err["message"]
    assert _count(es, index_name) == 0
    # one byte over is refused too (the cut would fall inside the last line's newline)
    resp = api.post(
        path,
        input_stream=io.BytesIO(_body(20) + b" "),
        content_type="application/x-ndjson",
        environ_overrides=terminated,
    )
    _error(resp.status_code, resp.json, 413)
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
    assert _error(resp.status_code, resp.json, 411)["type"] == "length_required"
    assert _count(es, index_name) == 0


def test_chunked_body_over_the_limit_is_refused_not_cut_gunicorn(
    served: str, es: Elasticsearch, index_name: str
) -> None:
    path = f"/v1/indices/{index_name}/documents?refresh=true"
    ndjson = {"Content-Type": "application/x-ndjson"}
    status, body = _http(served, "POST", path, (_line(k) for k in range(30)), ndjson)
    err = _error(status, body, 413)
    assert err["type"] == "request_too_large"
    assert _count(es, index_name) == 0
    # the same body with Content-Length: refused before it is read
    status, body = _http(served, "POST", path, _body(30), ndjson)
    _error(status, body, 413)
    assert _count(es, index_name) == 0
    # chunked and under the limit: all of it arrives
    status, body = _http(served, "POST", path, (_line(k) for k in range(20)), ndjson)
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
    with _serve(neardup_serve) as url:  # the default limit
        status, body = _http(url, "POST", path, (block for _ in range(blocks)), ndjson)
        assert _error(status, body, 413)["type"] == "request_too_large"
        status, body = _http(url, "POST", path, block * blocks, ndjson)
        assert _error(status, body, 413)["type"] == "request_too_large"
    assert _count(es, index_name) == 0


# -- 3a. from + size inside Elasticsearch's result window ----------------------------------------


def test_from_plus_size_over_the_result_window_is_a_400(api: FlaskClient, index_name: str) -> None:
    assert (
        api.post(f"/v1/indices/{index_name}/documents?refresh=true", json={"id": "a", "text": TEXT}).status_code == 200
    )
    search = f"/v1/indices/{index_name}/search"
    for query in ("from=10000", "from=9991&size=10", "from=9901&size=100&hide_duplicates=true"):
        resp = api.get(f"{search}?q=国务院&{query}")
        err = _error(resp.status_code, resp.json, 400)
        assert "10000" in json.dumps(err) and "max_result_window" in json.dumps(err), err
    for query in ("from=9990&size=10", "from=9900&size=100&hide_duplicates=true", "from=0&size=0"):
        resp = api.get(f"{search}?q=国务院&{query}")
        assert resp.status_code == 200, (query, resp.json)


# -- 3b. request lines and header fields: long enough for the documented limits, JSON refusals -----


def test_a_long_query_is_served_and_an_overlong_request_line_is_a_json_414(served: str, index_name: str) -> None:
    doc = json.dumps({"id": "long-q", "text": TEXT}, ensure_ascii=False).encode("utf-8")
    status, body = _http(
        served, "POST", f"/v1/indices/{index_name}/documents?refresh=true", doc, {"Content-Type": "application/json"}
    )
    assert status == 200, body
    for chars in (450, 2000):  # 2,000 characters is the documented limit of q: 18 KB percent-encoded
        q = (TEXT * 50)[:chars]
        status, body = _http(served, "GET", f"/v1/indices/{index_name}/search?q={urllib.parse.quote(q)}")
        assert status == 200, (chars, body)
        assert [h["id"] for h in body["hits"]] == ["long-q"]
    # 2,001 characters: the schema's own 400
    q = urllib.parse.quote((TEXT * 50)[:2001])
    status, body = _http(served, "GET", f"/v1/indices/{index_name}/search?q={q}")
    assert "q" in json.dumps(_error(status, body, 400))
    # a request line over the service's limit (32 KiB): a JSON 414, from the app
    status, body = _http(served, "GET", f"/v1/indices/{index_name}/search?q={'a' * 40_000}")
    err = _error(status, body, 414)
    assert err["type"] == "uri_too_long" and "32768" in err["message"]


def test_header_fields_over_the_limit_are_a_json_431(served: str) -> None:
    # over the service's limit (16 KiB a field): the app refuses
    status, body = _http(served, "GET", "/healthz", headers={"X-Big": "b" * 20_000})
    err = _error(status, body, 431)
    assert err["type"] == "header_too_large" and "16384" in err["message"]
    # over gunicorn's own limit behind it: gunicorn refuses, in the same JSON shape
    status, _, body = _raw(
        served, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: " + b"b" * 40_000 + b"\r\n\r\n"
    )
    _error(status, body, 431)
    # anything else gunicorn refuses before the app sees it is JSON too
    status, _, body = _raw(served, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nBad Header: y\r\n\r\n")
    _error(status, body, 400)


def test_a_request_line_past_the_servers_own_bound_is_a_json_414_and_cheap(served: str) -> None:
    """gunicorn reads the request line up to twice the app's limit (64 KiB), not without end: its own
    parser, unbounded, copies the whole line on every read (a 4 MiB line cost 1.5 s of a worker)."""
    started = time.monotonic()
    status, _, body = _raw(served, b"GET /healthz?q=" + b"a" * 300_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    err = _error(status, body, 414)
    assert err["type"] == "uri_too_long" and "65536" in err["message"], err
    assert time.monotonic() - started < 2


def test_request_line_and_header_limits_in_the_app(api: FlaskClient) -> None:
    resp = api.get("/healthz?" + "a" * 40_000)
    assert _error(resp.status_code, resp.json, 414)["type"] == "uri_too_long"
    resp = api.get("/healthz", headers={"X-Big": "b" * 20_000})
    assert _error(resp.status_code, resp.json, 431)["type"] == "header_too_large"


# -- 3c. ids containing "/" ------------------------------------------------------------------------


SLASHED = ["news/2024/a", "news/2024/b", "a//b", "trailing/", "/leading"]


def _store_slashed(post: Callable[[bytes], tuple[int, Any]], es: Elasticsearch, index: str) -> None:
    docs = [{"id": i, "text": TEXT + ("（转载）" if k else "")} for k, i in enumerate(SLASHED)]
    status, body = post(json.dumps(docs, ensure_ascii=False).encode("utf-8"))
    assert status == 200, body
    es.indices.refresh(index=index)
    assert {h["_id"] for h in es.search(index=index, size=10)["hits"]["hits"]} == set(SLASHED)


def test_ids_with_a_slash_are_reachable(api: FlaskClient, es: Elasticsearch, index_name: str) -> None:
    def post(body: bytes) -> tuple[int, Any]:
        resp = api.post(f"/v1/indices/{index_name}/documents?refresh=true", data=body, content_type="application/json")
        return resp.status_code, resp.json

    _store_slashed(post, es, index_name)
    for doc_id in SLASHED:
        for spelled in (doc_id, urllib.parse.quote(doc_id, safe="")):  # as it is, and with %2F
            resp = api.get(f"/v1/indices/{index_name}/documents/{spelled}/duplicates")
            assert resp.status_code == 200, (spelled, resp.json)
            found = {i["id"] for i in resp.json["items"]}
            assert found == set(SLASHED) - {doc_id}, (spelled, found)
    missing = api.get(f"/v1/indices/{index_name}/documents/news/2024/zzz/duplicates")
    assert _error(missing.status_code, missing.json, 404)["type"] == "document_not_found"
    assert "news/2024/zzz" in missing.json["error"]["message"]


def test_ids_with_a_slash_are_reachable_through_gunicorn(served: str, es: Elasticsearch, index_name: str) -> None:
    def post(body: bytes) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"}
        return _http(served, "POST", f"/v1/indices/{index_name}/documents?refresh=true", body, headers)

    _store_slashed(post, es, index_name)
    for spelled in ("news/2024/a", "news%2F2024%2Fa"):
        status, body = _http(served, "GET", f"/v1/indices/{index_name}/documents/{spelled}/duplicates")
        assert status == 200, (spelled, body)
        assert {i["id"] for i in body["items"]} == set(SLASHED) - {"news/2024/a"}

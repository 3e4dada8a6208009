"""The smaller request limits: ``from + size`` stays inside Elasticsearch's result window, an overlong request
line or header field is a JSON 414/431 (and whatever gunicorn refuses is JSON too), and ids containing ``/`` are
reachable, through the Flask test client and a real ``neardup serve``."""

from __future__ import annotations

import json
import socket
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from tests.service.http_helpers import TEXT, http_json, json_error

pytestmark = pytest.mark.es


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


# -- from + size inside Elasticsearch's result window ---------------------------------------------


def test_from_plus_size_over_the_result_window_is_a_400(api: FlaskClient, index_name: str) -> None:
    assert (
        api.post(f"/v1/indices/{index_name}/documents?refresh=true", json={"id": "a", "text": TEXT}).status_code == 200
    )
    search = f"/v1/indices/{index_name}/search"
    for query in ("from=10000", "from=9991&size=10", "from=9901&size=100&hide_duplicates=true"):
        resp = api.get(f"{search}?q=国务院&{query}")
        err = json_error(resp.status_code, resp.json, 400)
        assert "10000" in json.dumps(err) and "max_result_window" in json.dumps(err), err
    for query in ("from=9990&size=10", "from=9900&size=100&hide_duplicates=true", "from=0&size=0"):
        resp = api.get(f"{search}?q=国务院&{query}")
        assert resp.status_code == 200, (query, resp.json)


# -- request lines and header fields: long enough for the documented limits, JSON refusals -------


def test_a_long_query_is_served_and_an_overlong_request_line_is_a_json_414(served: str, index_name: str) -> None:
    doc = json.dumps({"id": "long-q", "text": TEXT}, ensure_ascii=False).encode("utf-8")
    status, body = http_json(
        served, "POST", f"/v1/indices/{index_name}/documents?refresh=true", doc, {"Content-Type": "application/json"}
    )
    assert status == 200, body
    for chars in (450, 2000):  # 2,000 characters is the documented limit of q: 18 KB percent-encoded
        q = (TEXT * 50)[:chars]
        status, body = http_json(served, "GET", f"/v1/indices/{index_name}/search?q={urllib.parse.quote(q)}")
        assert status == 200, (chars, body)
        assert [h["id"] for h in body["hits"]] == ["long-q"]
    # 2,001 characters: the schema's own 400
    q = urllib.parse.quote((TEXT * 50)[:2001])
    status, body = http_json(served, "GET", f"/v1/indices/{index_name}/search?q={q}")
    assert "q" in json.dumps(json_error(status, body, 400))
    # a request line over the service's limit (32 KiB): a JSON 414, from the app
    status, body = http_json(served, "GET", f"/v1/indices/{index_name}/search?q={'a' * 40_000}")
    err = json_error(status, body, 414)
    assert err["type"] == "uri_too_long" and "32768" in err["message"]


def test_header_fields_over_the_limit_are_a_json_431(served: str) -> None:
    # over the service's limit (16 KiB a field): the app refuses
    status, body = http_json(served, "GET", "/healthz", headers={"X-Big": "b" * 20_000})
    err = json_error(status, body, 431)
    assert err["type"] == "header_too_large" and "16384" in err["message"]
    # over gunicorn's own limit behind it: gunicorn refuses, in the same JSON shape
    status, _, body = _raw(
        served, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: " + b"b" * 40_000 + b"\r\n\r\n"
    )
    json_error(status, body, 431)
    # anything else gunicorn refuses before the app sees it is JSON too
    status, _, body = _raw(served, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nBad Header: y\r\n\r\n")
    json_error(status, body, 400)


def test_a_request_line_past_the_servers_own_bound_is_a_json_414_and_cheap(served: str) -> None:
    """gunicorn reads the request line up to twice the app's limit (64 KiB), not without end: its own
    parser, unbounded, copies the whole line on every read (a 4 MiB line cost 1.5 s of a worker)."""
    started = time.monotonic()
    status, _, body = _raw(served, b"GET /healthz?q=" + b"a" * 300_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    err = json_error(status, body, 414)
    assert err["type"] == "uri_too_long" and "65536" in err["message"], err
    assert time.monotonic() - started < 2


def test_request_line_and_header_limits_in_the_app(api: FlaskClient) -> None:
    resp = api.get("/healthz?" + "a" * 40_000)
    assert json_error(resp.status_code, resp.json, 414)["type"] == "uri_too_long"
    resp = api.get("/healthz", headers={"X-Big": "b" * 20_000})
    assert json_error(resp.status_code, resp.json, 431)["type"] == "header_too_large"


# -- ids containing "/" ---------------------------------------------------------------------------


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
    assert json_error(missing.status_code, missing.json, 404)["type"] == "document_not_found"
    assert "news/2024/zzz" in missing.json["error"]["message"]


def test_ids_with_a_slash_are_reachable_through_gunicorn(served: str, es: Elasticsearch, index_name: str) -> None:
    def post(body: bytes) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"}
        return http_json(served, "POST", f"/v1/indices/{index_name}/documents?refresh=true", body, headers)

    _store_slashed(post, es, index_name)
    for spelled in ("news/2024/a", "news%2F2024%2Fa"):
        status, body = http_json(served, "GET", f"/v1/indices/{index_name}/documents/{spelled}/duplicates")
        assert status == 200, (spelled, body)
        assert {i["id"] for i in body["items"]} == set(SLASHED) - {"news/2024/a"}

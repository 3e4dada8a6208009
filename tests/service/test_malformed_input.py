"""Malformed JSON that the standard decoder accepts but the service cannot use: lone surrogates
(``"\\ud800"``) and very deep nesting. One decoding for the whole app refuses both with a 400 naming
the problem, whichever endpoint gets them, and nothing reaches Elasticsearch."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from neardup.service import create_app

pytestmark = pytest.mark.es

TEXT = "國務院今天召開常務會議，部署進一步推動經濟穩定增長的措施，會議指出要擴大內需。"  # traditional: goes through T→S
LONE = "\\ud800"  # the JSON escape of a lone (high) surrogate, as it appears in a body
LONE_LOW = "\\udfff"
PAIR = "\\ud83d\\ude00"  # a valid surrogate pair (😀): fine


def _count(es: Elasticsearch, index: str) -> int:
    if not es.indices.exists(index=index):
        return 0
    es.indices.refresh(index=index)
    return int(es.count(index=index)["count"])


def _error(resp: Any, status: int) -> dict[str, Any]:
    assert resp.status_code == status, (resp.status_code, resp.get_data(as_text=True)[:300])
    body = resp.json
    assert set(body) == {"error"} and body["error"]["type"] and body["error"]["message"], body
    err: dict[str, Any] = body["error"]
    return err


@pytest.fixture
def api(es_url: str) -> FlaskClient:
    return create_app({"es_url": es_url}).test_client()


def _deep_objects(n: int) -> str:
    return '{"a": ' * n + "1" + "}" * n


def _deep_arrays(n: int) -> str:
    return "[" * n + "]" * n


# -- lone surrogates --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "doc",
    [
        '{"id": "x", "text": "' + TEXT + LONE + '"}',
        '{"id": "x", "title": "标题' + LONE_LOW + '", "text": "' + TEXT + '"}',
        '{"id": "x' + LONE + '", "text": "' + TEXT + '"}',
        '{"id": "x", "text": "' + TEXT + '", "meta": {"tags": ["a", "b' + LONE + '"]}}',
        '{"id": "x", "text": "' + TEXT + '", "k' + LONE + '": 1}',
    ],
    ids=["text", "title", "id", "nested-value", "key"],
)
@pytest.mark.parametrize("form", ["object", "array", "ndjson"])
def test_a_lone_surrogate_in_a_document_is_a_400_and_nothing_is_written(
    api: FlaskClient, es: Elasticsearch, index_name: str, doc: str, form: str
) -> None:
    ok = '{"id": "ok", "text": "' + TEXT + '"}'
    if form == "object":
        data, content_type = doc, "application/json"
    elif form == "array":
        data, content_type = f"[{ok}, {doc}]", "application/json"
    else:
        data, content_type = f"{ok}\n{doc}\n", "application/x-ndjson"
    resp = api.post(f"/v1/indices/{index_name}/documents?refresh=true", data=data, content_type=content_type)
    err = _error(resp, 400)
    assert err["type"] == "lone_surrogate", err
    assert "surrogate" in err["message"]
    if form == "ndjson":
        assert err["message"].startswith("line 2:"), err
    assert _count(es, index_name) == 0


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/fingerprint", '{"text": "' + TEXT + LONE + '"}'),
        ("/v1/fingerprint", '{"title": "' + LONE + '", "text": "' + TEXT + '"}'),
        ("/v1/indices/{index}/duplicates", '{"text": "' + TEXT + LONE + '"}'),
        ("/v1/indices/{index}/duplicates", '{"title": "' + LONE_LOW + '", "text": "' + TEXT + '"}'),
        ("/v1/indices/{index}/duplicates", '{"record": {"body": "' + TEXT + LONE + '"}}'),
        ("/v1/indices/{index}", '{"fields": {"body' + LONE + '": {"mode": "text"}}}'),
    ],
    ids=[
        "fingerprint-text",
        "fingerprint-title",
        "duplicates-text",
        "duplicates-title",
        "duplicates-record",
        "put-index",
    ],
)
def test_a_lone_surrogate_anywhere_else_is_a_400(api: FlaskClient, index_name: str, path: str, body: str) -> None:
    assert api.put(f"/v1/indices/{index_name}").status_code == 200
    method = api.put if path.endswith("{index}") else api.post
    resp = method(path.format(index=index_name), data=body, content_type="application/json")
    err = _error(resp, 400)
    assert err["type"] == "lone_surrogate" and "surrogate" in err["message"], err


def test_a_surrogate_pair_is_text_like_any_other(api: FlaskClient, es: Elasticsearch, index_name: str) -> None:
    doc = '{"id": "smile' + PAIR + '", "title": "' + PAIR + '", "text": "' + TEXT + PAIR + '"}'
    resp = api.post(f"/v1/indices/{index_name}/documents?refresh=true", data=doc, content_type="application/json")
    assert resp.status_code == 200, resp.json
    stored = es.get(index=index_name, id="smile😀")["_source"]
    assert stored["text"] == TEXT + "😀" and stored["title"] == "😀"
    resp = api.post("/v1/fingerprint", data='{"text": "' + TEXT + PAIR + '"}', content_type="application/json")
    assert resp.status_code == 200, resp.json


def test_ndjson_lines_end_at_newlines_only(api: FlaskClient, es: Elasticsearch, index_name: str) -> None:
    """A JSON string may hold U+2028, U+2029 and U+0085 as they are; str.splitlines() cut lines there."""
    odd = TEXT + "\u2028第二段\u2029第三段\x85完"
    body = json.dumps({"id": "a", "text": odd}, ensure_ascii=False) + "\r\n" + json.dumps({"id": "b", "text": TEXT})
    resp = api.post(f"/v1/indices/{index_name}/documents?refresh=true", data=body, content_type="application/x-ndjson")
    assert resp.status_code == 200, resp.json
    assert es.get(index=index_name, id="a")["_source"]["text"] == odd and _count(es, index_name) == 2


# -- deep nesting ---------------------------------------------------------------------------------


DEEP = {"objects-5000": _deep_objects(5000), "arrays-100000": _deep_arrays(100_000)}


@pytest.mark.parametrize("deep", list(DEEP.values()), ids=list(DEEP))
def test_deep_nesting_is_a_400_everywhere(api: FlaskClient, es: Elasticsearch, index_name: str, deep: str) -> None:
    text = json.dumps(TEXT, ensure_ascii=False)
    bodies = [
        ("post", f"/v1/indices/{index_name}/documents", deep, "application/json"),
        (
            "post",
            f"/v1/indices/{index_name}/documents",
            '{"id": "x", "text": ' + text + ', "d": ' + deep + "}",
            "application/json",
        ),
        (
            "post",
            f"/v1/indices/{index_name}/documents",
            '{"id": "a", "text": ' + text + "}\n" + deep,
            "application/x-ndjson",
        ),
        ("post", "/v1/fingerprint", '{"text": ' + text + ', "d": ' + deep + "}", "application/json"),
        ("post", "/v1/fingerprint", deep, "application/json"),
        (
            "post",
            f"/v1/indices/{index_name}/duplicates",
            '{"text": ' + text + ', "x": ' + deep + "}",
            "application/json",
        ),
        ("post", f"/v1/indices/{index_name}/duplicates", deep, "application/json"),
        ("put", f"/v1/indices/{index_name}", '{"fields": ' + deep + "}", "application/json"),
        ("post", f"/v1/indices/{index_name}/dedupe", deep, "application/json"),
    ]
    for method, path, data, content_type in bodies:
        resp = getattr(api, method)(path, data=data, content_type=content_type)
        err = _error(resp, 400)
        assert err["type"] == "json_too_deep" and "100" in err["message"], (path, err)
    assert _count(es, index_name) == 0


def test_the_nesting_limit_is_100_levels() -> None:
    from neardup.incoming.json_input import MAX_JSON_DEPTH, JSONRefused, decode_json

    assert MAX_JSON_DEPTH == 100
    assert decode_json(_deep_arrays(100)) == json.loads(_deep_arrays(100))
    assert decode_json(_deep_objects(100).encode()) == json.loads(_deep_objects(100))
    for text in (_deep_arrays(101), _deep_objects(101), _deep_arrays(900), _deep_arrays(10**6)):
        with pytest.raises(JSONRefused) as info:
            decode_json(text)
        assert info.value.kind == "json_too_deep"
    with pytest.raises(JSONRefused) as info:
        decode_json('{"a": ["x", {"b": "' + LONE + '"}]}')
    assert info.value.kind == "lone_surrogate" and "$.a[1].b" in str(info.value)


# -- through a real neardup serve: worker threads have their own stacks ------------------------------


@pytest.fixture(scope="module")
def served(neardup_serve: Callable[..., Any]) -> Iterator[str]:
    with neardup_serve(workers=1) as srv:
        yield srv.url


def _post(url: str, body: str, content_type: str = "application/json") -> tuple[int, Any]:
    req = urllib.request.Request(url, data=body.encode("utf-8"), headers={"Content-Type": content_type}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_malformed_json_through_gunicorn(served: str, es: Elasticsearch, index_name: str) -> None:
    documents = f"{served}/v1/indices/{index_name}/documents?refresh=true"
    for body, kind in [
        (_deep_arrays(100_000), "json_too_deep"),
        (_deep_objects(5000), "json_too_deep"),
        ('{"id": "x", "text": "' + TEXT + LONE + '"}', "lone_surrogate"),
    ]:
        status, answer = _post(documents, body)
        assert status == 400 and answer["error"]["type"] == kind, (status, answer)
        status, answer = _post(f"{served}/v1/fingerprint", body)
        assert status == 400 and answer["error"]["type"] == kind, (status, answer)
    assert _count(es, index_name) == 0
    status, answer = _post(documents, '{"id": "y", "text": "' + TEXT + '"}')
    assert status == 200 and _count(es, index_name) == 1


def _raw(url: str, request: bytes, then_close: bool = True) -> tuple[int, dict[str, Any]]:
    """Send ``request`` as it is on one connection; with ``then_close``, stop sending (as a client that dies)."""
    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=60) as conn:
        conn.sendall(request)
        if then_close:
            conn.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def test_a_body_shorter_than_its_content_length_is_refused_and_nothing_written(
    served: str, es: Elasticsearch, index_name: str
) -> None:
    """A client that dies halfway: gunicorn ends the body early without a word; taken for the whole, half a batch
    would be written."""
    lines = "".join(json.dumps({"id": f"t{k}", "text": TEXT}, ensure_ascii=False) + "\n" for k in range(2)).encode()
    head = (
        f"POST /v1/indices/{index_name}/documents?refresh=true HTTP/1.1\r\nHost: x\r\n"
        f"Content-Type: application/x-ndjson\r\nContent-Length: {len(lines) + 5000}\r\n\r\n"
    ).encode()
    status, answer = _raw(served, head + lines)
    assert status == 400 and answer["error"]["type"] == "incomplete_body", (status, answer)
    assert not es.indices.exists(index=index_name) or _count(es, index_name) == 0


def test_a_malformed_chunked_body_is_a_400(served: str, index_name: str) -> None:
    head = (
        f"POST /v1/indices/{index_name}/documents HTTP/1.1\r\nHost: x\r\n"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    ).encode()
    status, answer = _raw(served, head + b"zz\r\n{}\r\n0\r\n\r\n")
    assert status == 400 and answer["error"]["type"] == "invalid_body", (status, answer)


def test_an_integer_past_pythons_digit_limit_is_a_400_naming_its_line(api: FlaskClient, index_name: str) -> None:
    big = '{"id": "a", "text": "' + TEXT + '", "n": ' + "9" * 5000 + "}\n"
    resp = api.post(f"/v1/indices/{index_name}/documents", data=big, content_type="application/x-ndjson")
    error = _error(resp, 400)
    assert error["type"] == "invalid_document" and "line 1" in error["message"], error
    assert "a number of more than 4300 digits" in error["message"]
    assert _error(api.post("/v1/fingerprint", data=big, content_type="application/json"), 400)["type"] == "invalid_json"

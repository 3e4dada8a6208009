"""Malformed JSON that the standard decoder accepts but the service cannot use: lone surrogates
(``"\\ud800"``) and very deep nesting. One decoding for the whole app refuses both with a 400 naming
the problem, whichever endpoint gets them, and nothing reaches Elasticsearch."""

from __future__ import annotations

import json
import urllib.error
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
    from neardup.es.json_input import MAX_JSON_DEPTH, JSONRefused, decode_json

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

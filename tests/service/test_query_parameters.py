"""Query parameters: an API endpoint takes its own and ``pretty``; any other is a 400 naming it, before anything is
read or written (as Elasticsearch's API refuses ``unrecognized parameter``). The web page takes what a browser adds."""

from __future__ import annotations

import json

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

pytestmark = pytest.mark.es

TEXT = "北京今天召开新闻发布会，介绍冬奥会筹备工作进展情况，场馆建设已经全部完成，志愿者培训也已开始。"


@pytest.mark.parametrize(
    ("method", "path", "unknown", "known"),
    [
        ("post", "/v1/indices/{index}/documents?refesh=wait_for", ["refesh"], ["partial", "pretty", "refresh"]),
        ("get", "/v1/indices/{index}/search?q=a&hide_duplicate=true", ["hide_duplicate"], None),
        ("get", "/v1/indices/{index}/clusters?minsize=3&limit=1", ["limit", "minsize"], None),
        ("get", "/v1/indices/{index}/documents/a/duplicates?distance=5", ["distance"], None),
        ("post", "/v1/indices/{index}/dedupe?workers=2", ["workers"], ["pretty"]),  # a body field, not a parameter
        ("put", "/v1/indices/{index}?shards=3", ["shards"], ["pretty"]),
        ("get", "/healthz?verbose=1", ["verbose"], ["pretty"]),
    ],
)
def test_an_unknown_parameter_is_a_400_and_nothing_is_done(
    api: FlaskClient, es: Elasticsearch, index_name: str, method: str, path: str, unknown: list[str], known: list[str]
) -> None:
    resp = getattr(api, method)(path.format(index=index_name), json=[{"id": "a", "text": TEXT}])
    assert resp.status_code == 400, resp.get_data(as_text=True)
    error = resp.json["error"]
    assert error["type"] == "unknown_parameter" and error["detail"]["unknown"] == unknown
    assert all(repr(name) in error["message"] for name in unknown)
    if known is not None:
        assert error["detail"]["known"] == known
    assert not es.indices.exists(index=index_name)  # not created, nothing written


def test_known_parameters_and_pretty_are_taken(api: FlaskClient, es: Elasticsearch, index_name: str) -> None:
    path = f"/v1/indices/{index_name}/documents?refresh=wait_for&partial=false"
    written = api.post(path, json={"id": "a", "text": TEXT})
    assert written.status_code == 200 and written.json["items"][0]["status"] == "created"
    plain = api.get(f"/v1/indices/{index_name}/search", query_string={"q": "冬奥会", "size": 5})
    pretty = api.get(f"/v1/indices/{index_name}/search", query_string={"q": "冬奥会", "size": 5, "pretty": ""})
    assert plain.status_code == pretty.status_code == 200
    assert json.loads(pretty.get_data(as_text=True)) == plain.json and plain.json["total"] == 1
    assert "\n  " in pretty.get_data(as_text=True) and "\n" not in plain.get_data(as_text=True).strip()
    assert "新闻" in pretty.get_data(as_text=True)  # not escaped
    off = api.get(f"/v1/indices/{index_name}/search", query_string={"q": "冬奥会", "size": 5, "pretty": "false"})
    assert off.get_data() == plain.get_data()


def test_the_web_page_takes_parameters_a_browser_adds(api: FlaskClient, es: Elasticsearch, index_name: str) -> None:
    api.post(f"/v1/indices/{index_name}/documents?refresh=wait_for", json={"id": "a", "text": TEXT})
    page = api.get("/", query_string={"index": index_name, "q": "冬奥会", "utm_source": "mail"})
    assert page.status_code == 200 and "冬奥会" in page.get_data(as_text=True)


def test_a_parameter_given_twice_is_a_400(api: FlaskClient, es: Elasticsearch, index_name: str) -> None:
    """Which of the two was meant cannot be told: taking the first would drop the other unread."""
    resp = api.post(f"/v1/indices/{index_name}/documents?refresh=false&refresh=bogus", json={"id": "a", "text": TEXT})
    assert resp.status_code == 400 and resp.json["error"]["type"] == "repeated_parameter", resp.json
    assert resp.json["error"]["detail"] == {"repeated": ["refresh"]}
    assert not es.indices.exists(index=index_name)

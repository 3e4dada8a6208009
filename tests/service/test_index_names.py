"""Index names outside ASCII, as Elasticsearch takes them (``新闻``), through every kind of endpoint; names it
refuses are the API's 400, sent to Elasticsearch never."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from tests.indices import remove_indices

pytestmark = pytest.mark.es

BASE = "北京今天召开新闻发布会，介绍冬奥会筹备工作进展情况，场馆建设已经全部完成，志愿者培训也已开始。"


@pytest.fixture
def chinese_index(es: Elasticsearch) -> Iterator[str]:
    name = f"新闻-{uuid.uuid4().hex[:8]}"
    yield name
    remove_indices(es, name)


def test_an_index_named_in_chinese_works_end_to_end(api: FlaskClient, es: Elasticsearch, chinese_index: str) -> None:
    path = f"/v1/indices/{quote(chinese_index)}"
    assert api.put(path).status_code in (200, 201)
    docs = [{"id": "a", "text": BASE}, {"id": "b", "text": BASE + "记者报道。"}]
    written = api.post(f"{path}/documents?refresh=wait_for", json=docs)
    assert written.status_code == 200, written.json
    items = {i["id"]: i for i in written.json["items"]}
    assert items["b"]["duplicate_of"] == "a" and items["b"]["cluster"] == "a"
    assert es.count(index=chinese_index)["count"] == 2

    found = api.get(f"{path}/search", query_string={"q": "冬奥会", "hide_duplicates": "true"})
    assert found.status_code == 200 and found.json["total"] == 1
    assert api.get(f"{path}/clusters").json["clusters"][0]["size"] == 2
    assert {m["id"] for m in api.get(f"{path}/clusters/a").json["members"]} == {"a", "b"}
    assert [d["id"] for d in api.get(f"{path}/documents/b/duplicates").json["items"]] == ["a"]
    page = api.get("/clusters/a", query_string={"index": chinese_index})
    assert page.status_code == 200 and chinese_index in page.get_data(as_text=True)


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("НОВОСТИ", "uppercase"),  # uppercase in another script
        ("新闻 2024", "' '"),
        ("新闻:2024", "':'"),
        ("新闻\u200b", "'\\u200b'"),  # a format character, invisible
        ("_新闻", "starts with '_'"),
        ("新" * 86, "258 bytes"),  # 85 fit in Elasticsearch's 255 bytes
    ],
)
def test_names_elasticsearch_would_refuse_are_a_400_naming_the_problem(api: FlaskClient, name: str, says: str) -> None:
    resp = api.put(f"/v1/indices/{quote(name)}")
    assert resp.status_code == 400 and resp.json["error"]["type"] == "invalid_index_name", resp.json
    assert says in resp.json["error"]["message"]


def test_the_longest_name_elasticsearch_takes_is_taken(api: FlaskClient, es: Elasticsearch) -> None:
    name = "新" * 85  # 255 bytes in UTF-8
    try:
        assert api.put(f"/v1/indices/{quote(name)}").status_code in (200, 201)
        assert es.indices.exists(index=name)
    finally:
        remove_indices(es, name)

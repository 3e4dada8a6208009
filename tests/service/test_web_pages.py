"""The web page's HTML through Flask's test client against the real Elasticsearch (no browser: what the page
prints, escapes and refuses). ``test_web.py`` drives the same pages in Chromium."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from elasticsearch import Elasticsearch, helpers
from flask.testing import FlaskClient

from neardup.service import create_app
from neardup.service.web import COMPARED

pytestmark = pytest.mark.es

TEXT = "国务院今天召开常务会议，部署进一步推动经济稳定增长的措施，会议指出要扩大内需。"
SCRIPT = "<img src=x onerror=alert(1)>"


@pytest.fixture
def api(es_url: str) -> FlaskClient:
    return create_app({"es_url": es_url}).test_client()


@pytest.fixture
def big(es: Elasticsearch, index_name: str, api: FlaskClient) -> Iterator[str]:
    """An index of 10,050 documents written directly (neardup fields as a dedupe leaves them): 10,000 clusters of
    one and one cluster "big" of 50 (the document "big" and 49 duplicates), more than a search counts by default."""
    assert api.put(f"/v1/indices/{index_name}").status_code == 200

    def doc(k: int, cluster: str, duplicate: bool) -> dict[str, object]:
        nd = {"cluster": cluster, "is_duplicate": duplicate, "indexed_at": f"2026-11-27T10:00:{k % 60:02d}.{k:09d}Z"}
        return {
            "_index": index_name,
            "_id": cluster if not duplicate else f"{cluster}-{k}",
            "title": f"标题{k}",
            "text": f"{TEXT}第{k}篇。",
            "neardup": nd,
        }

    actions = [doc(k, f"c{k}", False) for k in range(10_000)] + [doc(10_000, "big", False)]
    actions += [doc(10_000 + k, "big", True) for k in range(1, 50)]
    helpers.bulk(es, actions, refresh=True)
    yield index_name


def test_highlighted_text_is_escaped_in_the_page_and_the_api(api: FlaskClient, index_name: str) -> None:
    posted = api.post(f"/v1/indices/{index_name}/documents?refresh=wait_for", json={"id": "x", "text": SCRIPT + TEXT})
    assert posted.status_code == 200, posted.json
    page = api.get(f"/?index={index_name}&q=国务院").get_data(as_text=True)
    assert "<em>" in page and "&lt;img src=x" in page and SCRIPT not in page
    fragments = api.get(f"/v1/indices/{index_name}/search?q=国务院").json["hits"][0]["highlight"]["text"]
    assert "&lt;img" in fragments[0] and SCRIPT not in fragments[0]


def test_a_text_that_is_no_string_is_shown_as_none(api: FlaskClient, es: Elasticsearch, index_name: str) -> None:
    """A user's own index may hold an object where neardup reads a text."""
    es.indices.create(index=index_name, mappings={"properties": {"text": {"properties": {"en": {"type": "text"}}}}})
    assert api.put(f"/v1/indices/{index_name}").status_code == 200
    es.index(index=index_name, id="a", document={"title": "标题", "text": {"en": "english text"}}, refresh=True)
    found = api.get(f"/v1/indices/{index_name}/search")  # every document
    assert found.status_code == 200, found.get_data(as_text=True)[:300]
    assert found.json["hits"][0]["text"] == "" and found.json["hits"][0]["title"] == "标题"
    assert api.get(f"/?index={index_name}").status_code == 200


def test_counts_past_ten_thousand_and_the_last_page(api: FlaskClient, big: str) -> None:
    listed = api.get(f"/v1/indices/{big}/clusters").json
    assert listed["documents"] == 10_050 and listed["duplicates"] == 49, listed
    overview = api.get(f"/overview?index={big}").get_data(as_text=True)
    assert '<span id="doc-count">10050</span>' in overview and '<span id="dup-count">49</span>' in overview
    last = api.get(f"/?index={big}&page=500").get_data(as_text=True)
    assert "page 500 of 500" in last and "next →" not in last


def test_a_large_cluster_compares_its_first_members_and_lists_the_others(api: FlaskClient, big: str) -> None:
    page = api.get(f"/clusters/big?index={big}").get_data(as_text=True)
    assert page.count('class="member"') == COMPARED
    assert f"{49 - COMPARED} more members, not compared here" in page


def test_a_page_of_a_missing_index_is_a_page_that_lets_you_pick_another(api: FlaskClient) -> None:
    resp = api.get("/?index=no-such-index-here")
    assert resp.status_code == 404 and resp.mimetype == "text/html"
    page = resp.get_data(as_text=True)
    assert "no-such-index-here" in page and 'name="index"' in page
    assert api.get("/v1/indices/no-such-index-here/search").json["error"]["type"] == "index_not_found"


@pytest.mark.parametrize("path", ["/", "/clusters", "/clusters/x", "/overview"])
def test_an_elasticsearch_outage_is_a_page_too(path: str) -> None:
    """Like the page's other refusals: the API's 503 type and message in the error heading, and the index box."""
    down = create_app({"es_url": "http://127.0.0.1:9", "es_retries": 0}).test_client()
    resp = down.get(f"{path}?index=news")
    assert resp.status_code == 503 and resp.mimetype == "text/html", resp.get_data(as_text=True)[:300]
    page = resp.get_data(as_text=True)
    assert '<h1 class="error" data-type="elasticsearch_unavailable">Elasticsearch is unreachable; retry later</h1>' in (
        page
    )
    assert 'name="index" value="news"' in page
    assert down.get("/v1/indices/news/search").json["error"]["type"] == "elasticsearch_unavailable"

"""The reading side (:mod:`neardup.es.browse`): search hiding near duplicates, and search over a text longer
than Elasticsearch's highlight limit."""

from __future__ import annotations

from typing import Any

import pytest
from elasticsearch import Elasticsearch, helpers
from flask.testing import FlaskClient

from neardup.es.browse import search
from neardup.es.client import setup_index
from neardup.service import create_app
from tests.indices import remove_indices

pytestmark = pytest.mark.es


def _write(es: Elasticsearch, index: str, docs: dict[str, dict[str, Any]]) -> None:
    setup_index(es, index)
    for doc_id, doc in docs.items():
        es.index(index=index, id=doc_id, document=doc)
    es.indices.refresh(index=index)


def _member(cluster: str, duplicate: bool, at: int, text: str = "新闻 报道") -> dict[str, Any]:
    indexed_at = f"2026-01-01T00:00:{at:02d}Z"
    return {"text": text, "neardup": {"cluster": cluster, "is_duplicate": duplicate, "indexed_at": indexed_at}}


#: three clusters, two documents neardup never wrote (no cluster) and one it fingerprinted without assigning
_DOCS = {
    "c1": _member("c1", False, 1),
    "c1-a": _member("c1", True, 2),
    "c1-b": _member("c1", True, 3, "新闻 评论"),
    "c2": _member("c2", False, 4),
    "c3-dup": _member("c3", True, 6),  # its canonical does not match the query below
    "c3": _member("c3", False, 5, "体育"),
    "plain-1": {"text": "新闻 报道"},
    "plain-2": {"text": "新闻 报道"},
    "fingerprinted": {"text": "新闻 报道", "neardup": {"status": "ok", "version": "v"}},
}


def test_hiding_duplicates_shows_each_cluster_once_and_each_document_without_one(
    es: Elasticsearch, index_name: str
) -> None:
    _write(es, index_name, _DOCS)
    found = search(es, index_name, "新闻", True, 100, 0)
    ids = [h["id"] for h in found["hits"]]
    # Elasticsearch's collapse alone would give the documents without a cluster as one hit
    assert sorted(ids) == ["c1", "c2", "c3-dup", "fingerprinted", "plain-1", "plain-2"]
    assert found["total"] == 6
    hidden = {h["id"]: h["duplicates_hidden"] for h in found["hits"]}
    assert hidden == {"c1": 2, "c2": 0, "c3-dup": 0, "fingerprinted": 0, "plain-1": 0, "plain-2": 0}
    # among equal scores the original leads, then what neardup wrote before what it has not
    equal = [h["id"] for h in found["hits"] if h["score"] == found["hits"][0]["score"]]
    assert equal.index("c1") < equal.index("plain-1") and equal.index("c2") < equal.index("plain-2")
    narrower = search(es, index_name, "评论", True, 100, 0)
    assert [(h["id"], h["duplicates_hidden"]) for h in narrower["hits"]] == [("c1-b", 0)]
    assert narrower["hits"][0]["highlight"]["text"] == ["新闻 <em>评</em><em>论</em>"]


def test_pages_of_hidden_duplicates_join_into_the_whole_list(es: Elasticsearch, index_name: str) -> None:
    _write(es, index_name, _DOCS)
    whole = search(es, index_name, "", True, 100, 0)
    pages = [search(es, index_name, "", True, 2, start) for start in range(0, 8, 2)]
    assert [h["id"] for p in pages for h in p["hits"]] == [h["id"] for h in whole["hits"]]
    assert {p["total"] for p in pages} == {whole["total"]} == {6}
    assert search(es, index_name, "", True, 0, 0) == {
        "total": 6,
        "total_estimated": False,
        "hide_duplicates": True,
        "hits": [],
    }


def test_hits_with_and_without_a_cluster_come_in_one_order_of_score(es: Elasticsearch, index_name: str) -> None:
    """The two parts of a search hiding duplicates are merged by score: a document without a cluster that matches
    better comes before the clusters (its title matches too, weighed twice), one that matches worse after them."""
    docs = {
        **_DOCS,
        "plain-top": {"title": "新闻", "text": "新闻 报道"},
        "plain-low": {"text": "新闻 报道 " + "其他内容 " * 40},
    }
    _write(es, index_name, docs)
    found = search(es, index_name, "新闻", True, 100, 0)
    ids = [h["id"] for h in found["hits"]]
    scores = [h["score"] for h in found["hits"]]
    assert ids[0] == "plain-top" and ids[-1] == "plain-low", ids
    assert scores == sorted(scores, reverse=True)
    assert [h["id"] for p in (0, 2, 4, 6) for h in search(es, index_name, "新闻", True, 2, p)["hits"]] == ids


def test_search_of_one_cluster_lists_its_matching_members(es: Elasticsearch, index_name: str) -> None:
    _write(es, index_name, _DOCS)
    found = search(es, index_name, "报道", False, 10, 0, cluster="c1")
    assert [h["id"] for h in found["hits"]] == ["c1", "c1-a"] and found["total"] == 2


def test_hiding_duplicates_through_an_alias_reads_each_hit_from_its_own_index(
    es: Elasticsearch, index_name: str
) -> None:
    second = f"{index_name}-2"
    _write(es, index_name, {"same": _member("same", False, 1), "x": _member("same", True, 2)})
    _write(es, second, {"same": {"text": "体育 新闻"}})
    alias = f"{index_name}-all"
    es.indices.put_alias(index=[index_name, second], name=alias)
    try:
        found = search(es, alias, "新闻", True, 10, 0)
        shown = {h["cluster"]: (h["id"], h["duplicates_hidden"], h["text"]) for h in found["hits"]}
        assert shown == {"same": ("same", 1, "新闻 报道"), None: ("same", 0, "体育 新闻")}
    finally:
        remove_indices(es, second)


def test_search_hits_a_text_longer_than_the_highlight_limit(es: Elasticsearch, es_url: str) -> None:
    api: FlaskClient = create_app({"es_url": es_url}).test_client()
    index = "test-long-text"
    es.indices.delete(index=index, ignore_unavailable=True)
    long_text = "国务院召开常务会议。" + "经济稳定增长的政策措施。" * 100_000  # 1.2M characters
    assert len(long_text) > 1_000_000
    resp = api.post(
        f"/v1/indices/{index}/documents?refresh=true",
        json=[{"id": "long", "text": long_text}, {"id": "short", "text": "国务院召开常务会议，部署经济工作。"}],
    )
    assert resp.status_code == 200, resp.json
    for hide in ("false", "true"):
        found = api.get(f"/v1/indices/{index}/search?q=国务院&hide_duplicates={hide}")
        assert found.status_code == 200, found.json
        assert {h["id"] for h in found.json["hits"]} == {"long", "short"}
        long_hit = next(h for h in found.json["hits"] if h["id"] == "long")
        assert "<em>国</em>" in "".join(long_hit["highlight"]["text"])
    es.indices.delete(index=index)


def test_counts_of_40000_clusters_or_more_are_shown_as_estimates(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    """Clusters are counted by a cardinality aggregation, close to exact below its precision threshold of 40,000 and an
    estimate from there on: the API says which, the pages say "about"."""
    setup_index(es, index_name)
    many = 40_500
    helpers.bulk(
        es,
        ({"_index": index_name, "_id": f"d{k}", "_source": _member(f"d{k}", False, k % 60)} for k in range(many)),
        chunk_size=5000,
        refresh=True,
    )
    api: FlaskClient = create_app({"es_url": es_url}).test_client()
    listed = api.get(f"/v1/indices/{index_name}/clusters?min_size=1&size=1").json
    assert listed["clusters_total_estimated"] is True and abs(listed["clusters_total"] - many) < many // 50, listed
    hidden = api.get(f"/v1/indices/{index_name}/search?q=新闻&hide_duplicates=true&size=1").json
    assert hidden["total_estimated"] is True and abs(hidden["total"] - many) < many // 50, hidden
    shown = api.get(f"/v1/indices/{index_name}/search?q=新闻&size=1").json
    assert (shown["total"], shown["total_estimated"]) == (many, False)
    pages = (f"/overview?index={index_name}", f"/clusters?index={index_name}", f"/?index={index_name}&q=新闻&hide=1")
    for page in pages:
        html = api.get(page).get_data(as_text=True)
        assert "about " in html, page
    # below the threshold: the count as it is, and no "about"
    es.indices.delete(index=index_name)
    _write(es, index_name, _DOCS)
    listed = api.get(f"/v1/indices/{index_name}/clusters?min_size=1&size=1").json
    assert (listed["clusters_total"], listed["clusters_total_estimated"]) == (3, False)
    assert "about " not in api.get(f"/overview?index={index_name}").get_data(as_text=True)

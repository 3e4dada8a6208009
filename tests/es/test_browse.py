"""The reading side (:mod:`neardup.es.browse`): collapse over neardup.cluster, and search over a text
longer than Elasticsearch's highlight limit."""

from __future__ import annotations

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from neardup.es.client import setup_index
from neardup.service import create_app

pytestmark = pytest.mark.es


def test_collapse_on_cluster_returns_one_hit_per_cluster(es: Elasticsearch, index_name: str) -> None:
    setup_index(es, index_name)
    clusters = {"d1": "c1", "d2": "c1", "d3": "c1", "d4": "c2", "d5": "c3", "d6": "c3"}
    for doc_id, cluster in clusters.items():
        es.index(index=index_name, id=doc_id, document={"text": "新闻", "neardup": {"cluster": cluster}})
    es.indices.refresh(index=index_name)
    resp = es.search(
        index=index_name,
        query={"match": {"text": "新闻"}},
        collapse={"field": "neardup.cluster"},
        aggs={"clusters": {"cardinality": {"field": "neardup.cluster"}}},
        size=10,
    )
    seen = [hit["fields"]["neardup.cluster"][0] for hit in resp["hits"]["hits"]]
    assert sorted(seen) == ["c1", "c2", "c3"]
    assert resp["aggregations"]["clusters"]["value"] == 3


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

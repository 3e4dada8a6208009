"""The reading side (:mod:`neardup.es.browse`) relies on collapse over neardup.cluster."""

from __future__ import annotations

import pytest
from elasticsearch import Elasticsearch

from neardup.es.client import setup_index

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

"""The mappings against the real Elasticsearch: every neardup.* field reads back as shipped."""

from __future__ import annotations

import random

import pytest
from elasticsearch import Elasticsearch

from neardup import mappings
from neardup.errors import UsageError
from neardup.es.client import setup_index

pytestmark = pytest.mark.es


def test_setup_creates_index_with_every_neardup_field(es: Elasticsearch, index_name: str) -> None:
    assert setup_index(es, index_name) is True
    es.index(
        index=index_name,
        id="a",
        document={
            "title": "标题",
            "text": "正文",
            "neardup": {"fingerprint": -1, "cluster": "a", "b0": "ffff"},
        },
        refresh=True,
    )
    got = es.indices.get_mapping(index=index_name)[index_name]["mappings"]["properties"]["neardup"]
    expected = mappings.neardup_fields()
    assert set(got["properties"]) == set(expected)
    for name, spec in expected.items():
        assert got["properties"][name]["type"] == spec["type"], name
    assert got["dynamic"] == "strict"


def test_setup_is_idempotent_and_prepares_existing_index(es: Elasticsearch, index_name: str) -> None:
    es.indices.create(index=index_name, mappings={"properties": {"body": {"type": "text"}}})
    assert setup_index(es, index_name) is False
    assert setup_index(es, index_name) is False
    props = es.indices.get_mapping(index=index_name)[index_name]["mappings"]["properties"]
    assert props["body"]["type"] == "text"
    assert props["neardup"]["properties"]["cluster"]["type"] == "keyword"


def test_strict_neardup_object_rejects_unknown_fields(es: Elasticsearch, index_name: str) -> None:
    setup_index(es, index_name)
    with pytest.raises(Exception, match="strict_dynamic_mapping_exception"):
        es.index(index=index_name, document={"neardup": {"typo_field": 1}})


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


def test_invalid_index_name_is_refused_before_any_request(es: Elasticsearch) -> None:
    with pytest.raises(UsageError):
        setup_index(es, "Bad*Name")


def test_hamming_script_filter_keeps_exactly_the_close_fingerprints(es: Elasticsearch, index_name: str) -> None:
    """The in-Elasticsearch Hamming check (Painless on a full cluster, the native script embedded)."""
    from neardup.es.lookup import hamming_filter, script_language
    from neardup.ingest.bits import hamming, to_signed

    setup_index(es, index_name)
    rng = random.Random(5)
    query = rng.getrandbits(64)
    values = [query ^ (1 << rng.randrange(64)) ^ (1 << rng.randrange(64)) for _ in range(10)]
    values += [query ^ rng.getrandbits(64) for _ in range(40)] + [query, query ^ 0b1111]
    for k, v in enumerate(values):
        es.index(index=index_name, id=str(k), document={"neardup": {"fingerprint": [to_signed(v)]}})
    es.indices.refresh(index=index_name)
    lang = script_language(es)
    for k in (0, 2, 3, 4):
        resp = es.search(index=index_name, query=hamming_filter([to_signed(query)], k, lang), size=100)
        got = {int(h["_id"]) for h in resp["hits"]["hits"]}
        assert got == {i for i, v in enumerate(values) if hamming(v, query) <= k}

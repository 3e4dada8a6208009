"""Index set-up (:mod:`neardup.es.client`) against the real Elasticsearch: every neardup.* field reads back as
shipped; the per-index field configuration is cached."""

from __future__ import annotations

from typing import Any

import pytest
from elasticsearch import ApiError, Elasticsearch

from neardup import mappings
from neardup.config import Settings
from neardup.errors import UsageError
from neardup.es.client import (
    RecordConfigs,
    install_index_template,
    make_client,
    read_index_meta,
    setup_index,
    write_index_meta,
    write_record_config,
)
from neardup.mappings import schema
from tests.es.holding_proxy import holding_proxy

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
    # the fingerprints are kept as doc values only, and a query on them is answered from those
    found = es.search(index=index_name, query={"term": {schema.path(schema.FINGERPRINT): -1}})
    assert [hit["_id"] for hit in found["hits"]["hits"]] == ["a"]


def test_an_index_neardup_creates_keeps_fewer_segments(es: Elasticsearch, index_name: str) -> None:
    """The index template's merge policy (every lookup visits every segment), kept when the template is put
    again naming a default pipeline, as ``neardup setup --pipeline`` does."""
    wanted = {
        "index.merge.policy.floor_segment": "100mb",
        "index.merge.policy.segments_per_tier": "5",
        "index.merge.policy.max_merge_at_once": "5",
    }
    assert setup_index(es, index_name) is True
    got = es.indices.get_settings(index=index_name, flat_settings=True)[index_name]["settings"]
    assert {k: got.get(k) for k in wanted} == wanted
    install_index_template(es, index_name, default_pipeline="some-pipeline")
    es.indices.delete(index=index_name)
    assert setup_index(es, index_name) is True
    got = es.indices.get_settings(index=index_name, flat_settings=True)[index_name]["settings"]
    assert {k: got.get(k) for k in [*wanted, "index.default_pipeline"]} == wanted | {
        "index.default_pipeline": "some-pipeline"
    }


def test_setup_is_idempotent_and_prepares_existing_index(es: Elasticsearch, index_name: str) -> None:
    es.indices.create(index=index_name, mappings={"properties": {"body": {"type": "text"}}})
    assert setup_index(es, index_name) is False
    assert setup_index(es, index_name) is False
    props = es.indices.get_mapping(index=index_name)[index_name]["mappings"]["properties"]
    assert props["body"]["type"] == "text"
    assert props["neardup"]["properties"]["cluster"]["type"] == "keyword"


def _neardup_mapping(es: Elasticsearch, index: str) -> dict[str, Any]:
    props: dict[str, Any] = es.indices.get_mapping(index=index)[index]["mappings"]["properties"][schema.ROOT]
    return props


def test_block_fields_have_norms_no_doc_values_an_older_index_its_own(es: Elasticsearch, index_name: str) -> None:
    setup_index(es, index_name)
    for block in schema.BLOCKS:
        mapped = _neardup_mapping(es, index_name)["properties"][block]
        assert (mapped["doc_values"], mapped["norms"]) == (False, True), block
    # an index mapped before: block fields with doc values and no norms, no `exact` field, not strict; and a plain
    # index, both behind one alias (what one of them lacks is not what the other lacks)
    older = {k: v for k, v in mappings.neardup_fields().items() if k != schema.EXACT}
    older |= {b: {"type": "keyword"} for b in schema.BLOCKS}
    old, plain, alias = f"{index_name}-old", f"{index_name}-plain", f"{index_name}-both"
    es.indices.create(index=old, mappings={"properties": {schema.ROOT: {"properties": older}}})
    es.indices.create(index=plain, mappings={"properties": {"body": {"type": "text"}}})
    es.indices.update_aliases(actions=[{"add": {"indices": [old, plain], "alias": alias}}])
    try:
        assert setup_index(es, alias) is False
        for name in (old, plain):
            got = _neardup_mapping(es, name)
            assert got["dynamic"] == "strict" and set(got["properties"]) == set(mappings.neardup_fields()), name
        assert _neardup_mapping(es, old)["properties"][schema.BLOCKS[0]] == {"type": "keyword"}
        assert _neardup_mapping(es, plain)["properties"][schema.BLOCKS[0]]["doc_values"] is False
    finally:
        es.indices.delete(index=[old, plain])


def test_exists_on_a_block_field_finds_the_documents_that_have_blocks(es: Elasticsearch, index_name: str) -> None:
    """A block field keeps no doc values: `exists` on it is answered from its norms."""
    setup_index(es, index_name)
    es.index(index=index_name, id="blocks", document={"text": "正文", schema.ROOT: {schema.BLOCKS[0]: ["0:ffff"]}})
    es.index(index=index_name, id="none", document={"text": "正文", schema.ROOT: {schema.CLUSTER: "none"}})
    es.indices.refresh(index=index_name)
    found = es.search(index=index_name, query={"exists": {"field": schema.path(schema.BLOCKS[0])}})
    assert [hit["_id"] for hit in found["hits"]["hits"]] == ["blocks"]


def test_a_neardup_field_of_another_type_is_refused_by_name(es: Elasticsearch, index_name: str) -> None:
    mapped = {schema.ROOT: {"properties": {schema.CLUSTER: {"type": "text"}}}}
    es.indices.create(index=index_name, mappings={"properties": mapped})
    with pytest.raises(ApiError, match=schema.CLUSTER):
        setup_index(es, index_name)


def test_strict_neardup_object_rejects_unknown_fields(es: Elasticsearch, index_name: str) -> None:
    setup_index(es, index_name)
    with pytest.raises(Exception, match="strict_dynamic_mapping_exception"):
        es.index(index=index_name, document={"neardup": {"typo_field": 1}})


def test_invalid_index_name_is_refused_before_any_request(es: Elasticsearch) -> None:
    with pytest.raises(UsageError):
        setup_index(es, "Bad*Name")


pytestmark = pytest.mark.es

FIELDS = {"fields": {"body": {"mode": "text"}, "tags": {"mode": "set"}}}
OTHER = {"fields": {"body": {"mode": "text"}, "kind": {"mode": "value"}}}


def test_configuration_is_cached_for_ttl_and_a_local_write_is_seen_at_once(es: Elasticsearch, index_name: str) -> None:
    setup_index(es, index_name)
    now = [0.0]
    configs = RecordConfigs(es, ttl=30.0, clock=lambda: now[0])
    assert configs.get(index_name) is None
    configs.write(index_name, FIELDS)
    first = configs.get(index_name)
    assert first is not None and set(first.fields) == {"body", "tags"}

    write_record_config(es, index_name, OTHER)  # another process changes it
    now[0] = 29.0
    assert configs.get(index_name) == first  # still cached: no GET _mapping per request
    now[0] = 31.0
    changed = configs.get(index_name)
    assert changed is not None and set(changed.fields) == {"body", "kind"}

    configs.write(index_name, None)
    assert configs.get(index_name) is None


def test_what_is_kept_with_an_index_is_kept_through_an_alias_of_it(es: Elasticsearch, index_name: str) -> None:
    """An alias of one index reads and writes that index's meta; an alias of several writes nothing."""
    one, other, alias, both = index_name, f"{index_name}-other", f"{index_name}-alias", f"{index_name}-both"
    for name in (one, other):
        setup_index(es, name)
    es.indices.put_alias(index=one, name=alias)
    es.indices.update_aliases(actions=[{"add": {"indices": [one, other], "alias": both}}])
    try:
        write_index_meta(es, alias, "started", "2026-11-27")
        assert read_index_meta(es, one, "started") == "2026-11-27" == read_index_meta(es, alias, "started")
        with pytest.raises(UsageError, match=f"names 2 indices .*{other}"):
            write_index_meta(es, both, "started", "later")
        with pytest.raises(UsageError, match="keep different neardup started"):
            read_index_meta(es, both, "started")
        assert read_index_meta(es, other, "started") is None and read_index_meta(es, "no-such-index", "x") is None
    finally:
        es.indices.delete(index=other, ignore_unavailable=True)


@pytest.mark.parametrize("flag_in_es", [True, False], ids=["flag-in-es", "python"])
def test_with_the_clusters_pipeline_flagging_requests_go_through_the_first_named_node_that_answers(
    es_url: str, flag_in_es: bool
) -> None:
    """Two nodes named (two proxies in front of one node): each of the cluster's nodes flags against a window of its
    own, so the service writing through the pipeline sticks to the first that answers, and moves on when it stops;
    otherwise requests are spread round-robin."""
    with holding_proxy(es_url, hold=0, path="") as first, holding_proxy(es_url, hold=0, path="") as second:
        client = make_client(Settings(es_url=f"{first.url},{second.url}", flag_in_es=flag_in_es))
        for _ in range(6):
            client.info()
        if flag_in_es:
            assert (first.matched, second.matched) == (6, 0)
        else:
            assert (first.matched, second.matched) == (3, 3)
        before = second.matched
        first.drop, first.held = True, range(first.matched + 1, 1 << 30)  # it stops answering
        for _ in range(3):
            client.info()
        assert second.matched == before + 3
        client.close()

"""What the plugin's ``neardup_blocks`` query and ``verify`` script refuse, and how the lookup takes a refusal.

A refusal is a 400 that names what to change, made when the query is built (on every shard alike), never a 500,
a 200 with failed shards, or a silent 0 hits; and the lookup raises it instead of taking it for a cluster
without the plugin and falling back to a search that finds nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from elasticsearch import ApiError, BadRequestError, Elasticsearch, helpers

from neardup import mappings
from neardup.errors import SearchFailed
from neardup.es.client import setup_index
from neardup.es.lookup import _no_verify_script, has_verify_script, search_candidates, verify_params
from neardup.ingest.fingerprint import Fingerprinter, Record
from neardup.ingest.verify import VerifyConfig
from neardup.mappings import schema
from tests.indices import remove_indices

pytestmark = pytest.mark.es

TEXT = "国务院总理今天主持召开国务院常务会议，部署进一步扩大内需、稳定经济增长的政策措施。"
B0, HEX, FINGERPRINT = schema.BLOCK_FIELDS[0], schema.path(schema.HEX), schema.path(schema.FINGERPRINT)


@pytest.fixture(scope="module")
def record() -> Record:
    return Fingerprinter.default().fingerprint(TEXT)


@pytest.fixture
def indexed(es: Elasticsearch, index_name: str, record: Record) -> Iterator[str]:
    """``index_name`` set up by neardup with ``record`` in it, and a 3-shard copy (``-3``) of the same mapping,
    where only the shard holding the document met a check's bad field before."""
    if not has_verify_script(es):
        pytest.skip("the cluster has no neardup plugin")
    setup_index(es, index_name)
    three = f"{index_name}-3"
    es.indices.create(
        index=three, settings={"number_of_shards": 3}, mappings=mappings.component_template()["template"]["mappings"]
    )
    for index in (index_name, three):
        helpers.bulk(es, [{"_index": index, "_id": "a", schema.ROOT: schema.record_fields(record)}], refresh="wait_for")
    yield index_name
    remove_indices(es, three)


def _blocks(record: Record, **extra: Any) -> dict[str, Any]:
    tokens = dict(zip(schema.BLOCK_FIELDS, record.block_tokens(), strict=True))
    return {"neardup_blocks": {"tokens": tokens, **extra}}


def _verify(record: Record, **changed: Any) -> dict[str, Any]:
    params = verify_params(record, VerifyConfig())
    assert params is not None
    params.update(changed)
    return {key: value for key, value in params.items() if value is not None}


def _refused(es: Elasticsearch, index: str, query: dict[str, Any], *parts: str) -> None:
    with pytest.raises(BadRequestError) as refused:
        es.search(index=index, query=query)
    for part in parts:
        assert part in str(refused.value.body), (part, refused.value.body)


def test_the_plugins_refusal_is_raised_not_taken_for_a_missing_plugin(
    es: Elasticsearch, index_name: str, record: Record
) -> None:
    """An index whose neardup fields a plain bulk mapped dynamically (text, not keyword): the plugin's query refuses
    it saying so, and the lookup raises that, where it fell back to a search that found nothing."""
    if not has_verify_script(es):
        pytest.skip("the cluster has no neardup plugin")
    helpers.bulk(
        es, [{"_index": index_name, "_id": "a", schema.ROOT: schema.record_fields(record)}], refresh="wait_for"
    )
    with pytest.raises(SearchFailed) as failed:
        search_candidates(es, index_name, [record], 10, prefilter=VerifyConfig())
    assert failed.value.status == 400
    assert "must be an indexed keyword field" in str(failed.value.error), failed.value.error
    assert "neardup setup" in str(failed.value.error)


class _WithoutBlockQuery:
    """A client of a cluster whose plugin predates ``neardup_blocks``: a multi-search holding one is refused whole,
    as Elasticsearch refuses a query it cannot parse."""

    def __init__(self, es: Elasticsearch) -> None:
        self.es = es
        self.sent: list[dict[str, Any]] = []

    def msearch(self, searches: list[dict[str, Any]]) -> Any:
        self.sent += searches[1::2]
        if "neardup_blocks" in str(searches):
            error = {"type": "parsing_exception", "reason": "unknown query [neardup_blocks]"}
            try:  # a real 400's response meta, for the refusal this cluster's plugin cannot give
                self.es.search(query={"no_such_query": {}})
            except BadRequestError as real:
                raise BadRequestError(
                    message=error["type"], meta=real.meta, body={"error": error, "status": 400}
                ) from None
            raise AssertionError("an unknown query was not refused")
        return self.es.msearch(searches=searches)


def test_a_cluster_without_the_plugins_query_is_searched_without_it(
    es: Elasticsearch, indexed: str, record: Record
) -> None:
    """What only a missing query reads as: the lookup then searches the way it does without the plugin."""
    everything = search_candidates(es, indexed, [record], 10)
    older = search_candidates(_WithoutBlockQuery(es), indexed, [record], 10, prefilter=VerifyConfig())  # type: ignore[arg-type]
    assert [c.id for c in older[0]] == [c.id for c in everything[0]] == ["a"]
    # with no check to run there (metadata scores), the same search again without the plugin: doc values, no _source
    client = _WithoutBlockQuery(es)
    unchecked = search_candidates(client, indexed, [record], 10, prefilter=VerifyConfig(mu=0.8))  # type: ignore[arg-type]
    assert [c.id for c in unchecked[0]] == ["a"]
    assert [("docvalue_fields" in body, "neardup_blocks" in str(body)) for body in client.sent] == [
        (True, True),
        (True, False),
    ]


def test_only_a_missing_query_or_language_reads_as_no_plugin() -> None:
    """The plugin's own refusals name ``[neardup_blocks]`` too: they are errors to raise, not a missing plugin."""
    missing = [
        {"type": "parsing_exception", "reason": "unknown query [neardup_blocks] did you mean [bool]?"},
        {"type": "parsing_exception", "reason": "[neardup_blocks] does not take [verify] as START_OBJECT"},
        {"root_cause": [{"reason": "failed to create query: script_lang not supported [neardup]"}]},
    ]
    refusals = [
        {"reason": "failed to create query: [neardup_blocks] field [neardup.b0] must be an indexed keyword field"},
        {"reason": "[neardup_blocks] verify param [sketch] must be a list of unsigned 32-bit values"},
        {"reason": "[neardup_blocks] was given [70000] tokens, more than the [65536] this index allows"},
    ]
    assert [_no_verify_script(e) for e in missing] == [True] * len(missing)
    assert [_no_verify_script(e) for e in refusals] == [False] * len(refusals)


def test_a_check_reading_fields_of_other_types_is_a_400_naming_them(
    es: Elasticsearch, indexed: str, record: Record
) -> None:
    """On one shard it was a 500 (illegal_state_exception), on three a 200 with failed shards; _validate called it
    valid. Now a 400 on every shard, naming the parameter, the field and the type it needs."""
    wrong_sketch = _verify(record, sketch_field=HEX)
    wrong_hex = _verify(record, hex_field=FINGERPRINT)
    for index in (indexed, f"{indexed}-3"):
        _refused(es, index, _blocks(record, verify=wrong_sketch), "[sketch_field] names [neardup.hex]", "[binary]")
        _refused(es, index, _blocks(record, verify=wrong_hex), "[hex_field] names [neardup.fingerprint]", "[keyword]")
        script = {"script": {"script": {"lang": "neardup", "source": "verify", "params": wrong_sketch}}}
        _refused(es, index, script, "[sketch_field] names [neardup.hex]", "[binary]")
        assert es.indices.validate_query(index=index, query=_blocks(record, verify=wrong_hex))["valid"] is False
    good = es.search(index=f"{indexed}-3", query=_blocks(record, verify=_verify(record)))
    assert good["hits"]["total"]["value"] == 1 and good["_shards"]["failed"] == 0
    # what the lookup sends is taken: an empty sketch too (a stored document without one), which accepts nothing
    # at these thresholds, as in Python; and the fingerprint signed or as its unsigned 64 bits
    empty = es.search(index=indexed, query=_blocks(record, verify=_verify(record, sketch=[])))
    assert empty["hits"]["total"]["value"] == 0
    unsigned = _verify(record, fingerprint=record.fingerprint)
    assert es.search(index=indexed, query=_blocks(record, verify=unsigned))["hits"]["total"]["value"] == 1


def test_a_hex_field_holding_no_hex_is_a_400_naming_it(es: Elasticsearch, index_name: str, record: Record) -> None:
    """A keyword hex field holding other values: read when the sketch alone does not decide, it failed each shard
    with a number_format_exception."""
    if not has_verify_script(es):
        pytest.skip("the cluster has no neardup plugin")
    es.indices.create(
        index=index_name,
        mappings={
            "properties": {
                "b": {"type": "keyword"},
                "sketch": {"type": "binary", "doc_values": True},
                "code": {"type": "keyword"},
            }
        },
    )
    es.index(
        index=index_name,
        id="a",
        document={"b": "0:0001", "sketch": schema.record_fields(record)[schema.MINHASH], "code": "not-hex"},
        refresh="wait_for",
    )
    # an estimate of 1.0 is below min_jaccard 1.0 only if it is not 1.0: drop one value, so the fingerprint decides
    check = _verify(record, sketch_field="sketch", hex_field="code", min_jaccard=1.0, near_jaccard=0.0)
    check["sketch"] = check["sketch"][1:]
    query = {"neardup_blocks": {"tokens": {"b": ["0:0001"]}, "verify": check}}
    _refused(es, index_name, query, "[code]", "[not-hex]", "hex")


@pytest.mark.parametrize(
    ("changed", "named"),
    [
        ({"sketch": None}, "[sketch]"),
        ({"sketch": "abc"}, "[sketch] must be a list"),
        ({"sketch": [5, 3]}, "[sketch] must be distinct values in ascending order"),
        ({"sketch": [3, 3]}, "[sketch] must be distinct values in ascending order"),
        ({"sketch": [-1, 3]}, "[sketch] item 0"),
        ({"sketch": [1, 2**32]}, "[sketch] item 1"),
        ({"sketch_size": 0}, "[sketch_size]"),
        ({"sketch_size": -1}, "[sketch_size]"),
        ({"sketch_size": 10**12}, "[sketch_size]"),
        ({"max_distance": 65}, "[max_distance]"),
        ({"max_distance": -1}, "[max_distance]"),
        ({"min_jaccard": 1.5}, "[min_jaccard]"),
        ({"near_jaccard": -0.5}, "[near_jaccard]"),
        ({"fingerprint": 1.5e19}, "[fingerprint]"),
        ({"fingerprint": 2**70}, "[fingerprint]"),
        ({"fingerprint": "ffffffffffffffff"}, "[fingerprint] must be a whole number"),
    ],
)
def test_bad_check_parameters_are_a_400_naming_them(
    es: Elasticsearch, indexed: str, record: Record, changed: dict[str, Any], named: str
) -> None:
    """Each gave 0 hits (200), an estimate of NaN, or a fingerprint clamped or cut to 64 bits."""
    _refused(es, indexed, _blocks(record, verify=_verify(record, **changed)), named)
    script = {"script": {"script": {"lang": "neardup", "source": "verify", "params": _verify(record, **changed)}}}
    _refused(es, indexed, script, named)


def test_min_shared_and_the_hamming_distance_are_checked(es: Elasticsearch, indexed: str, record: Record) -> None:
    for bad in (1.7, "abc"):
        _refused(es, indexed, _blocks(record, min_shared=bad), "[min_shared]")
    for distance in (65, -1):
        params = {"field": FINGERPRINT, "fingerprints": [5], "max_distance": distance}
        script = {"script": {"script": {"lang": "neardup", "source": "hamming", "params": params}}}
        _refused(es, indexed, script, "[max_distance]")


def test_more_tokens_than_the_index_allows_are_a_400_as_for_terms(es: Elasticsearch, indexed: str) -> None:
    many = [f"{k}:{k:x}" for k in range(65_537)]
    with pytest.raises(BadRequestError):
        es.search(index=indexed, query={"terms": {B0: many}})
    _refused(es, indexed, {"neardup_blocks": {"tokens": {B0: many}}}, "[65537] tokens", "index.max_terms_count")
    es.indices.put_settings(index=indexed, settings={"index.max_terms_count": 70_000})
    assert es.search(index=indexed, query={"neardup_blocks": {"tokens": {B0: many}}})["hits"]["total"]["value"] == 0


def test_a_repeated_token_counts_as_its_term_clauses_do(es: Elasticsearch, indexed: str, record: Record) -> None:
    """``[t, t]`` with min_shared 2 matches what a bool of two constant-score term clauses does, with its score;
    and the query highlights what it matched, as ``terms`` does."""
    token = record.block_tokens()[0][0]
    clauses = [{"constant_score": {"filter": {"term": {B0: token}}}}] * 2
    bool_hits = es.search(index=indexed, query={"bool": {"should": clauses, "minimum_should_match": 2}})["hits"]
    blocks = {"neardup_blocks": {"tokens": {B0: [token, token]}, "min_shared": 2}}
    hits = es.search(index=indexed, query=blocks, highlight={"fields": {B0: {}}})["hits"]
    assert [(h["_id"], h["_score"]) for h in hits["hits"]] == [(h["_id"], h["_score"]) for h in bool_hits["hits"]]
    assert hits["hits"][0]["_score"] == 2.0
    assert hits["hits"][0]["highlight"] == {B0: [f"<em>{token}</em>"]}


def test_a_refusal_from_every_index_of_a_search_is_one_error(es: Elasticsearch, indexed: str, record: Record) -> None:
    """Both indices refuse alike, so the search is a 400 (no shard answers with 0 hits meanwhile)."""
    with pytest.raises(ApiError) as refused:
        es.search(index=f"{indexed},{indexed}-3", query=_blocks(record, verify=_verify(record, sketch_field=HEX)))
    assert refused.value.meta.status == 400

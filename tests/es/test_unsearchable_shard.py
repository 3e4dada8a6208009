"""A shard that cannot be searched makes a lookup fail, never answer with fewer candidates: on the real node, an
index of two shards of which one has no copy (as for a moment while a node leaves). Elasticsearch's default would
answer from the other shard alone, and a duplicate stored in the missing one would pass for an original."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from elasticsearch import ApiError, Elasticsearch

from neardup.errors import SearchFailed
from neardup.es.batch import scan
from neardup.es.client import setup_index
from neardup.es.lookup import search_candidates
from neardup.es.pipeline import FLAG_PIPELINE_ID, install_pipeline, nodes_without_processor
from neardup.evaluation.corpus import load_peoples_daily
from neardup.ingest.fingerprint import Fingerprinter
from neardup.service import create_app
from tests.service.access_helpers import error_of

pytestmark = pytest.mark.es


@pytest.fixture
def half_index(es: Elasticsearch, index_name: str) -> Iterator[str]:
    """``index_name`` with the neardup fields and two primary shards, at most one of them on a node: on a
    one-node cluster the other stays unassigned."""
    if len(es.nodes.info()["nodes"]) != 1:
        pytest.skip("needs a one-node cluster, where the second shard has nowhere to go")
    es.indices.create(
        index=index_name,
        settings={
            "number_of_shards": 2,
            "number_of_replicas": 0,
            "index.routing.allocation.total_shards_per_node": 1,
        },
        wait_for_active_shards="0",
    )
    setup_index(es, index_name)  # the neardup fields, added to the index just made
    deadline = time.monotonic() + 30
    while not any(s["state"] == "STARTED" for s in es.cat.shards(index=index_name, format="json")):
        assert time.monotonic() < deadline, es.cat.shards(index=index_name, format="json")
        time.sleep(0.1)
    yield index_name


def test_a_lookup_with_a_shard_missing_fails_with_503(es: Elasticsearch, es_url: str, half_index: str) -> None:
    record = Fingerprinter.default().fingerprint(load_peoples_daily()[0].text)
    with pytest.raises(SearchFailed) as failed:
        search_candidates(es, half_index, [record], max_candidates=5)
    assert failed.value.status == 503, failed.value.error
    api = create_app({"es_url": es_url}).test_client()
    resp = api.post(f"/v1/indices/{half_index}/duplicates", json={"text": load_peoples_daily()[0].text})
    assert resp.status_code == 503, resp.json
    assert resp.json["error"]["type"] == "elasticsearch_unavailable"
    assert resp.headers["Retry-After"] == "1"


def test_a_batch_scan_with_a_shard_missing_fails_instead_of_reading_half(es: Elasticsearch, half_index: str) -> None:
    """The point in time does not open without every shard (each page's search, once it is open, refuses a shard
    lost later the same way: ``allow_partial_search_results`` false)."""
    with pytest.raises(ApiError) as failed:
        list(scan(es, half_index, {"match_all": {}}, False, slices=1, page_size=10))
    assert failed.value.meta.status == 503


def test_flagging_with_a_shard_missing_fails_the_document_after_retrying(es: Elasticsearch, half_index: str) -> None:
    """The processor's candidate search is sent again for some seconds (a shard copy may come back), then the
    document fails, naming itself; it is not written as an original of its own."""
    if nodes_without_processor(es):
        pytest.skip("this cluster has no neardup plugin")
    install_pipeline(es, flag=True)
    # an id routed to the shard that is there, so that only the search can fail the document
    doc_id = next(f"d{k}" for k in range(100) if _routes_to_started_shard(es, half_index, f"d{k}"))
    started = time.monotonic()
    ops = [{"index": {"_index": half_index, "_id": doc_id}}, {"text": load_peoples_daily()[0].text}]
    item = es.options(request_timeout=60).bulk(operations=ops, pipeline=FLAG_PIPELINE_ID)["items"][0]["index"]
    waited = time.monotonic() - started
    assert "error" in item, item  # not written as an original that missed the other shard's candidates
    reason = item["error"]["reason"]
    assert reason.startswith(f"neardup flagging: the candidate search for document [{doc_id}] of index [{half_index}]")
    # the retries' delays add up to 6.35 s (50 ms doubling, 7 times): it was sent again, then given up
    assert waited >= 6.3, waited
    assert es.options(ignore_status=404).get(index=half_index, id=doc_id)["found"] is False


def _routes_to_started_shard(es: Elasticsearch, index: str, doc_id: str) -> bool:
    shards = es.search_shards(index=index, routing=doc_id)["shards"]
    return any(copy["state"] == "STARTED" for group in shards for copy in group)


@pytest.mark.parametrize(
    "url",
    [
        "/v1/indices/{index}/search?q=新闻",
        "/v1/indices/{index}/search?q=新闻&hide_duplicates=true",
        "/v1/indices/{index}/clusters",
        "/overview?index={index}",
        "/?index={index}&q=新闻&hide=1",
    ],
)
def test_a_search_with_a_shard_missing_fails_instead_of_answering_short(es_url: str, half_index: str, url: str) -> None:
    api = create_app({"es_url": es_url}).test_client()
    resp = api.get(url.format(index=half_index))
    assert error_of(resp, 503)["type"] == "elasticsearch_unavailable"
    # the API answers JSON, the web page a page
    assert resp.mimetype == ("application/json" if url.startswith("/v1/") else "text/html"), resp.mimetype

"""A bulk request Elasticsearch carries out but whose answer never reaches the client in time (a slow network, a
long GC pause) or whose connection is lost before the answer: its documents may be written, and the client cannot
know. Through a proxy that holds back the answer to one ``_bulk`` request (the batch's first, or a later one): an
all-or-nothing batch is undone whole, those documents included, and a partial batch answers them as not known to be
written; the flagging pipeline's write is never sent again."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from elasticsearch import ConnectionError as ESConnectionError
from elasticsearch import Elasticsearch

from neardup.es.client import FirstNamed, never_sent, setup_index
from neardup.es.indexing import IngestConfig, ItemResult, _bulk_once, index_batch, index_batch_in_pipeline
from neardup.es.pipeline import FLAG_PIPELINE_ID, install_pipeline, nodes_without_processor
from neardup.incoming.documents import Incoming
from neardup.ingest.fingerprint import Fingerprinter
from tests.es.batch_helpers import distinct_docs, stored_ids
from tests.es.holding_proxy import TIMEOUT, HoldingProxy, holding_proxy

pytestmark = pytest.mark.es

CHUNK = 5
DOCS = 12


@pytest.fixture(params=[{}])
def proxied(es_url: str, request: pytest.FixtureRequest) -> Iterator[tuple[Elasticsearch, HoldingProxy]]:
    """A client through a proxy holding the answer to the batch's second ``_bulk`` (its second chunk, or its second
    pass), or as ``request.param`` says (:class:`HoldingProxy`'s arguments; ``retries``: the client's)."""
    how = {"hold": 2, "retries": 0} | request.param
    retries = how.pop("retries")
    with holding_proxy(es_url, **how) as proxy:
        client = Elasticsearch(proxy.url, request_timeout=TIMEOUT, max_retries=retries, retry_on_timeout=False)
        yield client, proxy
        client.close()


def test_an_all_or_nothing_batch_is_undone_with_the_documents_no_answer_came_for(
    proxied: tuple[Elasticsearch, HoldingProxy], es: Elasticsearch, index_name: str
) -> None:
    client, proxy = proxied
    setup_index(es, index_name)
    es.index(index=index_name, id="d6", document={"text": "an older copy"}, refresh=True)  # put back, not deleted
    results = index_batch(
        client, index_name, distinct_docs(DOCS), Fingerprinter.default(), IngestConfig(chunk_size=CHUNK, atomic=True)
    )
    assert proxy.matched >= 2  # the held chunk was sent, and Elasticsearch carried it out
    assert [r.status for r in results] == ["not_written"] * CHUNK + ["error"] * (DOCS - CHUNK)
    assert stored_ids(es, index_name) == {"d6"}
    assert all(r.unanswered and "undone" in (r.error or "") for r in results[CHUNK:])
    assert es.get(index=index_name, id="d6")["_source"] == {"text": "an older copy"}


@pytest.mark.parametrize("proxied", [{"refuse": True}], indirect=True)
def test_a_partial_batch_whose_second_pass_fails_asks_again_for_what_names_a_refused_document(
    proxied: tuple[Elasticsearch, HoldingProxy], es: Elasticsearch, index_name: str
) -> None:
    """The first pass: r refused (a value its field's mapping cannot take), w written in r's cluster. The second pass,
    which writes w (and o) again without r, is refused: w is answered as an error, to be sent again."""
    client, proxy = proxied
    setup_index(es, index_name)
    es.indices.put_mapping(index=index_name, properties={"n": {"type": "integer"}})
    first, second = distinct_docs(2)
    text = first.text
    docs = [
        Incoming("r", text, None, {"n": "not a number"}),
        Incoming("w", text + "（完）"),
        Incoming("o", second.text),
    ]
    results = {
        r.id: r for r in index_batch(client, index_name, docs, Fingerprinter.default(), IngestConfig(atomic=False))
    }
    assert proxy.matched >= 2  # the second pass was sent
    assert results["r"].status == "error" and results["r"].error_status == 400
    assert results["w"].status == "error" and "send it again" in (results["w"].error or ""), results["w"]
    assert "'r'" in (results["w"].error or "")
    assert results["o"].status == "created" and results["o"].cluster == "o"  # named no refused document: it stands


def test_a_partial_batch_says_which_documents_may_be_written(
    proxied: tuple[Elasticsearch, HoldingProxy], es: Elasticsearch, index_name: str
) -> None:
    client, _ = proxied
    setup_index(es, index_name)
    results = index_batch(
        client, index_name, distinct_docs(DOCS), Fingerprinter.default(), IngestConfig(chunk_size=CHUNK, atomic=False)
    )
    assert [r.status for r in results] == ["created"] * CHUNK + ["error"] * (DOCS - CHUNK)
    for r in results[CHUNK:]:
        assert r.unanswered and "may be written" in (r.error or ""), r
    assert {f"d{k}" for k in range(CHUNK, 2 * CHUNK)} <= stored_ids(es, index_name)  # as the answers warn


@pytest.mark.parametrize("proxied", [{"hold": 1}], indirect=True)
def test_a_batch_whose_only_request_got_no_answer_is_undone_not_answered_as_never_sent(
    proxied: tuple[Elasticsearch, HoldingProxy], es: Elasticsearch, index_name: str
) -> None:
    """One chunk, carried out, its answer lost: the documents are written, so "Elasticsearch is unavailable, nothing
    was written" would be untrue; the batch is undone like one whose later chunk went unanswered."""
    client, proxy = proxied
    setup_index(es, index_name)
    es.index(index=index_name, id="d2", document={"text": "an older copy"}, refresh=True)
    results = index_batch(client, index_name, distinct_docs(CHUNK), Fingerprinter.default(), IngestConfig(atomic=True))
    assert proxy.matched == 2  # the held write, then the undo
    assert all(r.status == "error" and r.unanswered and "undone" in (r.error or "") for r in results), results
    assert stored_ids(es, index_name) == {"d2"}
    assert es.get(index=index_name, id="d2")["_source"] == {"text": "an older copy"}


@pytest.mark.parametrize("proxied", [{"hold": 1}], indirect=True)
def test_a_partial_batch_whose_only_request_got_no_answer_says_its_documents_may_be_written(
    proxied: tuple[Elasticsearch, HoldingProxy], es: Elasticsearch, index_name: str
) -> None:
    client, _ = proxied
    setup_index(es, index_name)
    results = index_batch(client, index_name, distinct_docs(CHUNK), Fingerprinter.default(), IngestConfig(atomic=False))
    assert all(r.status == "error" and r.unanswered and "may be written" in (r.error or "") for r in results)
    assert stored_ids(es, index_name) == {f"d{k}" for k in range(CHUNK)}  # as the answers warn


def test_a_request_that_never_connected_raises_as_elasticsearch_away(index_name: str) -> None:
    """Nothing reached Elasticsearch: the caller's "unavailable, nothing written" (the service's 503) is true."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    nowhere = Elasticsearch(f"http://127.0.0.1:{port}", max_retries=2)
    with pytest.raises(ESConnectionError) as raised:
        nowhere.index(index=index_name, document={"text": "x"})
    assert never_sent(raised.value)


@pytest.mark.parametrize("proxied", [{"hold": 1, "drop": True, "retries": 3}], indirect=True)
def test_the_flagging_pipelines_write_is_not_sent_again_when_its_connection_is_lost(
    proxied: tuple[Elasticsearch, HoldingProxy], es: Elasticsearch, index_name: str
) -> None:
    """The client would send a request again after a lost connection (on another node, with several); the pipeline's
    write, which may have been carried out, is undone instead (a copy sent again would find the first as stored)."""
    client, proxy = proxied
    _flag_pipeline(es)
    setup_index(es, index_name)
    results = _pipeline_batch(client, index_name)
    assert proxy.matched == 2  # the lost write, then the undo; not the write again
    assert all(r.status == "error" and r.unanswered and "undone" in (r.error or "") for r in results), results
    assert stored_ids(es, index_name) == set()


def _flag_pipeline(es: Elasticsearch) -> None:
    if nodes_without_processor(es):
        pytest.skip("this cluster has no neardup plugin")
    install_pipeline(es, flag=True)


def _pipeline_batch(client: Elasticsearch, index: str) -> list[ItemResult]:
    fingerprinter = Fingerprinter.default()
    return index_batch_in_pipeline(
        client,
        index,
        distinct_docs(CHUNK),
        FLAG_PIPELINE_ID,
        fingerprinter,
        IngestConfig(atomic=True),
        lambda batch: fingerprinter.fingerprint_many([(d.text or "", d.title) for d in batch]),
    )


@pytest.mark.parametrize(
    "proxied",
    [{"hold": 2, "drop": True, "path": "/_mget"}, {"hold": 2, "fail": 503, "path": "/_mget"}],
    ids=["connection-lost", "refused"],
    indirect=True,
)
def test_a_pipeline_batch_whose_assignments_cannot_be_read_back_is_undone(
    proxied: tuple[Elasticsearch, HoldingProxy], es: Elasticsearch, index_name: str
) -> None:
    """Written through the pipeline, then the read of what it assigned (the batch's second mget, after the one that
    checks for stored ids) lost or refused: the batch is undone, not answered "unavailable, nothing written" with its
    documents standing."""
    client, proxy = proxied
    _flag_pipeline(es)
    setup_index(es, index_name)
    results = _pipeline_batch(client, index_name)
    assert proxy.matched == 2
    assert all(r.status == "error" and r.unanswered and "undone" in (r.error or "") for r in results), results
    assert stored_ids(es, index_name) == set()


def test_the_pipelines_write_goes_to_the_next_node_when_one_refuses_the_connection(
    es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """Never sent twice, but a write no node took (a refused connection) goes to the next node named, as the client's
    own retries would send it: written, not answered 503 while another node is up. The write alone, sent first to
    the node that is down (in a batch, the check for stored ids before it would meet that node first)."""
    _flag_pipeline(es)
    setup_index(es, index_name)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{s.getsockname()[1]}"  # nothing listens there once closed
    client = Elasticsearch([down, es_url], randomize_nodes_in_pool=False, node_selector_class=FirstNamed)
    actions = [{"_op_type": "index", "_index": index_name, "_id": d.id, "_source": d.body()} for d in distinct_docs(3)]
    outcomes = _bulk_once(client, actions, IngestConfig(), FLAG_PIPELINE_ID)
    client.close()
    assert [(ok, info.get("result")) for ok, info in outcomes] == [(True, "created")] * 3, outcomes

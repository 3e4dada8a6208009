"""Elasticsearch going away in the middle of a batch, between two bulk chunks, on a node of the test's own that it
stops: the documents sent before stay written and are answered as written, those no answer came for are answered as
refused (they may be written), and an all-or-nothing batch that cannot be undone says which documents may stay
written."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest
from elasticsearch import Elasticsearch

from neardup.errors import BatchNotUndone
from neardup.es.client import setup_index
from neardup.es.indexing import IngestConfig, index_batch
from neardup.ingest.fingerprint import Fingerprinter
from neardup.node import TemporaryCluster
from tests.es.batch_helpers import distinct_docs, stored_ids
from tests.nodes import own_node

pytestmark = pytest.mark.skipif(bool(os.environ.get("ES_URL")), reason="needs an embedded node it may stop and restart")

CHUNK = 5
DOCS = 12
INDEX = "midbatch"


@pytest.fixture
def node() -> Iterator[TemporaryCluster]:
    with own_node("neardup-midbatch-", heap="512m") as n:
        yield n


def _client(node: TemporaryCluster) -> Elasticsearch:
    """A client of ``node``, started (again) with its data as it was left."""
    return Elasticsearch(node.start().url, request_timeout=10, max_retries=1)


def _stop_after_first_chunk(node: TemporaryCluster) -> Callable[[int], None]:
    seen: list[int] = []

    def progress(n: int) -> None:
        seen.append(n)
        if len(seen) == CHUNK:  # the first chunk's items are all answered: the next chunk meets no node
            node.stop()

    return progress


def test_a_partial_batch_answers_what_was_written_and_refuses_what_was_not_sent(node: TemporaryCluster) -> None:
    client = _client(node)
    setup_index(client, INDEX)
    docs = distinct_docs(DOCS)
    results = index_batch(
        client,
        INDEX,
        docs,
        Fingerprinter.default(),
        IngestConfig(chunk_size=CHUNK, atomic=False),
        on_progress=_stop_after_first_chunk(node),
    )
    client.close()
    assert [r.status for r in results] == ["created"] * CHUNK + ["error"] * (DOCS - CHUNK)
    assert [r.id for r in results] == [d.id for d in docs]
    assert all(r.cluster == r.id for r in results[:CHUNK])
    for r in results[CHUNK:]:
        assert r.error is not None and "unreachable" in r.error and r.cluster is None
    client = _client(node)
    assert stored_ids(client, INDEX) == {f"d{k}" for k in range(CHUNK)}
    client.close()


def test_an_all_or_nothing_batch_that_cannot_be_undone_names_what_may_stay_written(node: TemporaryCluster) -> None:
    client = _client(node)
    setup_index(client, INDEX)
    with pytest.raises(BatchNotUndone) as raised:
        index_batch(
            client,
            INDEX,
            distinct_docs(DOCS),
            Fingerprinter.default(),
            IngestConfig(chunk_size=CHUNK, atomic=True),
            on_progress=_stop_after_first_chunk(node),
        )
    client.close()
    # those written, and those no answer came for: a client cannot tell a chunk never sent from one carried out
    # before the node went (tests/es/test_timeout_mid_batch.py)
    assert raised.value.written == [f"d{k}" for k in range(DOCS)]
    assert "send the batch again" in str(raised.value)
    # what it names holds what Elasticsearch kept; the batch, sent again, is written whole
    client = _client(node)
    assert stored_ids(client, INDEX) == {f"d{k}" for k in range(CHUNK)}
    again = index_batch(
        client, INDEX, distinct_docs(DOCS), Fingerprinter.default(), IngestConfig(chunk_size=CHUNK, atomic=True)
    )
    assert [r.status for r in again] == ["updated"] * CHUNK + ["created"] * (DOCS - CHUNK)
    assert stored_ids(client, INDEX) == {f"d{k}" for k in range(DOCS)}
    client.close()

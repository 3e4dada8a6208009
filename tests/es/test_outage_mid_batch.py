"""Elasticsearch going away in the middle of a batch, between two bulk chunks, on a node of the test's own that it
stops: the documents sent before stay written and are answered as written, those not sent are answered as refused,
and an all-or-nothing batch that cannot be undone says which documents may stay written."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from neardup import node as esnode
from neardup.config import default_home
from neardup.errors import BatchNotUndone
from neardup.es.client import setup_index
from neardup.es.documents import Incoming
from neardup.es.indexing import IngestConfig, index_batch
from neardup.evaluation.corpus import load_peoples_daily
from neardup.ingest.fingerprint import Fingerprinter
from tests.ports import free_node_port

pytestmark = pytest.mark.skipif(bool(os.environ.get("ES_URL")), reason="needs an embedded node it may stop and restart")

CHUNK = 5
DOCS = 12
INDEX = "midbatch"


class Node:
    """An embedded node of this test's own, on a data directory it may stop and start again."""

    def __init__(self) -> None:
        self.home = Path(os.environ.get("NEARDUP_HOME") or default_home())
        self.data = Path(tempfile.mkdtemp(prefix="neardup-midbatch-"))
        self.port = free_node_port()

    def start(self) -> Elasticsearch:
        info, _ = esnode.start(self.home, self.data, port=self.port, heap="512m")
        return Elasticsearch(info.url, request_timeout=10, max_retries=1)

    def stop(self) -> None:
        if esnode.running_node(self.data) is not None:
            esnode.stop(self.data)


@pytest.fixture
def node() -> Iterator[Node]:
    n = Node()
    yield n
    n.stop()
    shutil.rmtree(n.data, ignore_errors=True)


def _docs() -> list[Incoming]:
    texts = [a.text for a in load_peoples_daily()[:DOCS]]
    assert len(set(texts)) == DOCS  # distinct articles: each its own cluster, none names another
    return [Incoming(f"d{k}", t) for k, t in enumerate(texts)]


def _stop_after_first_chunk(node: Node) -> Callable[[int], None]:
    seen: list[int] = []

    def progress(n: int) -> None:
        seen.append(n)
        if len(seen) == CHUNK:  # the first chunk's items are all answered: the next chunk meets no node
            node.stop()

    return progress


def _stored(client: Elasticsearch) -> set[str]:
    client.indices.refresh(index=INDEX)
    return {h["_id"] for h in client.search(index=INDEX, size=100)["hits"]["hits"]}


def test_a_partial_batch_answers_what_was_written_and_refuses_what_was_not_sent(node: Node) -> None:
    client = node.start()
    setup_index(client, INDEX)
    docs = _docs()
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
    client = node.start()
    assert _stored(client) == {f"d{k}" for k in range(CHUNK)}
    client.close()


def test_an_all_or_nothing_batch_that_cannot_be_undone_names_what_may_stay_written(node: Node) -> None:
    client = node.start()
    setup_index(client, INDEX)
    with pytest.raises(BatchNotUndone) as raised:
        index_batch(
            client,
            INDEX,
            _docs(),
            Fingerprinter.default(),
            IngestConfig(chunk_size=CHUNK, atomic=True),
            on_progress=_stop_after_first_chunk(node),
        )
    client.close()
    assert raised.value.written == [f"d{k}" for k in range(CHUNK)]
    assert "send the batch again" in str(raised.value)
    # what it names is exactly what Elasticsearch kept; the batch, sent again, is written whole
    client = node.start()
    assert _stored(client) == set(raised.value.written)
    again = index_batch(client, INDEX, _docs(), Fingerprinter.default(), IngestConfig(chunk_size=CHUNK, atomic=True))
    assert [r.status for r in again] == ["updated"] * CHUNK + ["created"] * (DOCS - CHUNK)
    assert _stored(client) == {f"d{k}" for k in range(DOCS)}
    client.close()

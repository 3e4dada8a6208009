"""``NEARDUP_FLAG_IN_ES``: the service writes posted texts through the cluster's ``neardup-flag`` pipeline, so
Elasticsearch fingerprints and assigns them, and answers with the assignment it reads back. The answers and the
stored fields are those of the Python service; a refused document is handled as the Python service handles it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from neardup.config import Settings
from neardup.errors import ClusterFingerprintFailed
from neardup.es.client import setup_index
from neardup.es.indexing import IngestConfig, index_batch_in_pipeline
from neardup.es.pipeline import FLAG_PIPELINE_ID, install_pipeline, pipeline_id
from neardup.evaluation.sets import Doc
from neardup.incoming.documents import Incoming
from neardup.ingest.fingerprint import FingerprintConfig, Fingerprinter
from neardup.mappings import schema
from neardup.service import create_app
from tests.service.in_es_helpers import ndjson, news_docs, post, stored

pytestmark = pytest.mark.es

#: each test writes to indices of its own: a node's window remembers what it assigned by index name for a few
#: seconds, so an index deleted and created again at once would meet the documents of the test before
_USED = iter(range(1_000))


@pytest.fixture(scope="module")
def docs(es: Elasticsearch) -> list[Doc]:
    return news_docs(es, seed=11)


@pytest.fixture
def indices(es: Elasticsearch) -> Iterator[tuple[str, str]]:
    k = next(_USED)
    names = (f"test-flag-python-{k}", f"test-flag-in-es-{k}")
    for n in names:
        es.indices.delete(index=n, ignore_unavailable=True)
    yield names
    for n in names:
        es.indices.delete(index=n, ignore_unavailable=True)


@pytest.mark.parametrize(("batch", "refresh"), [(40, "true"), (25, "false")])
def test_answers_and_stored_fields_are_the_python_services(
    es_url: str, es: Elasticsearch, docs: list[Doc], indices: tuple[str, str], batch: int, refresh: str
) -> None:
    python_api = create_app({"es_url": es_url}).test_client()
    es_api = create_app({"es_url": es_url, "flag_in_es": True}).test_client()
    plain, in_es = indices
    a, b = post(python_api, plain, docs, batch, refresh), post(es_api, in_es, docs, batch, refresh)
    print(f"compared {len(a)} items of documents posts in batches of {batch}, refresh={refresh}")
    assert sum(1 for i in a if i["duplicate_of"]) >= 15
    assert a == b
    assert stored(es, plain) == stored(es, in_es)
    assert es.ingest.get_pipeline(id=FLAG_PIPELINE_ID)[FLAG_PIPELINE_ID]["_meta"]["managed_by"] == "neardup"


@pytest.mark.parametrize("refresh", ["true", "false"])
def test_a_batch_sent_again_is_answered_as_the_python_service_answers_it(
    es_url: str, es: Elasticsearch, docs: list[Doc], indices: tuple[str, str], refresh: str
) -> None:
    python_api = create_app({"es_url": es_url}).test_client()
    es_api = create_app({"es_url": es_url, "flag_in_es": True}).test_client()
    plain, in_es = indices
    first, again = docs[:30], [*docs[20:30], *docs[30:50]]  # ten stored already, twenty new
    answers = []
    for api, index in ((python_api, plain), (es_api, in_es)):
        post(api, index, first, 30, refresh)
        answers.append(post(api, index, again, 30, refresh))
    a, b = answers
    assert a == b
    assert any(i["duplicate_of"] for i in a)
    assert stored(es, plain) == stored(es, in_es)


def test_a_pipeline_deleted_after_first_use_is_put_back(
    es_url: str, es: Elasticsearch, docs: list[Doc], indices: tuple[str, str]
) -> None:
    api = create_app({"es_url": es_url, "flag_in_es": True}).test_client()
    index = indices[1]
    post(api, index, docs[:10], 10, "true")
    es.ingest.delete_pipeline(id=FLAG_PIPELINE_ID)
    items = post(api, index, docs[10:20], 10, "true")
    assert [i["status"] for i in items] == ["created"] * 10
    assert FLAG_PIPELINE_ID in es.ingest.get_pipeline(id=FLAG_PIPELINE_ID)
    assert all(v[schema.CLUSTER] for v in stored(es, index).values())


def test_a_service_with_other_settings_flags_through_a_pipeline_of_its_own(
    es_url: str, es: Elasticsearch, docs: list[Doc], indices: tuple[str, str]
) -> None:
    install_pipeline(es, flag=True)
    default = es.ingest.get_pipeline(id=FLAG_PIPELINE_ID)[FLAG_PIPELINE_ID]
    own = pipeline_id(True, Settings(max_candidates=50))
    es.options(ignore_status=404).ingest.delete_pipeline(id=own)
    api = create_app({"es_url": es_url, "flag_in_es": True, "max_candidates": 50}).test_client()
    items = post(api, indices[1], docs[:20], 20, "true")
    assert [i["status"] for i in items] == ["created"] * 20
    assert own != FLAG_PIPELINE_ID
    assert es.ingest.get_pipeline(id=own)[own]["processors"][0]["neardup"]["max_candidates"] == 50
    assert es.ingest.get_pipeline(id=FLAG_PIPELINE_ID)[FLAG_PIPELINE_ID] == default  # the other writers' is untouched
    stats = es.nodes.stats(metric="ingest", filter_path=[f"nodes.*.ingest.pipelines.{own}.count"])
    assert sum(n["ingest"]["pipelines"][own]["count"] for n in stats["nodes"].values()) == 20


def test_a_plugin_fingerprinting_another_version_since_the_first_use_undoes_the_batch(
    es: Elasticsearch, docs: list[Doc], indices: tuple[str, str]
) -> None:
    install_pipeline(es, flag=True)
    index = indices[1]
    setup_index(es, index)
    default = Fingerprinter.default()
    other = Fingerprinter(FingerprintConfig(seeds=8), default.idf, default.segmenter)
    batch = [Incoming(d.id, d.text, d.title, {}) for d in docs[:5]]
    with pytest.raises(ClusterFingerprintFailed, match=other.version):
        index_batch_in_pipeline(
            es,
            index,
            batch,
            FLAG_PIPELINE_ID,
            other,
            IngestConfig(),
            lambda d: other.fingerprint_many([(x.text or "", x.title) for x in d]),
        )
    es.indices.refresh(index=index)
    assert es.count(index=index)["count"] == 0


def _refusing_batch(docs: list[Doc]) -> tuple[list[dict[str, Any]], str, str]:
    """An original, its reprint later in the same batch, and the original refused by the mapping (``n`` is a
    number in the first document): (batch, refused id, reprint id)."""
    original = docs[0]
    reprint = next(d for d in docs[1:] if d.group == original.group)
    others = [d for d in docs[1:12] if d.group != original.group]
    batch = [{"id": others[0].id, "text": others[0].text, "n": 1}]
    batch.append({"id": original.id, "title": original.title, "text": original.text, "n": "not a number"})
    batch += [{"id": d.id, "text": d.text} for d in others[1:]]
    batch.append({"id": reprint.id, "title": reprint.title, "text": reprint.text})
    return batch, original.id, reprint.id


def test_a_refused_document_undoes_the_batch(
    es_url: str, es: Elasticsearch, docs: list[Doc], indices: tuple[str, str]
) -> None:
    api = create_app({"es_url": es_url, "flag_in_es": True}).test_client()
    index = indices[1]
    batch, refused, _ = _refusing_batch(docs)
    resp = api.post(
        f"/v1/indices/{index}/documents?refresh=true", data=ndjson(batch), content_type="application/x-ndjson"
    )
    assert resp.status_code == 400, resp.json
    assert resp.json["error"]["type"] == "batch_refused"
    assert [i["id"] for i in resp.json["error"]["detail"]["items"]] == [refused]
    es.indices.refresh(index=index)
    assert es.count(index=index)["count"] == 0


@pytest.mark.parametrize("refresh", ["true", "false"])
def test_a_partial_batch_keeps_the_others_and_none_names_the_refused(
    es_url: str, es: Elasticsearch, docs: list[Doc], indices: tuple[str, str], refresh: str
) -> None:
    answers = []
    for settings, index in (({}, indices[0]), ({"flag_in_es": True}, indices[1])):
        api = create_app({"es_url": es_url, **settings}).test_client()
        earlier = [d for d in docs[40:80] if d.group != docs[0].group][:20]  # unrefreshed with refresh=false
        post(api, index, earlier, 20, refresh)
        batch, refused, reprint = _refusing_batch(docs)
        resp = api.post(
            f"/v1/indices/{index}/documents?refresh={refresh}&partial=true",
            data=ndjson(batch),
            content_type="application/x-ndjson",
        )
        assert resp.status_code == 200, resp.json
        answers.append([_without_position(i) for i in resp.json["items"]])
    assert answers[0] == answers[1]
    items = {i["id"]: i for i in answers[1]}
    assert items[refused]["status"] == "error" and "not a number" in items[refused]["error"]
    assert all(i["status"] == "created" for k, i in items.items() if k != refused)
    assert all(refused not in (i["cluster"], i["duplicate_of"]) for i in items.values())
    assert items[reprint]["cluster"] == reprint  # its original is not in the index: it starts its own cluster
    kept = {k: v for k, v in stored(es, indices[1]).items() if k in items}
    assert refused not in kept and len(kept) == len(batch) - 1
    assert stored(es, indices[0]) == stored(es, indices[1])
    assert {k: (v[schema.CLUSTER], v[schema.DUPLICATE_OF]) for k, v in kept.items()} == {
        k: (i["cluster"], i["duplicate_of"]) for k, i in items.items() if k != refused
    }


def _without_position(item: dict[str, Any]) -> dict[str, Any]:
    """An item with Elasticsearch's parse position ("[1:6] failed to parse …") left out of its error: the two
    paths send the same fields in another order."""
    if "error" not in item:
        return item
    return item | {"error": re.sub(r"^\[\d+:\d+\] ", "", item["error"])}


@pytest.mark.parametrize("setting", ["fingerprint_in_es", "flag_in_es"])
def test_a_cluster_fingerprinting_another_version_is_a_clear_502_and_writes_nothing(
    es_url: str, es: Elasticsearch, docs: list[Doc], indices: tuple[str, str], setting: str
) -> None:
    """Either setting: a plugin built from other tables than this process's is refused before anything is written."""
    app = create_app({"es_url": es_url, setting: True})
    state = app.extensions["neardup"]
    state.fingerprinter = Fingerprinter(
        FingerprintConfig(seeds=8), state.fingerprinter.idf, state.fingerprinter.segmenter
    )
    resp = app.test_client().post(f"/v1/indices/{indices[1]}/documents", json={"id": "x", "text": docs[0].text})
    assert resp.status_code == 502
    assert resp.json["error"]["type"] == "fingerprint_in_es_failed"
    assert state.fingerprinter.version in resp.json["error"]["message"]
    assert not es.indices.exists(index=indices[1]) or es.count(index=indices[1])["count"] == 0

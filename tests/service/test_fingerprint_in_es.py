"""``NEARDUP_FINGERPRINT_IN_ES``: the cluster's ingest processor fingerprints posted texts instead of Python,
and every answer is the same: the items of a documents post, the fields stored, a posted-text lookup."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from elasticsearch import Elasticsearch, helpers
from flask.testing import FlaskClient

from neardup.es.pipeline import nodes_without_processor
from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.sets import Doc, news_set
from neardup.ingest.fingerprint import FingerprintConfig, Fingerprinter
from neardup.mappings import schema
from neardup.service import create_app

pytestmark = pytest.mark.es


@pytest.fixture(scope="module")
def docs(es: Elasticsearch) -> list[Doc]:
    if nodes_without_processor(es):
        pytest.skip("this cluster has no neardup plugin")
    shuffled = news_set(load_peoples_daily(), seed=5, groups=15, singles=30)
    return [Doc(f"d{k:03d}", d.title, d.text, d.group) for k, d in enumerate(shuffled)]


@pytest.fixture
def two_indices(es: Elasticsearch) -> Iterator[tuple[str, str]]:
    names = ("test-fp-python", "test-fp-in-es")
    for n in names:
        es.indices.delete(index=n, ignore_unavailable=True)
    yield names
    for n in names:
        es.indices.delete(index=n, ignore_unavailable=True)


def _post(api: FlaskClient, index: str, docs: list[Doc]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for k in range(0, len(docs), 40):
        body = "\n".join(
            json.dumps({"id": d.id, "title": d.title, "text": d.text}, ensure_ascii=False) for d in docs[k : k + 40]
        )
        resp = api.post(f"/v1/indices/{index}/documents?refresh=true", data=body, content_type="application/x-ndjson")
        assert resp.status_code == 200, resp.json
        items += resp.json["items"]
    return items


def _stored(es: Elasticsearch, index: str) -> dict[str, dict[str, Any]]:
    es.indices.refresh(index=index)
    hits = es.search(index=index, size=1000, query={"match_all": {}})["hits"]["hits"]
    out = {}
    for h in hits:
        nd = dict(h["_source"][schema.ROOT])
        nd.pop(schema.INDEXED_AT)
        out[h["_id"]] = nd
    return out


def test_answers_are_the_same_with_fingerprints_from_elasticsearch(
    es_url: str, es: Elasticsearch, docs: list[Doc], two_indices: tuple[str, str]
) -> None:
    python_api = create_app({"es_url": es_url}).test_client()
    es_api = create_app({"es_url": es_url, "fingerprint_in_es": True}).test_client()
    plain, in_es = two_indices
    a, b = _post(python_api, plain, docs), _post(es_api, in_es, docs)
    print(f"compared {len(a)} items of documents posts")
    assert a == b and any(i["duplicate_of"] for i in a)
    assert _stored(es, plain) == _stored(es, in_es)
    for d in docs[:10]:
        body = {"title": d.title, "text": d.text}
        one = python_api.post(f"/v1/indices/{plain}/duplicates", json=body).json
        two = es_api.post(f"/v1/indices/{plain}/duplicates", json=body).json
        one.pop("took_ms", None), two.pop("took_ms", None)
        assert one == two and one["items"]


def test_a_dedupe_job_fingerprints_in_elasticsearch_with_the_setting(
    es_url: str,
    es: Elasticsearch,
    docs: list[Doc],
    two_indices: tuple[str, str],
    wait_for_job: Callable[..., dict[str, Any]],
) -> None:
    for index in two_indices:  # filled without neardup
        helpers.bulk(es, ({"_index": index, "_id": d.id, "title": d.title, "text": d.text} for d in docs), refresh=True)
    results = []
    for index, app in zip(
        two_indices,
        (create_app({"es_url": es_url}), create_app({"es_url": es_url, "fingerprint_in_es": True})),
        strict=True,
    ):
        api = app.test_client()
        job = api.post(f"/v1/indices/{index}/dedupe", json={})
        assert job.status_code == 202, job.json
        done = wait_for_job(api, job.json["id"])
        assert done["state"] == "done", done
        results.append(done["result"])
    assert [r["fingerprinted_by"] for r in results] == ["python", "elasticsearch"]
    assert results[0]["fingerprinted"] == results[1]["fingerprinted"] == len(docs)
    assert _stored(es, two_indices[0]) == _stored(es, two_indices[1])


def test_a_cluster_fingerprinting_another_version_is_a_clear_502(
    es_url: str, es: Elasticsearch, docs: list[Doc], two_indices: tuple[str, str]
) -> None:
    app = create_app({"es_url": es_url, "fingerprint_in_es": True})
    state = app.extensions["neardup"]
    state.fingerprinter = Fingerprinter(
        FingerprintConfig(seeds=8), state.fingerprinter.idf, state.fingerprinter.segmenter
    )
    resp = app.test_client().post(f"/v1/indices/{two_indices[1]}/documents", json={"id": "x", "text": docs[0].text})
    assert resp.status_code == 502
    assert resp.json["error"]["type"] == "fingerprint_in_es_failed"
    assert state.fingerprinter.version in resp.json["error"]["message"]
    assert not es.indices.exists(index=two_indices[1]) or es.count(index=two_indices[1])["count"] == 0

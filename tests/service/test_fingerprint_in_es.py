"""``NEARDUP_FINGERPRINT_IN_ES``: the cluster's ingest processor fingerprints posted texts instead of Python,
and every answer is the same: the items of a documents post, the fields stored, a posted-text lookup."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from elasticsearch import Elasticsearch, helpers

from neardup.evaluation.sets import Doc
from neardup.service import create_app
from tests.service.in_es_helpers import news_docs, post, stored

pytestmark = pytest.mark.es


@pytest.fixture(scope="module")
def docs(es: Elasticsearch) -> list[Doc]:
    return news_docs(es, seed=5)


@pytest.fixture
def two_indices(es: Elasticsearch) -> Iterator[tuple[str, str]]:
    names = ("test-fp-python", "test-fp-in-es")
    for n in names:
        es.indices.delete(index=n, ignore_unavailable=True)
    yield names
    for n in names:
        es.indices.delete(index=n, ignore_unavailable=True)


def test_answers_are_the_same_with_fingerprints_from_elasticsearch(
    es_url: str, es: Elasticsearch, docs: list[Doc], two_indices: tuple[str, str]
) -> None:
    python_api = create_app({"es_url": es_url}).test_client()
    es_api = create_app({"es_url": es_url, "fingerprint_in_es": True}).test_client()
    plain, in_es = two_indices
    a, b = post(python_api, plain, docs), post(es_api, in_es, docs)
    print(f"compared {len(a)} items of documents posts")
    assert a == b and any(i["duplicate_of"] for i in a)
    assert stored(es, plain) == stored(es, in_es)
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
    assert stored(es, two_indices[0]) == stored(es, two_indices[1])

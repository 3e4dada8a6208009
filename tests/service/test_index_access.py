"""Which indices the service touches, against the real Elasticsearch: never its internal ones
(``neardup-jobs``, ``neardup-imports``, dot-indices), only those ``NEARDUP_INDEX_PATTERNS`` allows, reads
only of indices with the neardup mapping, reads behind the key with ``NEARDUP_PROTECT_READS``, and a
job record neardup did not write answered with a clear error."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from neardup.service import create_app

pytestmark = pytest.mark.es

TEXT = "国务院今天召开常务会议，部署进一步推动经济稳定增长的措施，会议指出要扩大内需。"
JOBS = "neardup-jobs"
INTERNAL = [JOBS, "neardup-imports"]


@pytest.fixture(scope="module")
def api(es_url: str) -> FlaskClient:
    return create_app({"es_url": es_url}).test_client()


def _error(resp: Any, status: int) -> dict[str, Any]:
    assert resp.status_code == status, (resp.status_code, resp.get_data(as_text=True)[:300])
    body: dict[str, Any] = resp.json["error"]
    assert body["type"] and body["message"]
    return body


@pytest.fixture(scope="module")
def done_job(
    api: FlaskClient, es: Elasticsearch, wait_for_job: Callable[..., dict[str, Any]]
) -> Iterator[dict[str, Any]]:
    """A finished dedupe job (so ``neardup-jobs`` exists and holds a real record)."""
    index = f"test-access-{uuid.uuid4().hex[:8]}"
    assert api.post(f"/v1/indices/{index}/documents", json={"id": "a", "text": TEXT}).status_code == 200
    job = wait_for_job(api, api.post(f"/v1/indices/{index}/dedupe", json={}).json["id"])
    assert job["state"] == "done", job
    yield job
    es.indices.delete(index=index, ignore_unavailable=True)
    es.options(ignore_status=404).indices.delete_index_template(name=f"neardup-{index}")


def _every_request(index: str) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        ("post", f"/v1/indices/{index}/documents", {"json": {"id": "x", "text": TEXT}}),
        ("put", f"/v1/indices/{index}", {}),
        ("post", f"/v1/indices/{index}/dedupe", {"json": {}}),
        ("post", f"/v1/indices/{index}/reconcile", {}),
        ("get", f"/v1/indices/{index}/search", {}),
        ("get", f"/v1/indices/{index}/clusters", {}),
        ("get", f"/v1/indices/{index}/clusters/x", {}),
        ("get", f"/v1/indices/{index}/documents/x/duplicates", {}),
        ("post", f"/v1/indices/{index}/duplicates", {"json": {"text": TEXT}}),
        ("get", f"/?index={index}", {}),
        ("get", f"/clusters?index={index}", {}),
        ("get", f"/overview?index={index}", {}),
    ]


def test_internal_indices_are_refused_by_every_endpoint(
    api: FlaskClient, es: Elasticsearch, done_job: dict[str, Any]
) -> None:
    job_id = done_job["id"]
    # the case: a document posted to neardup-jobs under a job's id overwrote the job record
    overwrite = api.post(f"/v1/indices/{JOBS}/documents", json={"id": job_id, "text": TEXT, "state": "failed"})
    assert _error(overwrite, 403)["type"] == "internal_index"
    assert api.get(f"/v1/jobs/{job_id}").json["state"] == "done"
    for index in INTERNAL:
        for method, url, kwargs in _every_request(index):
            body = _error(getattr(api, method)(url, **kwargs), 403)
            assert body["type"] == "internal_index", (url, body)
            assert index in body["message"]
    # search did list job ids; now nothing of neardup-jobs is read through the API
    assert job_id not in api.get(f"/v1/indices/{JOBS}/search?size=100").get_data(as_text=True)
    assert es.get(index=JOBS, id=job_id)["_source"]["state"] == "done"


def test_an_alias_does_not_lead_to_an_internal_index(api: FlaskClient, es: Elasticsearch, index_name: str) -> None:
    alias = f"{index_name}-jobs"
    es.indices.put_alias(index=JOBS, name=alias)
    try:
        before = es.count(index=JOBS)["count"]
        assert _error(api.get(f"/v1/indices/{alias}/search"), 403)["type"] == "internal_index"
        _error(api.post(f"/v1/indices/{alias}/documents", json={"id": "y", "text": TEXT}), 403)
        _error(api.post(f"/v1/indices/{alias}/dedupe", json={}), 403)
        es.indices.refresh(index=JOBS)
        assert es.count(index=JOBS)["count"] == before
    finally:
        es.indices.delete_alias(index=JOBS, name=alias)


def test_a_malformed_job_record_gives_a_clear_error(
    api: FlaskClient, es: Elasticsearch, done_job: dict[str, Any]
) -> None:
    bad = uuid.uuid4().hex
    es.index(index=JOBS, id=bad, document={"state": "running", "heartbeat_at": "yesterday", "progress": "half"})
    try:
        body = _error(api.get(f"/v1/jobs/{bad}"), 502)
        assert body["type"] == "invalid_job_record" and bad in body["message"]
        # an id neardup never gives out is simply not a job
        assert _error(api.get("/v1/jobs/not-a-job-id"), 404)["type"] == "job_not_found"
    finally:
        es.delete(index=JOBS, id=bad, refresh=True)


def test_reads_refuse_an_index_without_the_neardup_mapping(
    api: FlaskClient, es: Elasticsearch, index_name: str, wait_for_job: Callable[..., dict[str, Any]]
) -> None:
    """The issue's hr-salaries: created directly in Elasticsearch, read through every endpoint."""
    es.indices.create(index=index_name)
    es.index(index=index_name, id="1", document={"name": "Wang", "salary": 91000, "text": TEXT}, refresh=True)
    for method, url, kwargs in _every_request(index_name):
        if method == "get" or url.endswith("/duplicates"):
            resp = getattr(api, method)(url, **kwargs)
            body = _error(resp, 404)
            assert body["type"] == "not_a_neardup_index", (url, body)
            assert "Wang" not in resp.get_data(as_text=True) and "91000" not in resp.get_data(as_text=True)
    # a write prepares it (dedupe is how a user's own index becomes a neardup index); then it reads
    job = wait_for_job(api, api.post(f"/v1/indices/{index_name}/dedupe", json={}).json["id"])
    assert job["state"] == "done", job
    assert api.get(f"/v1/indices/{index_name}/search").json["total"] == 1


def test_reads_refuse_an_index_whose_neardup_fields_have_other_types(
    api: FlaskClient, es: Elasticsearch, index_name: str
) -> None:
    es.index(index=index_name, id="1", document={"text": TEXT, "neardup": {"b0": "x", "version": "v"}}, refresh=True)
    body = _error(api.get(f"/v1/indices/{index_name}/search"), 404)
    assert body["type"] == "not_a_neardup_index" and "neardup.b0" in body["message"]
    # nor is it written to: no set-up can change those types, so the write is refused before anything is written
    refused = _error(api.post(f"/v1/indices/{index_name}/documents", json={"id": "2", "text": TEXT}), 409)
    assert refused["type"] == "not_a_neardup_index" and "neardup.b0" in refused["message"]
    assert es.count(index=index_name)["count"] == 1


def test_index_patterns_limit_the_indices_the_service_touches(es_url: str, es: Elasticsearch, index_name: str) -> None:
    allowed = f"allowed-{uuid.uuid4().hex[:8]}"
    api = create_app({"es_url": es_url, "index_patterns": "allowed-*, other"}).test_client()
    try:
        for method, url, kwargs in _every_request(index_name):
            body = _error(getattr(api, method)(url, **kwargs), 403)
            assert body["type"] == "index_not_allowed" and "NEARDUP_INDEX_PATTERNS" in body["message"], url
        assert not es.indices.exists(index=index_name)
        assert api.put(f"/v1/indices/{allowed}").status_code == 200
        assert api.get(f"/v1/indices/{allowed}/search").status_code == 200
        # an allowed name that is an alias of an index outside the patterns reads nothing of it
        es.indices.create(index=index_name)
        es.indices.put_alias(index=index_name, name=f"{allowed}-alias")
        assert _error(api.get(f"/v1/indices/{allowed}-alias/search"), 403)["type"] == "index_not_allowed"
    finally:
        es.indices.delete(index=allowed, ignore_unavailable=True)
        es.options(ignore_status=404).indices.delete_index_template(name=f"neardup-{allowed}")


def test_protect_reads_puts_every_read_behind_the_key(es_url: str, es: Elasticsearch, index_name: str) -> None:
    api = create_app({"es_url": es_url, "api_key": "s3cret", "protect_reads": True}).test_client()
    key = {"X-API-Key": "s3cret"}
    assert api.put(f"/v1/indices/{index_name}", headers=key).status_code == 200
    assert (
        api.post(f"/v1/indices/{index_name}/documents", json={"id": "a", "text": TEXT}, headers=key).status_code == 200
    )
    reads = [(m, u, k) for m, u, k in _every_request(index_name) if m == "get" or u.endswith("/duplicates")]
    reads.append(("get", "/v1/jobs/0123456789abcdef0123456789abcdef", {}))
    for method, url, kwargs in reads:
        body = _error(getattr(api, method)(url, **kwargs), 401)
        assert body["type"] == "unauthorized", url
        with_key = getattr(api, method)(url, headers=key, **kwargs)
        assert with_key.status_code in (200, 404), (url, with_key.get_data(as_text=True)[:200])
        if with_key.status_code == 404:
            assert with_key.json["error"]["type"] in ("cluster_not_found", "document_not_found", "job_not_found")
    assert api.get("/healthz").status_code == 200  # the health check stays open
    # without the setting, reads stay open as before
    open_api = create_app({"es_url": es_url, "api_key": "s3cret"}).test_client()
    assert open_api.get(f"/v1/indices/{index_name}/search").status_code == 200


def test_settings_read_the_new_variables() -> None:
    from neardup.config import Settings
    from neardup.es.client import INTERNAL_INDICES
    from neardup.es.jobs import JOBS_INDEX
    from neardup.integrations.sql_import import STATE_INDEX

    s = Settings.from_env({"NEARDUP_INDEX_PATTERNS": "news-*,hr", "NEARDUP_PROTECT_READS": "true"})
    assert s.index_patterns == "news-*,hr" and s.protect_reads is True
    assert Settings().index_patterns == "*" and Settings().protect_reads is False
    assert {JOBS_INDEX, STATE_INDEX} <= INTERNAL_INDICES

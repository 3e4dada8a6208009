"""The service's internal indices (``neardup-jobs``, ``neardup-imports``, dot-indices) are unreachable through
every endpoint, also by an alias, and a job record neardup did not write is answered with a clear 502."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from tests.indices import remove_indices
from tests.service.access_helpers import TEXT, error_of, every_request

pytestmark = pytest.mark.es

JOBS = "neardup-jobs"
INTERNAL = [JOBS, "neardup-imports"]


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
    remove_indices(es, index)


def test_internal_indices_are_refused_by_every_endpoint(
    api: FlaskClient, es: Elasticsearch, done_job: dict[str, Any]
) -> None:
    job_id = done_job["id"]
    # the case: a document posted to neardup-jobs under a job's id overwrote the job record
    overwrite = api.post(f"/v1/indices/{JOBS}/documents", json={"id": job_id, "text": TEXT, "state": "failed"})
    assert error_of(overwrite, 403)["type"] == "internal_index"
    assert api.get(f"/v1/jobs/{job_id}").json["state"] == "done"
    for index in INTERNAL:
        for method, url, kwargs in every_request(index):
            body = error_of(getattr(api, method)(url, **kwargs), 403)
            assert body["type"] == "internal_index", (url, body)
            assert index in body["message"]
    # search did list job ids; now nothing of neardup-jobs is read through the API
    assert job_id not in api.get(f"/v1/indices/{JOBS}/search?size=100").get_data(as_text=True)
    assert es.get(index=JOBS, id=job_id)["_source"]["state"] == "done"


def _ids(es: Elasticsearch) -> set[str]:
    return {h["_id"] for h in es.search(index=JOBS, size=10_000, source=False)["hits"]["hits"]}


def test_an_alias_does_not_lead_to_an_internal_index(api: FlaskClient, es: Elasticsearch, index_name: str) -> None:
    alias = f"{index_name}-jobs"
    es.indices.put_alias(index=JOBS, name=alias)
    try:
        es.indices.refresh(index=JOBS)
        before = _ids(es)
        assert error_of(api.get(f"/v1/indices/{alias}/search"), 403)["type"] == "internal_index"
        error_of(api.post(f"/v1/indices/{alias}/documents", json={"id": "y", "text": TEXT}), 403)
        error_of(api.post(f"/v1/indices/{alias}/dedupe", json={}), 403)
        es.indices.refresh(index=JOBS)
        assert _ids(es) <= before  # nothing written (a finished job's lock may have gone meanwhile)
    finally:
        es.indices.delete_alias(index=JOBS, name=alias)


def test_a_malformed_job_record_gives_a_clear_error(
    api: FlaskClient, es: Elasticsearch, done_job: dict[str, Any]
) -> None:
    bad = uuid.uuid4().hex
    es.index(index=JOBS, id=bad, document={"state": "running", "heartbeat_at": "yesterday", "progress": "half"})
    try:
        body = error_of(api.get(f"/v1/jobs/{bad}"), 502)
        assert body["type"] == "invalid_job_record" and bad in body["message"]
        # an id neardup never gives out is simply not a job
        assert error_of(api.get("/v1/jobs/not-a-job-id"), 404)["type"] == "job_not_found"
    finally:
        es.delete(index=JOBS, id=bad, refresh=True)

"""State that must not go stale or ignore its settings, against the real Elasticsearch: index set-up is
checked on every write (not remembered), a batch dedupe's fingerprint version names the fields it read,
and one job runs per index and kind, across service workers (the lock lives in Elasticsearch)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from elasticsearch import ConflictError, Elasticsearch, helpers
from flask.testing import FlaskClient

from neardup import mappings
from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.sets import Doc, news_set
from neardup.ingest.cluster import cluster_records
from neardup.ingest.fingerprint import Fingerprinter
from neardup.ingest.verify import VerifyConfig
from neardup.service import create_app
from tests.service.access_helpers import error_of

pytestmark = pytest.mark.es

TEXT = "国务院今天召开常务会议，部署进一步推动经济稳定增长的措施，会议指出要扩大内需。"
JOBS = "neardup-jobs"


@pytest.fixture(scope="module")
def api(es_url: str) -> FlaskClient:
    return create_app({"es_url": es_url}).test_client()


def _neardup_types(es: Elasticsearch, index: str) -> dict[str, str]:
    props = es.indices.get_mapping(index=index)[index]["mappings"]["properties"]["neardup"]["properties"]
    return {k: v.get("type", "object") for k, v in props.items()}


# --- (a) index set-up is checked per write, not remembered ---------------------------------------


def test_a_write_after_the_index_was_deleted_sets_it_up_again(
    api: FlaskClient, es: Elasticsearch, index_name: str
) -> None:
    assert api.post(f"/v1/indices/{index_name}/documents", json={"id": "a", "text": TEXT}).status_code == 200
    # someone deletes the index and its template behind the service's back
    es.indices.delete(index=index_name)
    es.indices.delete_index_template(name=mappings.index_template_name(index_name))
    resp = api.post(f"/v1/indices/{index_name}/documents", json={"id": "b", "text": TEXT})
    assert resp.status_code == 200, resp.json
    expected = {k: v["type"] for k, v in mappings.neardup_fields().items()}
    assert _neardup_types(es, index_name) == expected  # not an auto-created index with guessed types
    assert es.indices.exists_index_template(name=mappings.index_template_name(index_name))
    again = api.post(f"/v1/indices/{index_name}/documents?refresh=true", json={"id": "c", "text": TEXT}).json
    assert again["items"][0]["duplicate_of"] == "b"


# --- (b) the fields a batch dedupe read are part of its fingerprint version ----------------------


@pytest.fixture(scope="module")
def news() -> list[Doc]:
    return sorted(news_set(load_peoples_daily(), seed=3, groups=3, singles=6), key=lambda d: d.id)


def _partition(es: Elasticsearch, index: str) -> set[frozenset[str]]:
    es.indices.refresh(index=index)
    groups: dict[str, set[str]] = {}
    for h in helpers.scan(es, index=index, _source=["neardup.cluster"]):
        groups.setdefault(h["_source"]["neardup"]["cluster"], set()).add(h["_id"])
    return {frozenset(g) for g in groups.values()}


def _versions(es: Elasticsearch, index: str) -> set[str]:
    es.indices.refresh(index=index)
    resp = es.search(index=index, size=0, aggs={"v": {"terms": {"field": "neardup.version"}}})
    return {b["key"] for b in resp["aggregations"]["v"]["buckets"]}


def test_a_dedupe_with_the_wrong_text_field_is_redone_with_the_right_one(
    api: FlaskClient,
    es: Elasticsearch,
    index_name: str,
    news: list[Doc],
    fp: Fingerprinter,
    wait_for_job: Callable[..., dict[str, Any]],
) -> None:
    es.indices.create(index=index_name)
    helpers.bulk(es, ({"_index": index_name, "_id": d.id, "headline": d.title, "body": d.text} for d in news))
    es.indices.refresh(index=index_name)
    # the default field "text" is not there: the dedupe is refused before it starts, and changes nothing
    mapping = es.indices.get_mapping(index=index_name)[index_name]["mappings"]
    wrong = api.post(f"/v1/indices/{index_name}/dedupe", json={})
    assert wrong.status_code == 400 and wrong.json["error"]["type"] == "no_text_field", wrong.json
    assert "'text'" in wrong.json["error"]["message"] and "text_field" in wrong.json["error"]["message"]
    assert wrong.json["error"]["detail"] == {"index": index_name, "text_field": "text", "documents": len(news)}
    assert es.indices.get_mapping(index=index_name)[index_name]["mappings"] == mapping
    assert _versions(es, index_name) == set()
    right = wait_for_job(
        api,
        api.post(f"/v1/indices/{index_name}/dedupe", json={"text_field": "body", "title_field": "headline"}).json["id"],
    )
    assert right["state"] == "done", right
    assert right["result"]["fingerprinted"] == len(news)  # was 0: "already fingerprinted"
    offline = cluster_records([fp.fingerprint(d.text, d.title) for d in news], lambda r: r.fingerprints, VerifyConfig())
    expected: dict[int, set[str]] = {}
    for d, c in zip(news, offline.cluster.tolist(), strict=True):
        expected.setdefault(c, set()).add(d.id)
    assert _partition(es, index_name) == {frozenset(g) for g in expected.values()}
    (version,) = _versions(es, index_name)
    assert version.startswith(fp.version + "-") and version != fp.version
    # reconcile (no fields given) works on what the last dedupe fingerprinted, and changes nothing
    rec = wait_for_job(api, api.post(f"/v1/indices/{index_name}/reconcile").json["id"])
    assert rec["result"]["documents"] == len(news) and rec["result"]["changed"] == 0, rec
    # the same fields again: nothing to redo
    again = wait_for_job(
        api,
        api.post(f"/v1/indices/{index_name}/dedupe", json={"text_field": "body", "title_field": "headline"}).json["id"],
    )
    assert again["result"]["fingerprinted"] == 0 and again["result"]["changed"] == 0


def test_a_dedupe_with_the_default_fields_keeps_the_plain_version_that_lookups_use(
    api: FlaskClient,
    es: Elasticsearch,
    index_name: str,
    news: list[Doc],
    fp: Fingerprinter,
    wait_for_job: Callable[..., dict[str, Any]],
) -> None:
    es.indices.create(index=index_name)
    helpers.bulk(es, ({"_index": index_name, "_id": d.id, "title": d.title, "text": d.text} for d in news[:4]))
    es.indices.refresh(index=index_name)
    done = wait_for_job(api, api.post(f"/v1/indices/{index_name}/dedupe", json={}).json["id"])
    assert done["state"] == "done" and done["result"]["fingerprinted"] == 4
    assert _versions(es, index_name) == {fp.version}  # what ingest writes and posted lookups compare with
    found = api.post(f"/v1/indices/{index_name}/duplicates", json={"title": news[0].title, "text": news[0].text}).json
    assert news[0].id in [i["id"] for i in found["items"]]


# --- (c) one running job per index and kind, across workers --------------------------------------


def _blocking(release: threading.Event) -> Callable[[Any], dict[str, Any]]:
    def work(progress: Any) -> dict[str, Any]:
        release.wait(60)
        return {}

    return work


def _job_state(es: Elasticsearch, job_id: str) -> str:
    state: str = es.get(index=JOBS, id=job_id)["_source"]["state"]
    return state


def _until_finished(es: Elasticsearch, job_id: str) -> None:
    for _ in range(300):
        if _job_state(es, job_id) != "running":
            return
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} still running")


def test_a_second_job_of_a_kind_on_an_index_gets_409_with_the_running_ones_id(
    api: FlaskClient, es_url: str, es: Elasticsearch, index_name: str, wait_for_job: Callable[..., dict[str, Any]]
) -> None:
    from neardup.es.jobs import start_job

    assert api.put(f"/v1/indices/{index_name}").status_code == 200
    other_worker = Elasticsearch(es_url)  # another service worker: its own client, its own process state
    release = threading.Event()
    running = start_job(other_worker, "dedupe", index_name, _blocking(release))
    try:
        resp = api.post(f"/v1/indices/{index_name}/dedupe", json={})
        assert resp.status_code == 409, resp.json
        error = resp.json["error"]
        assert error["type"] == "job_running" and error["detail"]["job_id"] == running["id"]
        assert running["id"] in error["message"]
        # a reconcile writes the assignments too: it waits for the dedupe as well, told which job holds the index
        rec = error_of(api.post(f"/v1/indices/{index_name}/reconcile"), 409)
        assert rec["detail"] == {"job_id": running["id"], "kind": "dedupe", "index": index_name}, rec
    finally:
        release.set()
    _until_finished(es, running["id"])
    after = api.post(f"/v1/indices/{index_name}/dedupe", json={})  # released when the job ended
    assert after.status_code == 202, after.json
    assert wait_for_job(api, after.json["id"])["state"] == "done"
    # a job that fails releases its lock too
    failing = start_job(other_worker, "dedupe", index_name, lambda progress: {"x": 1 / 0})
    _until_finished(es, failing["id"])
    assert _job_state(es, failing["id"]) == "failed"
    last = api.post(f"/v1/indices/{index_name}/dedupe", json={})
    assert last.status_code == 202, last.json
    _until_finished(es, last.json["id"])
    other_worker.close()


def test_the_lock_of_a_worker_that_died_expires(
    api: FlaskClient, es_url: str, es: Elasticsearch, index_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from neardup.es import jobs

    assert api.put(f"/v1/indices/{index_name}").status_code == 200
    monkeypatch.setattr(jobs, "HEARTBEAT_SECONDS", 3600.0)  # the worker "dies": it never beats again
    monkeypatch.setattr(jobs, "LOST_AFTER_SECONDS", 1.0)
    release = threading.Event()
    dead = jobs.start_job(Elasticsearch(es_url), "dedupe", index_name, _blocking(release))
    try:
        held = api.post(f"/v1/indices/{index_name}/dedupe", json={})
        assert held.status_code == 409 and held.json["error"]["detail"]["job_id"] == dead["id"]
        time.sleep(1.5)
        taken = api.post(f"/v1/indices/{index_name}/dedupe", json={})
        assert taken.status_code == 202, taken.json
        _until_finished(es, taken.json["id"])
    finally:
        release.set()
    _until_finished(es, dead["id"])


def test_a_refused_progress_write_neither_fails_the_job_nor_loses_its_outcome(
    es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """Elasticsearch refusing the job record's updates (here a write block on its index; a 429 or a version
    conflict alike) loses a progress report, not the job: the outcome is written once writes are taken again."""
    from neardup.es.jobs import start_job

    def unblock() -> None:
        es.indices.put_settings(index=JOBS, settings={"index.blocks.write": None})

    def work(progress: Any) -> dict[str, Any]:
        es.indices.put_settings(index=JOBS, settings={"index.blocks.write": True})
        try:
            progress("blocked", 1, 1)  # refused with 403: reported in the log, the work goes on
        finally:
            # after the lock's release gives up (about 5.5 s): the outcome's own write then meets the block too
            threading.Timer(7.0, unblock).start()
        return {"went": "on"}

    client = Elasticsearch(es_url)
    try:
        job = start_job(client, "dedupe", index_name, work)
        _until_finished(es, job["id"])  # the outcome waits for the block to go, then is written
        stored = es.get(index=JOBS, id=job["id"])["_source"]
        assert stored["state"] == "done" and stored["result"] == {"went": "on"}, stored
    finally:
        unblock()
        client.close()


def test_a_job_whose_lock_was_taken_over_stops_at_its_next_step(
    es_url: str, es: Elasticsearch, index_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from neardup.es import jobs

    monkeypatch.setattr(jobs, "HEARTBEAT_SECONDS", 0.2)
    started = threading.Event()

    def work(progress: Any) -> dict[str, Any]:
        started.set()
        for step in range(200):  # ~20 s unless stopped
            progress("working", step, None)
            time.sleep(0.1)
        return {"finished": True}

    client = Elasticsearch(es_url)
    try:
        job = jobs.start_job(client, "dedupe", index_name, work)
        assert started.wait(10)
        # what another worker does once this job's beats were missed for LOST_AFTER_SECONDS: take the lock over
        lock = f"lock-assignments-{index_name}"
        for _ in range(20):  # the job renews the lock five times a second: take it between two renewals
            taken = es.get(index=JOBS, id=lock)
            try:
                es.index(
                    index=JOBS,
                    id=lock,
                    document={**taken["_source"], "job": "0" * 32},
                    if_seq_no=taken["_seq_no"],
                    if_primary_term=taken["_primary_term"],
                )
                break
            except ConflictError:
                continue
        _until_finished(es, job["id"])
        stored = es.get(index=JOBS, id=job["id"])["_source"]
        assert stored["state"] == "failed" and stored["error"]["type"] == "JobLockLost", stored
        assert es.get(index=JOBS, id=lock)["_source"]["job"] == "0" * 32  # the other job's lock stays
    finally:
        es.options(ignore_status=404).delete(index=JOBS, id=f"lock-assignments-{index_name}")
        client.close()

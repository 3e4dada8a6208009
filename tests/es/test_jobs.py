"""Jobs run by a command (:func:`neardup.es.jobs.run_job`): the lock the service's jobs take, released however the
work ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import UTC, datetime

import pytest
from elasticsearch import Elasticsearch

from neardup.es.client import JOBS_INDEX
from neardup.es.jobs import JobRunning, run_job
from tests.es.holding_proxy import holding_proxy

pytestmark = pytest.mark.es


def _recorded(es: Elasticsearch, index: str) -> list[tuple[str, str, str]]:
    es.indices.refresh(index=JOBS_INDEX)
    hits = es.search(index=JOBS_INDEX, query={"term": {"index": index}}, size=10)["hits"]["hits"]
    jobs = [h["_source"] for h in hits if "state" in h["_source"]]
    return sorted((j["kind"], j["state"], (j.get("error") or {}).get("message", "")) for j in jobs)


def test_a_job_interrupted_by_ctrl_c_releases_its_lock_and_says_so(es: Elasticsearch, index_name: str) -> None:
    def interrupted(progress: object) -> dict[str, object]:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_job(es, "dedupe", index_name, interrupted)
    # the lock is free at once, not after the 60 s a lock of a dead worker takes to expire
    assert run_job(es, "reconcile", index_name, lambda progress: {"ok": 1}) == {"ok": 1}
    assert _recorded(es, index_name) == [("dedupe", "failed", "interrupted"), ("reconcile", "done", "")]


def test_a_failing_command_job_raises_its_error_after_recording_it(es: Elasticsearch, index_name: str) -> None:
    def failing(progress: object) -> dict[str, object]:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        run_job(es, "reconcile", index_name, failing)
    assert _recorded(es, index_name) == [("reconcile", "failed", "bad input")]


#: a command holding an index's dedupe lock until it is killed: prints its job's id once the work runs
_HOLDER = """
import sys, time
from elasticsearch import Elasticsearch
from neardup.es.jobs import run_job

def work(progress):
    print("running", flush=True)
    time.sleep(300)
    return {}

run_job(Elasticsearch(sys.argv[1]), "dedupe", sys.argv[2], work)
"""


def test_a_command_killed_holding_a_lock_frees_it_at_once_on_its_machine(
    es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """``kill -9`` of a dedupe, then the same dedupe again (what resuming an interrupted dedupe is): the lock of a
    process gone from this machine is taken over at once, not after the heartbeat's 60 s; while it runs, refused."""
    command = [sys.executable, "-c", _HOLDER, es_url, index_name]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "running"
            with pytest.raises(JobRunning, match="a dedupe job is already running"):
                run_job(es, "dedupe", index_name, lambda progress: {})
        finally:
            holder.send_signal(signal.SIGKILL)
            holder.wait(timeout=30)
    assert run_job(es, "dedupe", index_name, lambda progress: {"resumed": True}) == {"resumed": True}
    recorded = _recorded(es, index_name)
    assert recorded[0][:2] == ("dedupe", "done") and recorded[1][:2] == ("dedupe", "failed"), recorded
    assert "its process is gone" in recorded[1][2]


def test_a_lock_held_on_another_machine_waits_for_its_heartbeat(es: Elasticsearch, index_name: str) -> None:
    """A holder's pid means nothing here when it ran elsewhere (another boot, another PID namespace): its lock stands
    while its heartbeat is fresh, whatever runs here under that pid."""
    run_job(es, "dedupe", index_name, lambda progress: {})  # neardup's jobs index, as a job makes it
    lock = {
        "lock": True,
        "kind": "dedupe",
        "index": index_name,
        "job": "f" * 32,
        "heartbeat_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "holder": {"boot": "another-machine", "pid_ns": "4:1", "pid": 999_999_999, "started": 1.0},
    }
    es.index(index=JOBS_INDEX, id=f"lock-assignments-{index_name}", document=lock, refresh=True)
    try:
        with pytest.raises(JobRunning):
            run_job(es, "reconcile", index_name, lambda progress: {})
    finally:
        es.delete(index=JOBS_INDEX, id=f"lock-assignments-{index_name}", refresh=True)


def test_dedupe_and_reconcile_exclude_each_other(es: Elasticsearch, index_name: str) -> None:
    def nested(progress: object) -> dict[str, object]:
        with pytest.raises(JobRunning, match="a dedupe job is already running") as held:
            run_job(es, "reconcile", index_name, lambda p: {})
        return {"refused": held.value.kind}

    assert run_job(es, "dedupe", index_name, nested) == {"refused": "dedupe"}
    assert run_job(es, "dedupe", index_name, lambda progress: {"again": True}) == {"again": True}


def test_a_lock_whose_create_was_answered_by_a_lost_connection_is_the_jobs_own(
    es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """The client sends a request again when the connection is lost after it was sent (a node dying): the lock's
    create, carried out the first time, finds the lock taken the second, by this very job, not another."""
    with holding_proxy(es_url, hold=1, drop=True, path="/_create/lock-") as proxy:
        client = Elasticsearch(proxy.url, max_retries=2)
        assert run_job(client, "dedupe", index_name, lambda progress: {"ran": True}) == {"ran": True}
        client.close()
    assert proxy.matched == 2  # the create, carried out unanswered, and the client's second
    assert _recorded(es, index_name) == [("dedupe", "done", "")]


@pytest.mark.skipif(bool(os.environ.get("ES_URL")), reason="deletes neardup's jobs index: the embedded node's only")
def test_the_jobs_index_is_green_on_one_node(es: Elasticsearch, index_name: str) -> None:
    """neardup's own index takes a replica only where a node is there for it, as Elasticsearch's system indices do:
    not yellow for good on a one-node cluster (the embedded default), whose health a script may wait on."""
    es.indices.delete(index=JOBS_INDEX, ignore_unavailable=True)
    run_job(es, "reconcile", index_name, lambda progress: {})
    settings = es.indices.get_settings(index=JOBS_INDEX, flat_settings=True)[JOBS_INDEX]["settings"]
    assert settings["index.auto_expand_replicas"] == "0-1"
    health = es.cluster.health(index=JOBS_INDEX, wait_for_status="green", timeout="10s")
    assert health["status"] == "green" and not health["timed_out"]

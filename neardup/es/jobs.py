"""Long-running batch jobs over HTTP: the job's state lives in Elasticsearch (index ``neardup-jobs``)
so any service worker can answer ``GET /v1/jobs/{id}``; the work runs in a thread of the worker
that accepted it. A job is ``running`` → ``done`` or ``failed`` (with the error); a running job whose worker stopped
beating (the process died) is reported ``lost``."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from elasticsearch import Elasticsearch, NotFoundError, TransportError

from .client import create_index

__all__ = ["JOBS_INDEX", "get_job", "mark_lost", "start_job"]

JOBS_INDEX = "neardup-jobs"
HEARTBEAT_SECONDS = 10.0
LOST_AFTER_SECONDS = 60.0
_LOG = logging.getLogger(__name__)
_MAPPING = {
    "dynamic": False,
    "properties": {
        "kind": {"type": "keyword"},
        "index": {"type": "keyword"},
        "state": {"type": "keyword"},
        "created_at": {"type": "date"},
        "finished_at": {"type": "date"},
    },
}

#: the work: gets a progress callback ``(stage, done, total)`` and returns the job's result
Work = Callable[[Callable[[str, int, int | None], None]], dict[str, Any]]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def start_job(client: Elasticsearch, kind: str, index: str, work: Work) -> dict[str, Any]:
    """Record a new job and run ``work`` in a background thread; returns the job document."""
    create_index(client, JOBS_INDEX, _MAPPING)
    job_id = uuid.uuid4().hex
    doc: dict[str, Any] = {
        "id": job_id,
        "kind": kind,
        "index": index,
        "state": "running",
        "progress": {"stage": "queued", "done": 0, "total": None},
        "created_at": _now(),
        "heartbeat_at": _now(),
    }
    client.index(index=JOBS_INDEX, id=job_id, document=doc, refresh="wait_for")
    finished = threading.Event()

    def heartbeat() -> None:
        while not finished.wait(HEARTBEAT_SECONDS):
            try:
                client.update(index=JOBS_INDEX, id=job_id, doc={"heartbeat_at": _now()})
            except TransportError as exc:
                _LOG.warning("job %s: heartbeat not recorded: %s", job_id, exc)

    last = [0.0]

    def progress(stage: str, done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - last[0] < 0.5 and (total is None or done < total):
            return
        last[0] = now
        try:
            client.update(index=JOBS_INDEX, id=job_id, doc={"progress": {"stage": stage, "done": done, "total": total}})
        except TransportError as exc:  # progress is best effort; the work goes on
            _LOG.warning("job %s: progress not recorded: %s", job_id, exc)

    def run() -> None:
        final: dict[str, Any]
        try:
            final = {"state": "done", "result": work(progress)}
        except Exception as exc:
            _LOG.exception("job %s failed", job_id)
            final = {"state": "failed", "error": {"type": type(exc).__name__, "message": str(exc)}}
        finished.set()
        final["finished_at"] = _now()
        for attempt in range(30):  # Elasticsearch may be briefly away; the outcome must be recorded
            try:
                client.update(index=JOBS_INDEX, id=job_id, doc=final, refresh="wait_for")
                return
            except TransportError:
                time.sleep(min(2.0, 0.1 * (attempt + 1)))
        _LOG.error("job %s: could not record its outcome %s", job_id, final["state"])

    threading.Thread(target=run, name=f"neardup-job-{job_id}", daemon=True).start()
    threading.Thread(target=heartbeat, name=f"neardup-job-{job_id}-heartbeat", daemon=True).start()
    return doc


def get_job(client: Elasticsearch, job_id: str) -> dict[str, Any] | None:
    """The job document, or None when there is no such job. A running job whose worker has not
    beaten for ``LOST_AFTER_SECONDS`` (the process died) is reported as ``lost``."""
    try:
        source: dict[str, Any] = client.get(index=JOBS_INDEX, id=job_id)["_source"]
    except NotFoundError:
        return None
    return mark_lost(source, datetime.now(UTC))


def mark_lost(job: dict[str, Any], now: datetime) -> dict[str, Any]:
    """``job`` as reported at ``now``.

    >>> job = {"state": "running", "heartbeat_at": "2026-01-01T00:00:00.000+00:00"}
    >>> mark_lost(job, datetime(2026, 1, 1, 0, 0, 10, tzinfo=UTC))["state"]
    'running'
    >>> mark_lost(job, datetime(2026, 1, 1, 0, 5, tzinfo=UTC))["state"]
    'lost'
    """
    beat = job.get("heartbeat_at")
    if job.get("state") != "running" or not beat:
        return job
    if (now - datetime.fromisoformat(beat)).total_seconds() <= LOST_AFTER_SECONDS:
        return job
    return job | {
        "state": "lost",
        "error": {
            "type": "WorkerLost",
            "message": f"no heartbeat since {beat}: the process running it is gone; start the job again "
            "(dedupe and reconcile are safe to re-run)",
        },
    }

"""Long-running batch jobs: the job's state lives in Elasticsearch (index ``neardup-jobs``) so any service worker
can answer ``GET /v1/jobs/{id}``; the work runs in a thread of the worker that accepted it, or in the command that
runs it (:func:`run_job`). A job is ``running`` → ``done`` or ``failed`` (with the error); a running job whose worker
stopped beating (the process died) is reported ``lost``.

One job that writes an index's assignments (a dedupe or a reconcile) runs on an index at a time, whichever worker
process or command started it: a job first takes a lock, a document ``lock-assignments-<index>`` in the same index
created with ``op_type=create`` (so exactly one of two gets it). Its heartbeat keeps the lock fresh; it is deleted
when the job ends, and a lock whose job ended or whose worker stopped beating for ``LOST_AFTER_SECONDS`` is taken
over, at once when its worker ran on this machine (in this PID namespace) and that process is gone (a command
killed, then run again). Every change of a lock is conditional on its sequence number (``if_seq_no``), so a job
never renews or deletes a lock another job took over (and no scripting is needed); a job that finds its lock taken
over stops at its next progress step (:class:`JobLockLost`)."""

from __future__ import annotations

import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import psutil
from elasticsearch import ApiError, ConflictError, Elasticsearch, NotFoundError, TransportError

from neardup.errors import NeardupError

from .client import JOBS_INDEX, create_index

__all__ = [
    "JOBS_INDEX",
    "InvalidJobRecord",
    "JobLockLost",
    "JobRunning",
    "get_job",
    "mark_lost",
    "run_job",
    "start_job",
]

HEARTBEAT_SECONDS = 10.0
#: how long a command waits for each of its job's last two requests (the lock's release, the outcome)
_BRIEF_SECONDS = 5.0
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
#: the ids neardup gives jobs; anything else in the index (a lock) is not a job
_JOB_ID = re.compile(r"[0-9a-f]{32}")
_STATES = ("running", "done", "failed")

#: the work: gets a progress callback ``(stage, done, total)`` and returns the job's result
Work = Callable[[Callable[[str, int, int | None], None]], dict[str, Any]]


class JobRunning(NeardupError):
    """A job that excludes the one asked for (``kind``: dedupe and reconcile exclude each other) is running on this
    index (``job_id``, started by any worker or command)."""

    def __init__(self, kind: str, index: str, job_id: str) -> None:
        super().__init__(
            f"a {kind} job is already running on index {index!r}: {job_id}; wait for it to end (GET /v1/jobs/{job_id})"
        )
        self.kind = kind
        self.index = index
        self.job_id = job_id


class JobLockLost(NeardupError):
    """The job's worker missed its heartbeats long enough for another job of its kind to take its index's lock
    over: it stops rather than run beside that one."""

    def __init__(self, kind: str, index: str, job_id: str) -> None:
        super().__init__(
            f"{kind} job {job_id} on index {index!r} stopped: its lock was taken over or removed (its heartbeats "
            f"were missed for over {LOST_AFTER_SECONDS:.0f} s, or the lock was deleted), and another job may be "
            "writing the index's assignments"
        )


class InvalidJobRecord(NeardupError):
    """The stored record of a job is not one neardup wrote (it was changed in Elasticsearch directly)."""

    def __init__(self, job_id: str, problem: str) -> None:
        super().__init__(
            f"the record of job {job_id} in {JOBS_INDEX} is not one neardup wrote ({problem}); "
            "it was changed in Elasticsearch directly"
        )
        self.job_id = job_id
        self.problem = problem


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _parse_time(value: Any) -> datetime | None:
    """An ISO timestamp with a time zone, else None."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


#: the kinds of job that exclude each other on an index, by the lock they share: dedupe and reconcile both write
#: the assignments, and one reading an older state would write it over the other's
_LOCKS = {"dedupe": "assignments", "reconcile": "assignments"}


def _lock_id(kind: str, index: str) -> str:
    return f"lock-{_LOCKS.get(kind, kind)}-{index}"


def _process_identity() -> dict[str, Any] | None:
    """This process as a lock names its holder: its pid and start time, and the Linux boot and PID namespace in which
    that pid means this process (another machine, or a container of its own, has other ones); None where there are no
    such (not Linux), and a lock then expires by its heartbeat alone."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as boot:
            boot_id = boot.read().strip()
        namespace = os.stat("/proc/self/ns/pid")
        started = psutil.Process().create_time()
    except (OSError, psutil.Error):
        return None
    return {"boot": boot_id, "pid_ns": f"{namespace.st_dev}:{namespace.st_ino}", "pid": os.getpid(), "started": started}


def _holder_gone(lock: dict[str, Any], here: dict[str, Any] | None) -> bool:
    """Did the lock's holder run on this machine, in this PID namespace (``here``: :func:`_process_identity`), in a
    process that no longer runs (killed, or its pid now another process's)? False whenever that cannot be told."""
    holder = lock.get("holder")
    if not isinstance(holder, dict) or here is None:
        return False
    if holder.get("boot") != here["boot"] or holder.get("pid_ns") != here["pid_ns"]:
        return False
    try:
        process = psutil.Process(int(holder["pid"]))
        if process.status() == psutil.STATUS_ZOMBIE:
            return True  # killed, not yet reaped by its parent
        return bool(abs(process.create_time() - float(holder["started"])) > 0.5)
    except psutil.NoSuchProcess:
        return True
    except (psutil.Error, KeyError, TypeError, ValueError):
        return False


def _lock_alive(client: Elasticsearch, lock: dict[str, Any]) -> bool:
    """The lock's job still runs, as far as its heartbeat and record tell: it beat within ``LOST_AFTER_SECONDS`` and
    its record (once written) says running."""
    beat = _parse_time(lock.get("heartbeat_at"))
    if beat is None or (datetime.now(UTC) - beat).total_seconds() > LOST_AFTER_SECONDS:
        return False
    job_id = lock.get("job")
    if not isinstance(job_id, str):
        return False
    try:
        job = client.get(index=JOBS_INDEX, id=job_id)["_source"]
    except NotFoundError:
        return True  # taken a moment ago; its record is being written
    return isinstance(job, dict) and job.get("state") == "running"


def _record_gone(client: Elasticsearch, job_id: str) -> None:
    """Record a running job whose process is gone as failed, at once rather than ``lost`` once its heartbeat is old
    (best effort: a record left running reads ``lost`` then)."""
    gone = {
        "state": "failed",
        "finished_at": _now(),
        "error": {
            "type": "WorkerLost",
            "message": "its process is gone (killed); its lock was taken over by a new job",
        },
    }
    try:
        job = client.get(index=JOBS_INDEX, id=job_id)
        if job["_source"].get("state") == "running":
            client.index(
                index=JOBS_INDEX,
                id=job_id,
                document={**job["_source"], **gone},
                if_seq_no=job["_seq_no"],
                if_primary_term=job["_primary_term"],
            )
    except (TransportError, ApiError) as exc:
        _LOG.warning("job %s: not recorded as gone: %s", job_id, exc)


def _acquire(client: Elasticsearch, kind: str, index: str, job_id: str) -> None:
    """Take the (index, kind) lock for ``job_id``, or raise :class:`JobRunning` naming its holder."""
    lock_id = _lock_id(kind, index)
    holder, holder_kind = "?", kind
    here = _process_identity()
    for _ in range(5):
        body = {"lock": True, "kind": kind, "index": index, "job": job_id, "heartbeat_at": _now(), "holder": here}
        try:
            client.create(index=JOBS_INDEX, id=lock_id, document=body)
            return
        except ConflictError:
            pass
        try:
            held = client.get(index=JOBS_INDEX, id=lock_id)
        except NotFoundError:
            continue  # released in between: try again
        lock = held["_source"] if isinstance(held["_source"], dict) else {}
        if lock.get("job") == job_id:
            return  # its own: the client sent the create again after a first that was carried out unanswered
        holder, holder_kind = str(lock.get("job")), str(lock.get("kind") or kind)
        gone = _holder_gone(lock, here)  # killed on this machine: no need to wait for its heartbeat to age
        if not gone and _lock_alive(client, lock):
            raise JobRunning(holder_kind, index, holder)
        try:  # its job ended or its worker died: take the lock over, unless someone else did first
            client.index(
                index=JOBS_INDEX,
                id=lock_id,
                document=body,
                if_seq_no=held["_seq_no"],
                if_primary_term=held["_primary_term"],
            )
            _LOG.warning("%s on %s: took over the lock of job %s (ended or its worker is gone)", kind, index, holder)
            if gone:
                _record_gone(client, holder)
            return
        except ConflictError:
            continue
    raise JobRunning(holder_kind, index, holder)


def _held(client: Elasticsearch, lock_id: str, job_id: str) -> dict[str, Any] | None:
    """The lock document while ``job_id`` holds it (with its sequence number), else None."""
    try:
        held = client.get(index=JOBS_INDEX, id=lock_id)
    except NotFoundError:
        return None
    source = held["_source"]
    return dict(held) if isinstance(source, dict) and source.get("job") == job_id else None


def _renew(client: Elasticsearch, kind: str, index: str, job_id: str, now: str) -> bool:
    """The lock's heartbeat, while ``job_id`` holds it; False once it no longer does (another job took it over)."""
    lock_id = _lock_id(kind, index)
    for _ in range(5):
        held = _held(client, lock_id, job_id)
        if held is None:
            return False
        try:
            client.index(
                index=JOBS_INDEX,
                id=lock_id,
                document={**held["_source"], "heartbeat_at": now},
                if_seq_no=held["_seq_no"],
                if_primary_term=held["_primary_term"],
            )
            return True
        except ConflictError:
            continue
    return True  # changed under it five times in a row: still there, as far as it can tell


def _release(client: Elasticsearch, kind: str, index: str, job_id: str, attempts: int = 10) -> None:
    """Delete the lock if ``job_id`` still holds it; a lock left behind expires (see :func:`_lock_alive`)."""
    lock_id = _lock_id(kind, index)
    for attempt in range(attempts):
        try:
            held = _held(client, lock_id, job_id)
            if held is None:
                return
            client.delete(
                index=JOBS_INDEX, id=lock_id, if_seq_no=held["_seq_no"], if_primary_term=held["_primary_term"]
            )
            return
        except NotFoundError:
            return
        except ConflictError:
            continue  # renewed or taken over in between: look again
        except (TransportError, ApiError) as exc:
            _LOG.warning("job %s: lock not released yet: %s", job_id, exc)
            time.sleep(min(2.0, 0.1 * (attempt + 1)))


def start_job(client: Elasticsearch, kind: str, index: str, work: Work) -> dict[str, Any]:
    """Record a new job and run ``work`` in a background thread; returns the job document. Raises
    :class:`JobRunning` when a job that excludes it runs on ``index`` (in any worker process or command)."""
    job = _Job.begin(client, kind, index)
    threading.Thread(target=job.run, args=(work,), name=f"neardup-job-{job.id}", daemon=True).start()
    return job.doc


def run_job(client: Elasticsearch, kind: str, index: str, work: Work) -> dict[str, Any]:
    """:func:`start_job` in this thread (the command line's ``dedupe`` and ``reconcile``, which so take the same
    lock as the service's jobs): the work's result, or its exception once the job is recorded as failed."""
    job = _Job.begin(client, kind, index)
    return job.run(work, reraise=True)


class _Job:
    """A job: its lock taken and its record written (:meth:`begin`); :meth:`run` beats its heartbeat while the
    work runs, then records the outcome and releases the lock."""

    def __init__(self, client: Elasticsearch, kind: str, index: str, doc: dict[str, Any]) -> None:
        self.client = client
        self.kind = kind
        self.index = index
        self.doc = doc
        self.id: str = doc["id"]
        self.finished = threading.Event()
        self.lock_lost = threading.Event()
        self.last_progress = 0.0

    @classmethod
    def begin(cls, client: Elasticsearch, kind: str, index: str) -> _Job:
        create_index(client, JOBS_INDEX, _MAPPING)
        job_id = uuid.uuid4().hex
        _acquire(client, kind, index, job_id)
        doc: dict[str, Any] = {
            "id": job_id,
            "kind": kind,
            "index": index,
            "state": "running",
            "progress": {"stage": "queued", "done": 0, "total": None},
            "created_at": _now(),
            "heartbeat_at": _now(),
        }
        try:
            client.index(index=JOBS_INDEX, id=job_id, document=doc, refresh="wait_for")
        except BaseException:
            _release(client, kind, index, job_id)
            raise
        return cls(client, kind, index, doc)

    def heartbeat(self) -> None:
        # each heartbeat request is sent once: with the client's retries, one beat could outlast the takeover time
        beat_client = self.client.options(max_retries=0)
        while not self.finished.wait(HEARTBEAT_SECONDS):
            try:
                now = _now()
                # the record beats on while the work runs, lock or not: it is what says the job is alive
                beat_client.update(index=JOBS_INDEX, id=self.id, doc={"heartbeat_at": now}, retry_on_conflict=3)
                if not self.lock_lost.is_set() and not _renew(beat_client, self.kind, self.index, self.id, now):
                    self.lock_lost.set()  # taken over: another job may be running
            except (TransportError, ApiError) as exc:
                _LOG.warning("job %s: heartbeat not recorded: %s", self.id, exc)

    def progress(self, stage: str, done: int, total: int | None) -> None:
        if self.lock_lost.is_set():  # the work stops at its next step rather than run beside another job
            raise JobLockLost(self.kind, self.index, self.id)
        now = time.monotonic()
        if now - self.last_progress < 0.5 and (total is None or done < total):
            return
        self.last_progress = now
        try:
            self.client.update(
                index=JOBS_INDEX,
                id=self.id,
                doc={"progress": {"stage": stage, "done": done, "total": total}},
                retry_on_conflict=3,
            )
        except (TransportError, ApiError) as exc:  # progress is best effort; the work goes on
            _LOG.warning("job %s: progress not recorded: %s", self.id, exc)

    def run(self, work: Work, reraise: bool = False) -> dict[str, Any]:
        """Run ``work`` to its end; ``reraise`` (a command, whose user is waiting): its exception is raised again,
        a Ctrl-C included, once the lock is released and the outcome recorded, each tried briefly, as
        Elasticsearch may be what failed (a lock left behind expires, a record left running reads ``lost``)."""
        threading.Thread(target=self.heartbeat, name=f"neardup-job-{self.id}-heartbeat", daemon=True).start()
        final: dict[str, Any]
        failure: BaseException | None = None
        try:
            final = {"state": "done", "result": work(self.progress)}
        except BaseException as exc:
            if not reraise:
                _LOG.exception("job %s failed", self.id)
            failure = exc
            reason = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc)
            final = {"state": "failed", "error": {"type": type(exc).__name__, "message": reason}}
        finally:
            self.finished.set()
        attempts = 1 if reraise else 30
        client = self.client.options(max_retries=0, request_timeout=_BRIEF_SECONDS) if reraise else self.client
        # first: whoever reads the outcome may start the next job at once
        _release(client, self.kind, self.index, self.id, attempts=min(attempts, 10))
        final["finished_at"] = _now()
        for attempt in range(attempts):  # Elasticsearch may be briefly away; the outcome must be recorded
            try:
                client.update(index=JOBS_INDEX, id=self.id, doc=final, refresh="wait_for", retry_on_conflict=3)
                break
            except (TransportError, ApiError) as exc:
                if not reraise:
                    _LOG.warning("job %s: outcome not recorded yet: %s", self.id, exc)
                    time.sleep(min(2.0, 0.1 * (attempt + 1)))
        else:
            if not reraise:
                _LOG.error("job %s: could not record its outcome %s", self.id, final["state"])
        if failure is not None and (reraise or not isinstance(failure, Exception)):
            raise failure
        result: dict[str, Any] = final.get("result") or {}
        return result


#: what a job record's fields must be: (accepted types, required)
_FIELDS: dict[str, tuple[tuple[type, ...], bool]] = {
    "id": ((str,), True),
    "kind": ((str,), True),
    "index": ((str,), True),
    "state": ((str,), True),
    "created_at": ((str,), True),
    "progress": ((dict,), False),
    "result": ((dict, type(None)), False),
    "error": ((dict, type(None)), False),
    "heartbeat_at": ((str, type(None)), False),
    "finished_at": ((str, type(None)), False),
}


def _record_problem(job_id: str, job: Any) -> str:
    """What is wrong with a stored job record ("" when nothing).

    >>> _record_problem("a" * 32, {"id": "a" * 32, "kind": "dedupe", "index": "x", "state": "done", "created_at": "t"})
    ''
    >>> _record_problem("a" * 32, {"id": "a" * 32, "kind": "dedupe", "index": "x", "state": 5, "created_at": "t"})
    'state is 5, not a str'
    """
    if not isinstance(job, dict):
        return "it is not an object"
    for name, (kinds, required) in _FIELDS.items():
        if name not in job:
            if required:
                return f"it has no {name}"
            continue
        if not isinstance(job[name], kinds):
            return f"{name} is {job[name]!r:.60}, not a {' or '.join(k.__name__ for k in kinds if k is not type(None))}"
    if job["id"] != job_id:
        return f"its id is {job['id']!r:.60}"
    if job["state"] not in _STATES:
        return f"state is {job['state']!r:.60}, not one of {', '.join(_STATES)}"
    if job.get("heartbeat_at") is not None and _parse_time(job["heartbeat_at"]) is None:
        return f"heartbeat_at is {job['heartbeat_at']!r:.60}, not a time with a time zone"
    return ""


def get_job(client: Elasticsearch, job_id: str) -> dict[str, Any] | None:
    """The job document, or None when there is no such job. A running job whose worker has not
    beaten for ``LOST_AFTER_SECONDS`` (the process died) is reported as ``lost``. Raises
    :class:`InvalidJobRecord` when the stored record is not one neardup wrote."""
    if not _JOB_ID.fullmatch(job_id):
        return None  # not an id neardup gives out (a lock's, or anything else)
    try:
        source: Any = client.get(index=JOBS_INDEX, id=job_id)["_source"]
    except NotFoundError:
        return None
    problem = _record_problem(job_id, source)
    if problem:
        raise InvalidJobRecord(job_id, problem)
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

"""Batch jobs over HTTP: ``POST /v1/indices/{index}/dedupe`` and ``/reconcile`` start a job and answer
202 with its id; ``GET /v1/jobs/{id}`` reports state and progress (from any service worker)."""

from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint

from neardup.es.batch import BatchConfig, Progress, dedupe, reconcile
from neardup.es.jobs import get_job, start_job

from ..auth import requires_key
from ..errors import ApiError
from ..schemas import DedupeIn, JobOut
from ..state import state
from .common import checked_index, ensure_index

__all__ = ["bp"]

bp = APIBlueprint("jobs", __name__, tag="jobs")


def _require_index(index: str) -> None:
    checked_index(index)
    if not state().client.indices.exists(index=index):
        raise ApiError(404, "index_not_found", f"no index {index!r}")
    ensure_index(index)  # adds the neardup fields to a user's existing index


@bp.post("/v1/indices/<index>/dedupe")
@bp.input(DedupeIn, arg_name="body")
@bp.output(JobOut, status_code=202)
@bp.doc(security="ApiKey", summary="Fingerprint and cluster every document of an index (a job)")
@requires_key
def dedupe_view(index: str, body: dict[str, Any]) -> dict[str, Any]:
    _require_index(index)
    st = state()
    config = BatchConfig(
        verify=st.ingest.verify,
        workers=body["workers"],
        text_field=body["text_field"],
        title_field=body["title_field"],
        record=st.record_configs.get(index),
    )

    def work(progress: Progress) -> dict[str, Any]:
        return dedupe(st.client, index, st.fingerprinter, config, progress)

    return start_job(st.client, "dedupe", index, work)


@bp.post("/v1/indices/<index>/reconcile")
@bp.output(JobOut, status_code=202)
@bp.doc(security="ApiKey", summary="Merge clusters split by concurrent ingest, from stored fingerprints (a job)")
@requires_key
def reconcile_view(index: str) -> dict[str, Any]:
    _require_index(index)
    st = state()
    config = BatchConfig(verify=st.ingest.verify, record=st.record_configs.get(index))

    def work(progress: Progress) -> dict[str, Any]:
        return reconcile(st.client, index, config.version(st.fingerprinter), config, progress)

    return start_job(st.client, "reconcile", index, work)


@bp.get("/v1/jobs/<job_id>")
@bp.output(JobOut)
@bp.doc(summary="A job's state, progress and result", responses={404: "no such job"})
def job_view(job_id: str) -> dict[str, Any]:
    job = get_job(state().client, job_id)
    if job is None:
        raise ApiError(404, "job_not_found", f"no job {job_id!r}")
    return job

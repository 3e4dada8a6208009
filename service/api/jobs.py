"""Batch jobs over HTTP: ``POST /v1/indices/{index}/dedupe`` and ``/reconcile`` start a job and answer
202 with its id; ``GET /v1/jobs/{id}`` reports state and progress (from any service worker)."""

from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint

from neardup.es.batch import BatchConfig, NoTextField, Progress, check_text_field, dedupe, read_fields, reconcile
from neardup.es.jobs import InvalidJobRecord, JobRunning, Work, get_job, start_job

from ..auth import requires_key, requires_read_key
from ..errors import ApiError
from ..schemas import DedupeIn, JobOut
from ..state import state
from .common import checked_index, ensure_index, index_info

__all__ = ["bp"]

bp = APIBlueprint("jobs", __name__, tag="jobs")


def _require_index(index: str) -> None:
    checked_index(index)
    if index_info(index).kind == "missing":
        raise ApiError(404, "index_not_found", f"no index {index!r}")


#: the most documents the request reads to find a text (an index without the field is read whole otherwise, too
#: long for a request); the job's own check reads the rest
_CHECKED = 1_000


def _check_text_field(index: str, config: BatchConfig) -> None:
    """400 where a dedupe with ``config`` would refuse ``index``: checked before the neardup fields are added to a
    user's existing index, so a refused dedupe changes nothing (unless no text is among its first documents, yet
    one is later: :data:`_CHECKED`)."""
    try:
        check_text_field(state().client, index, config, most=_CHECKED)
    except NoTextField as exc:
        raise ApiError(
            400,
            "no_text_field",
            f"{exc}; if the text is in another field, name it with text_field",
            detail={"index": exc.index, "text_field": exc.text_field, "documents": exc.documents},
        ) from exc


def _start(kind: str, index: str, work: Work) -> dict[str, Any]:
    """Start the job; 409 with the running job's id when one of ``kind`` runs on ``index`` (any worker)."""
    try:
        return start_job(state().client, kind, index, work)
    except JobRunning as exc:
        raise ApiError(
            409, "job_running", str(exc), detail={"job_id": exc.job_id, "kind": exc.kind, "index": exc.index}
        ) from exc


@bp.post("/v1/indices/<index>/dedupe")
@bp.input(DedupeIn, arg_name="body")
@bp.output(JobOut, status_code=202)
@bp.doc(
    security="ApiKey",
    summary="Fingerprint and cluster every document of an index (a job)",
    responses={
        400: "bad input (the error names it), or no document of the index has a text in text_field "
        "(no_text_field; nothing was changed)",
        409: "a dedupe job is running on the index (its id in the detail)",
    },
)
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
        fingerprint_in_es=st.settings.fingerprints_in_es,
    )
    _check_text_field(index, config)
    ensure_index(index)  # adds the neardup fields to a user's existing index

    def work(progress: Progress) -> dict[str, Any]:
        return dedupe(st.client, index, st.fingerprinter, config, progress)

    return _start("dedupe", index, work)


@bp.post("/v1/indices/<index>/reconcile")
@bp.output(JobOut, status_code=202)
@bp.doc(
    security="ApiKey",
    summary="Merge clusters split by concurrent ingest, from stored fingerprints (a job)",
    responses={409: "a reconcile job is running on the index (its id in the detail)"},
)
@requires_key
def reconcile_view(index: str) -> dict[str, Any]:
    _require_index(index)
    ensure_index(index)
    st = state()
    # the version the last dedupe wrote: the text and title fields it read are part of it
    fields = read_fields(st.client, index)
    config = BatchConfig(
        verify=st.ingest.verify,
        text_field=fields["text_field"],
        title_field=fields["title_field"],
        record=st.record_configs.get(index),
    )

    def work(progress: Progress) -> dict[str, Any]:
        return reconcile(st.client, index, config.version(st.fingerprinter), config, progress)

    return _start("reconcile", index, work)


@bp.get("/v1/jobs/<job_id>")
@bp.output(JobOut)
@bp.doc(
    summary="A job's state, progress and result",
    responses={404: "no such job", 502: "the job's record was changed outside neardup"},
)
@requires_read_key
def job_view(job_id: str) -> dict[str, Any]:
    try:
        job = get_job(state().client, job_id)
    except InvalidJobRecord as exc:
        raise ApiError(502, "invalid_job_record", str(exc), detail={"problem": exc.problem}) from exc
    if job is None:
        raise ApiError(404, "job_not_found", f"no job {job_id!r}")
    return job

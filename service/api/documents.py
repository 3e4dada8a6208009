"""Documents and near-duplicate lookups:

- ``POST /v1/indices/{index}/documents``: flag and index one document, an array, or NDJSON;
- ``GET /v1/indices/{index}/documents/{id}/duplicates``: near-duplicates of a stored document;
- ``POST /v1/indices/{index}/duplicates``: near-duplicates of posted ``{title, text}`` or ``{record}``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from apiflask import APIBlueprint
from elasticsearch import BadRequestError, NotFoundError
from flask import request

from neardup.es.indexing import IngestConfig, ItemResult, index_batch, index_batch_in_pipeline
from neardup.es.lookup import Found, find_duplicates
from neardup.es.pipeline import PipelineMissing
from neardup.incoming.documents import DocumentError, Incoming, check_not_reserved, record_text
from neardup.ingest.fingerprint import Record
from neardup.ingest.records import RecordConfig, RecordError
from neardup.mappings import schema
from neardup.mappings.schema import Stored

from ..auth import requires_key, requires_read_key
from ..errors import RETRY_AFTER, ApiError, passing_answer
from ..schemas import DocumentsOut, DocumentsQuery, DuplicatesIn, DuplicatesOut, DuplicatesQuery
from ..state import state
from .common import check_text_length, checked_index, ensure_index
from .parsing import parse_documents

__all__ = ["bp"]

bp = APIBlueprint("documents", __name__, url_prefix="/v1/indices/<index>", tag="documents")


@bp.post("/documents")
@bp.input(DocumentsQuery, location="query", arg_name="query")
@bp.output(DocumentsOut)
@bp.doc(
    security="ApiKey",
    summary="Flag and index documents",
    description="Body: one JSON object, a JSON array of objects, or NDJSON (application/x-ndjson). "
    "Every item is checked before anything is written. Each document joins the cluster of its best "
    "verified match (in the index or earlier in the same request) or starts its own.",
    responses={
        400: "a bad document (the item or line is named), or one Elasticsearch refused: nothing written",
        413: "body too large",
        429: "Elasticsearch's queues were full: nothing written, send the batch again (Retry-After)",
        502: "Elasticsearch failed on an item: nothing written",
    },
)
@requires_key
def post_documents(index: str, query: dict[str, Any]) -> dict[str, Any]:
    checked_index(index)
    st = state()
    records_config = st.record_configs.get(index)
    docs = parse_documents(
        request.get_data(cache=False),
        request.content_type or "",
        st.settings.max_documents_per_request,
        st.settings.max_text_chars,
        records=records_config is not None,
    )
    through = st.flag_pipeline() if records_config is None and st.settings.flag_in_es else None
    if ensure_index(index):
        st.recent.clear(index)  # a new index: what this worker wrote to an earlier one is gone
    started = time.perf_counter()
    config: IngestConfig = replace(
        st.ingest, refresh=query["refresh"], atomic=not query["keep_accepted"], in_es=st.verify_in_es()
    )
    records: list[Record] = []
    if through is not None:
        return _answer(_through_pipeline(index, docs, through, config), config, started)
    if records_config is None:
        records = st.fingerprint(_texts(docs))
    else:
        config = replace(config, verify=records_config.verify_config(config.verify))
        for k, doc in enumerate(docs):
            try:
                records.append(st.fingerprinter.fingerprint_record(doc.source, records_config))
            except RecordError as exc:
                raise ApiError(400, "invalid_document", f"item {k} ({doc.id}): {exc}", detail={"at": k}) from exc
    items = index_batch(st.client, index, docs, st.fingerprinter, config, records, recent=st.recent)
    return _answer(items, config, started)


def _through_pipeline(index: str, docs: list[Incoming], pipeline: str, config: IngestConfig) -> list[ItemResult]:
    """``index_batch_in_pipeline``, putting the pipeline back once when it has gone since it was put."""
    st = state()

    def write(through: str) -> list[ItemResult]:
        return index_batch_in_pipeline(
            st.client, index, docs, through, st.fingerprinter, config, lambda d: st.fingerprint(_texts(d))
        )

    try:
        return write(pipeline)
    except PipelineMissing:
        return write(st.flag_pipeline(again=True))


def _texts(docs: Sequence[Incoming]) -> list[tuple[str, str | None]]:
    return [(d.text or "", d.title) for d in docs]


def _answer(items: list[ItemResult], config: IngestConfig, started: float) -> dict[str, Any]:
    """The documents post's answer; a refused atomic batch is an error naming the refused items."""
    refused = [i for i in items if i.status == "error"]
    if refused and config.atomic:
        # refusals that pass within seconds (a full queue, a shard without a copy, no answer in time): send it again
        answers = [503 if i.unanswered else passing_answer(i.error_status) for i in refused]
        passing = [a for a in answers if a is not None]
        if len(passing) == len(answers):
            raise ApiError(
                max(passing),  # 429 only when every refusal was a full queue
                "batch_refused",
                f"Elasticsearch could not take {len(refused)} of {len(items)} documents for the moment; nothing "
                "was written: send the batch again",
                detail={"items": [i.as_json() for i in refused]},
                headers=RETRY_AFTER,
            )
        client_fault = all(i.error_status is not None and 400 <= i.error_status < 500 for i in refused)
        raise ApiError(
            400 if client_fault else 502,
            "batch_refused",
            f"Elasticsearch refused {len(refused)} of {len(items)} documents; nothing was written "
            "(send ?partial=true to keep the others)",
            detail={"items": [i.as_json() for i in refused]},
        )
    return {
        "errors": any(i.status == "error" for i in items),
        "items": [i.as_json() for i in items],
        "took_ms": int((time.perf_counter() - started) * 1000),
    }


def _items(found: list[Found], size: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f.doc.id,
            "distance": f.match.distance,
            "score": schema.rounded_similarity(f.match.similarity),
            "cluster": f.doc.cluster,
        }
        for f in found[:size]
    ]


def _lookup(
    index: str,
    record: Record | Stored,
    records_config: RecordConfig | None,
    max_distance: int,
    size: int,
    exclude: Sequence[str] = (),
) -> dict[str, Any]:
    """The answer of a duplicates endpoint: the ``size`` best near-duplicates of ``record`` in ``index`` (none of
    ``exclude``) within ``max_distance`` bits, compared by the index's ``records_config`` where it has one."""
    st = state()
    config = replace(st.ingest.verify, max_distance=max_distance)
    if records_config is not None:  # records of this index are compared with their metadata too
        config = records_config.verify_config(config)
    found, candidates = find_duplicates(
        st.client,
        index,
        record,
        config,
        st.ingest.max_candidates,
        exclude=exclude,
        min_shared=st.ingest.min_shared,
        in_es=st.verify_in_es(),
    )
    return {"items": _items(found, size), "candidates": candidates, "status": record.status}


def _stored(index: str, doc_id: str) -> Stored:
    """The stored document ``doc_id`` with what a lookup reads of it: a real-time get, or behind an alias of several
    indices (where Elasticsearch refuses a get) a search of its id, which finds it once it is refreshed."""
    client = state().client
    missing = ApiError(404, "document_not_found", f"no document {doc_id!r} in index {index!r}")
    try:
        return Stored.from_hit(dict(client.get(index=index, id=doc_id, source=schema.LOOKUP_FIELDS)))
    except NotFoundError as exc:
        if "index_not_found" in str(exc.error):
            raise
        raise missing from exc
    except BadRequestError as exc:
        if "more than one index" not in str(exc):
            raise
    hits = client.search(
        index=index, query={"ids": {"values": [doc_id]}}, size=2, source_includes=schema.LOOKUP_FIELDS
    )["hits"]["hits"]
    if not hits:
        raise missing
    if len(hits) > 1:
        raise ApiError(
            409,
            "ambiguous_document",
            f"document {doc_id!r} is in more than one index behind {index!r} ({hits[0]['_index']}, "
            f"{hits[1]['_index']}); look it up in one of them",
        )
    return Stored.from_hit(hits[0])


# `doc_id` (a converter of create_app's): an id may hold "/" anywhere; merge_slashes=False keeps "a//b"
@bp.get("/documents/<doc_id:doc_id>/duplicates", merge_slashes=False)
@bp.input(DuplicatesQuery, location="query", arg_name="query")
@bp.output(DuplicatesOut)
@bp.doc(
    summary="Near-duplicates of a stored document",
    responses={404: "no such document or index", 409: "not fingerprinted yet, or one id in several indices"},
)
@requires_read_key
def document_duplicates(index: str, doc_id: str, query: dict[str, Any]) -> dict[str, Any]:
    checked_index(index)
    st = state()
    doc = _stored(index, doc_id)
    if not doc.version:
        raise ApiError(
            409, "not_fingerprinted", f"document {doc_id!r} has no neardup fields yet; run dedupe on {index!r}"
        )
    records_config = st.record_configs.get(index)
    return _lookup(index, doc, records_config, query["max_distance"], query["size"], exclude=[doc_id])


@bp.post("/duplicates")
@bp.input(DuplicatesIn, arg_name="body")
@bp.output(DuplicatesOut)
@bp.doc(
    summary="Near-duplicates of a posted text or record (nothing is stored)",
    description="An index of documents takes {title, text}; an index with a per-field configuration holds "
    "records and takes {record: {field: value}}, read and compared by that configuration.",
    responses={400: "text for a records index, or a record the configuration refuses", 413: "text too long"},
)
@requires_read_key
def posted_duplicates(index: str, body: dict[str, Any]) -> dict[str, Any]:
    checked_index(index)
    st = state()
    records_config = st.record_configs.get(index)
    if records_config is None:
        if "record" in body:
            raise ApiError(400, "text_expected", f"index {index!r} has no field configuration: post 'text'")
        check_text_length(body["text"])
        record = st.fingerprint([(body["text"], body.get("title"))])[0]
    else:
        if "text" in body:
            raise ApiError(
                400, "record_expected", f"index {index!r} holds records (it has a field configuration): post 'record'"
            )
        fields = body["record"]
        check_text_length(record_text(fields))
        try:
            for key in fields:
                check_not_reserved(key)
        except DocumentError as exc:
            raise ApiError(400, "invalid_document", str(exc)) from exc
        try:
            record = st.fingerprinter.fingerprint_record(fields, records_config)
        except RecordError as exc:
            raise ApiError(400, "invalid_document", f"record: {exc}") from exc
    return _lookup(index, record, records_config, body["max_distance"], body["size"])

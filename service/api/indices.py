"""``PUT /v1/indices/{index}``: create an index with the neardup mappings (idempotent), and keep a per-field
configuration with it."""

from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint
from flask import request

from neardup.es.client import count_fingerprinted_otherwise, read_record_config
from neardup.es.pipeline import text_pipeline, text_pipeline_problem
from neardup.ingest.records import RecordConfig, RecordError

from ..auth import requires_key
from ..errors import ApiError
from ..schemas import IndexIn, IndexOut
from ..state import state
from .common import checked_index, ensure_index

__all__ = ["bp"]

bp = APIBlueprint("indices", __name__, url_prefix="/v1/indices", tag="indices")


# the body is documented by IndexIn and checked by RecordConfig.parse alone (validation=False): one set of rules,
# with its messages naming the field at fault
@bp.put("/<index>")
@bp.input(IndexIn, location="json", arg_name="body", validation=False)
@bp.output(IndexOut)
@bp.doc(
    security="ApiKey",
    summary="Create an index with the neardup mappings (idempotent)",
    description='An optional JSON body {"fields": {name: {"mode": text|value|set|ignore, "weight"?, '
    '"title"?}}, "mu"?, "min_combined"?} stores a per-field configuration with the index: documents '
    "posted to it are then fingerprinted as structured records. An empty body leaves it as it is. Documents the "
    "index holds already keep their fingerprints until a dedupe (fingerprinted_otherwise counts them).",
    responses={
        400: "a body that is no JSON object, or a field configuration that cannot be used (the field is named)",
        409: "the index runs neardup's ingest pipeline, whose processor reads a text: it cannot hold records",
    },
)
@requires_key
def put_index(index: str, body: Any) -> dict[str, Any]:
    checked_index(index)
    if request.get_data(cache=True) and not isinstance(body, dict):
        raise ApiError(400, "invalid_json", "the body must be a JSON object with a 'fields' table")
    config = None
    if body:
        try:
            config = RecordConfig.parse(body)
        except RecordError as exc:
            raise ApiError(400, "invalid_field_config", str(exc), detail={"field": exc.field}) from exc
        _check_no_text_pipeline(index)  # before anything changes
    st = state()
    created = ensure_index(index, force=True)  # an explicit PUT always (re)applies the templates
    answer: dict[str, Any] = {"index": index, "created": created}
    if config is not None:
        st.record_configs.write(index, body)
        answer["fingerprinted_otherwise"] = _fingerprinted_otherwise(index, config)
    stored = read_record_config(st.client, index)
    return answer | {"field_config": stored.get("fields") if stored else None}


def _check_no_text_pipeline(index: str) -> None:
    """409 when a write to ``index`` runs neardup's processor by default (:func:`text_pipeline`)."""
    pipeline = text_pipeline(state().client, index)
    if pipeline is not None:
        raise ApiError(409, "text_pipeline", text_pipeline_problem(index, pipeline), detail={"pipeline": pipeline})


def _fingerprinted_otherwise(index: str, config: RecordConfig) -> dict[str, Any]:
    """How many documents of ``index`` are not fingerprinted by ``config``, and what fingerprints them by it: until
    then records posted to the index are not compared with them."""
    st = state()
    documents = count_fingerprinted_otherwise(st.client, index, st.fingerprinter.record_version(config))
    message = None
    if documents:
        which = "1 document" if documents == 1 else f"{documents} documents"
        message = (
            f"{which} of the index {'is' if documents == 1 else 'are'} not fingerprinted by this field configuration "
            "(texts, records of another configuration, or documents not fingerprinted yet): records are not compared "
            f"with them until a dedupe fingerprints them by it (POST /v1/indices/{index}/dedupe, or "
            f"`neardup dedupe {index}`)"
        )
    return {"documents": documents, "message": message}

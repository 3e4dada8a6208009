"""``PUT /v1/indices/{index}``: create an index with the neardup mappings (idempotent)."""

from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint
from flask import request

from neardup.es.client import read_record_config
from neardup.ingest.records import RecordConfig, RecordError

from ..auth import requires_key
from ..errors import ApiError
from ..schemas import IndexOut
from ..state import state
from .common import checked_index, ensure_index

__all__ = ["bp"]

bp = APIBlueprint("indices", __name__, url_prefix="/v1/indices", tag="indices")


@bp.put("/<index>")
@bp.output(IndexOut)
@bp.doc(
    security="ApiKey",
    summary="Create an index with the neardup mappings (idempotent)",
    description='An optional JSON body {"fields": {name: {"mode": text|value|set|ignore, "weight"?, '
    '"title"?}}, "mu"?, "min_combined"?} stores a per-field configuration with the index: documents '
    "posted to it are then fingerprinted as structured records. An empty body leaves it as it is.",
)
@requires_key
def put_index(index: str) -> dict[str, Any]:
    checked_index(index)
    body = request.get_json(silent=True) if request.get_data(cache=True) else None
    if request.get_data(cache=True) and not isinstance(body, dict):
        raise ApiError(400, "invalid_json", "the body must be a JSON object with a 'fields' table")
    config = None
    if body:
        try:
            config = RecordConfig.parse(body)
        except RecordError as exc:
            raise ApiError(400, "invalid_field_config", str(exc), detail={"field": exc.field}) from exc
    st = state()
    created = ensure_index(index, force=True)  # an explicit PUT always (re)applies the templates
    if config is not None and body is not None:
        st.record_configs.write(index, body)
    stored = read_record_config(st.client, index)
    return {"index": index, "created": created, "field_config": stored.get("fields") if stored else None}

"""``PUT /v1/indices/{index}``: create an index with the neardup mappings (idempotent)."""

from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint

from ..auth import requires_key
from ..schemas import IndexOut
from ..state import state
from .common import checked_index, ensure_index

__all__ = ["bp"]

bp = APIBlueprint("indices", __name__, url_prefix="/v1/indices", tag="indices")


@bp.put("/<index>")
@bp.output(IndexOut)
@bp.doc(security="ApiKey", summary="Create an index with the neardup mappings (idempotent)")
@requires_key
def put_index(index: str) -> dict[str, Any]:
    checked_index(index)
    state().ready_indices.discard(index)  # an explicit PUT always (re)applies the templates
    return {"index": index, "created": ensure_index(index)}

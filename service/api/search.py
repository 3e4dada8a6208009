"""``GET /v1/indices/{index}/search``: the user's query; ``hide_duplicates=true`` → one hit per cluster."""

from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint

from neardup.es.browse import search

from ..auth import requires_read_key
from ..schemas import SearchOut, SearchQuery
from ..state import state
from .common import checked_index, shown

__all__ = ["bp"]

bp = APIBlueprint("search", __name__, url_prefix="/v1/indices/<index>", tag="search")


@bp.get("/search")
@bp.input(SearchQuery, location="query", arg_name="query")
@bp.output(SearchOut)
@bp.doc(summary="Search title and text; optionally one hit per duplicate cluster")
@requires_read_key
def search_view(index: str, query: dict[str, Any]) -> dict[str, Any]:
    checked_index(index)
    return search(
        state().client,
        index,
        query["q"],
        query["hide_duplicates"],
        query["size"],
        query["from_"],
        query["cluster"],
        shown(index),
    )

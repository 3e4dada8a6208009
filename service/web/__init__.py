"""The web page at ``/``: search with the "hide near duplicates" switch, the cluster browser with
highlighted differences, and an overview with charts. Server-rendered HTML plus one small script;
every number comes from the same functions the JSON API uses (:mod:`neardup.es.browse`)."""

from __future__ import annotations

from typing import Any, cast

from apiflask import APIBlueprint
from elasticsearch import ApiError as ESApiError
from flask import render_template, request

from neardup.errors import SearchFailed
from neardup.es.browse import get_cluster, list_clusters, overview, search

from ..api.common import checked_index, shown
from ..errors import ES_OUTAGE_MESSAGE, ES_OUTAGES, ApiError, es_refusal
from ..state import state
from .diff import MAX_CHARS, side_by_side

__all__ = ["bp"]

bp = APIBlueprint(
    "web",
    __name__,
    template_folder="templates",
    static_folder="static",
    static_url_path="/ui/static",
    enable_openapi=False,
)
PAGE = 20
#: the last page the search pages through: 500 pages of 20 reach Elasticsearch's result window (10,000 hits)
LAST_PAGE = 500
#: how many clusters, the largest, the clusters page lists
CLUSTERS_LISTED = 100
#: how many members the cluster page compares with the canonical (a character diff of two long texts takes a
#: noticeable fraction of a second; the others are listed)
COMPARED = 20
#: how many more members the cluster page lists, by title
LISTED = 179
#: how many clusters, the largest, the overview's size chart counts (a terms aggregation's buckets)
SIZE_CHART_CLUSTERS = 10_000


#: what a page refused for want of the key asks the browser for: the key as the password, any user name
CHALLENGE = {"WWW-Authenticate": 'Basic realm="neardup", charset="UTF-8"'}


@bp.errorhandler(ApiError)
def _error_page(error: ApiError) -> tuple[str, int] | tuple[str, int, dict[str, str]]:
    """A page's refusal (no such index, not a neardup index, not allowed) as a page, with the index box to pick
    another; the API answers the same refusals as JSON. Refused for want of the key (``NEARDUP_PROTECT_READS``),
    the page asks the browser for it, which sends it with the page's later requests, the script's too."""
    page = _page(error.status_code, (error.extra_data or {}).get("type", "error"), error.message)
    # without a key set no password opens the page: no prompt then, the page says why
    return (*page, CHALLENGE) if error.status_code == 401 and state().settings.api_key else page


def _outage_page(exc: Exception) -> tuple[str, int]:
    """Elasticsearch gone away: the API's 503 ``elasticsearch_unavailable`` as a page, like the page's other
    refusals (a browser would show the JSON error as bare text)."""
    return _page(503, "elasticsearch_unavailable", ES_OUTAGE_MESSAGE)


for _outage in ES_OUTAGES:
    bp.register_error_handler(_outage, _outage_page)


def _refusal_page(exc: Exception) -> tuple[str, int]:
    """What Elasticsearch refused or failed (the service's credentials, a busy node, a shard without a copy) as a
    page, with the status and type the API answers."""
    resp, status = es_refusal(cast(ESApiError | SearchFailed, exc))
    error = (resp.get_json(silent=True) or {}).get("error") or {}
    return _page(status, str(error.get("type", "error")), error.get("message"))


bp.register_error_handler(ESApiError, _refusal_page)
bp.register_error_handler(SearchFailed, _refusal_page)


def _page(status: int, kind: str, message: str | None) -> tuple[str, int]:
    index = (request.args.get("index") or state().settings.ui_index)[:255]  # a refused name may be any length
    return render_template("error.html", index=index, kind=kind, message=message, status=status), status


def _index() -> str:
    """The page's index, through the API's own check (allowed, not internal, a neardup index, and the
    key when ``NEARDUP_PROTECT_READS`` is set)."""
    return checked_index(request.args.get("index") or state().settings.ui_index)


def _int_arg(name: str, default: int, low: int, high: int) -> int:
    raw = request.args.get(name, "")
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ApiError(400, "invalid_input", f"{name} must be an integer") from exc
    return max(low, min(high, value))


@bp.get("/")
def search_page() -> str:
    index = _index()
    q = request.args.get("q", "")
    hide = request.args.get("hide", "") in {"1", "on", "true"}
    page = _int_arg("page", 1, 1, LAST_PAGE)
    result = search(state().client, index, q, hide, PAGE, (page - 1) * PAGE, shown=shown(index))
    pages = min(LAST_PAGE, -(-result["total"] // PAGE))
    asked = None
    if page > max(1, pages):  # past the last page (a bookmark, fewer hits since): the last page, saying so
        asked, page = page, max(1, pages)
        if result["total"]:
            result = search(state().client, index, q, hide, PAGE, (page - 1) * PAGE, shown=shown(index))
    return render_template(
        "search.html", index=index, q=q, hide=hide, page=page, result=result, pages=pages, asked_page=asked
    )


@bp.get("/clusters")
def clusters_page() -> str:
    index = _index()
    min_size = _int_arg("min_size", 2, 1, 1_000_000)
    data = list_clusters(state().client, index, min_size, CLUSTERS_LISTED, shown(index))
    return render_template("clusters.html", index=index, min_size=min_size, data=data, listed=CLUSTERS_LISTED)


@bp.get("/clusters/<doc_id:cluster_id>", merge_slashes=False)  # a cluster is named by a document id
def cluster_page(cluster_id: str) -> str:
    index = _index()
    how = shown(index)
    data = get_cluster(state().client, index, cluster_id, size=COMPARED + 1, text_chars=MAX_CHARS, shown=how)
    if data is None:
        raise ApiError(404, "cluster_not_found", f"no cluster {cluster_id!r} in index {index!r}")
    members = data["members"]
    # the canonical leads the first page; when it is gone (deleted, or moved to another cluster) the members are
    # compared with the earliest one left, which the page names as such, not as the canonical
    canonical = next((m for m in members if m["canonical"]), None)
    reference = canonical or members[0]
    others = [m for m in members if m is not reference]
    listed: list[dict[str, Any]] = []
    if data["size"] > len(members):  # the rest by title only
        rest = get_cluster(state().client, index, cluster_id, size=LISTED, from_=len(members), text_chars=0, shown=how)
        listed = rest["members"] if rest is not None else []
    rows: list[dict[str, Any]] = []
    for m in others:
        left, right = side_by_side(reference.get("text") or "", m.get("text") or "")
        rows.append({"member": m, "left": left, "right": right})
    return render_template(
        "cluster.html",
        index=index,
        data=data,
        canonical=canonical,
        reference=reference,
        rows=rows,
        listed=listed,
        chars=MAX_CHARS,
    )


@bp.get("/overview")
def overview_page() -> str:
    index = _index()
    data = overview(state().client, index, max_clusters=SIZE_CHART_CLUSTERS)
    return render_template(
        "overview.html",
        index=index,
        data=data,
        # the size chart counts the largest clusters only: the rest, the smallest, are left out past that many
        truncated=not data["sizes_complete"],
        limit=SIZE_CHART_CLUSTERS,
        # clusters of two or more: all of them when the chart reached clusters of one, else at least these
        grouped=sum(b["clusters"] for b in data["cluster_sizes"] if b["size"] > 1),
        grouped_exact=data["sizes_complete"] or any(b["size"] == 1 for b in data["cluster_sizes"]),
    )

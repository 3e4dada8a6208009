"""Duplicate clusters: ``GET /v1/indices/{index}/clusters`` (largest first) and one cluster."""

from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint

from neardup.es.browse import get_cluster, list_clusters

from ..auth import requires_read_key
from ..errors import ApiError
from ..schemas import ClusterOut, ClusterQuery, ClustersOut, ClustersQuery
from ..state import state
from .common import checked_index, shown

__all__ = ["bp"]

bp = APIBlueprint("clusters", __name__, url_prefix="/v1/indices/<index>", tag="clusters")


@bp.get("/clusters")
@bp.input(ClustersQuery, location="query", arg_name="query")
@bp.output(ClustersOut)
@bp.doc(summary="Clusters with at least min_size members, largest first")
@requires_read_key
def clusters_view(index: str, query: dict[str, Any]) -> dict[str, Any]:
    checked_index(index)
    return list_clusters(state().client, index, query["min_size"], query["size"], shown(index))


@bp.get("/clusters/<doc_id:cluster_id>", merge_slashes=False)  # a cluster is named by a document id
@bp.input(ClusterQuery, location="query", arg_name="query")
@bp.output(ClusterOut)
@bp.doc(
    summary="A page of one cluster's members, canonical first, with their Hamming distances",
    responses={404: "no such cluster"},
)
@requires_read_key
def cluster_view(index: str, cluster_id: str, query: dict[str, Any]) -> dict[str, Any]:
    checked_index(index)
    found = get_cluster(
        state().client, index, cluster_id, query["size"], query["from_"], query["text_chars"], shown(index)
    )
    if found is None:
        raise ApiError(404, "cluster_not_found", f"no cluster {cluster_id!r} in index {index!r}")
    return found

"""Reading side: search with "hide near duplicates" (``collapse`` on ``neardup.cluster``) and the
cluster browser (a terms aggregation, largest first; one cluster's members with their distances).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from elasticsearch import Elasticsearch

from neardup.ingest.bits import hamming, to_unsigned
from neardup.mappings import schema

from .shown import Shown

_CLUSTER = schema.path(schema.CLUSTER)
_IS_DUPLICATE = schema.path(schema.IS_DUPLICATE)
_INDEXED_AT = schema.path(schema.INDEXED_AT)
_FINGERPRINT = schema.path(schema.FINGERPRINT)
#: the neardup fields a cluster's member is shown with
_MEMBER_FIELDS = tuple(
    schema.path(f)
    for f in (
        schema.FINGERPRINT,
        schema.DUPLICATE_OF,
        schema.DISTANCE,
        schema.SIMILARITY,
        schema.INDEXED_AT,
        schema.STATUS,
    )
)

__all__ = [
    "CLUSTER_COUNT_PRECISION",
    "MAX_RESULT_WINDOW",
    "counted_clusters",
    "get_cluster",
    "list_clusters",
    "overview",
    "search",
]

#: how an index of text documents is searched and shown
_TEXTS = Shown.of(None)
#: the cardinality aggregation's threshold: below this many clusters its count is close to exact (an estimate all
#: the same, which may be a few short at 10,000), above it the error grows
CLUSTER_COUNT_PRECISION = 40000
_SNIPPET = 300
#: Elasticsearch's ``index.max_result_window`` (its default): ``from + size`` may not pass it
MAX_RESULT_WINDOW = 10_000
#: the copies of one id a read by ids through an alias leaves room for: an id in more of the indices behind it may
#: go unread (a title is then missing), a bound that keeps 1,000 ids' read within the result window
_ALIAS_COPIES = 10
#: the most characters of a field Elasticsearch analyses to highlight it (its index limit is 1,000,000)
MAX_ANALYZED_OFFSET = 999_999


def counted_clusters(aggregation: dict[str, Any]) -> tuple[int, bool]:
    """A cardinality aggregation's count of clusters, and whether it is an estimate that may be off by more than a
    few (a count at or above the aggregation's precision threshold, past which its error grows).

    >>> counted_clusters({"value": 39_999}), counted_clusters({"value": 40_000})
    ((39999, False), (40000, True))
    """
    value = int(aggregation["value"])
    return value, value >= CLUSTER_COUNT_PRECISION


def _search(client: Elasticsearch, **body: Any) -> Any:
    """A search of the reading side: all shards or an error. Elasticsearch's default answers a search some shards
    failed with what the others found, and hits, totals and cluster sizes would then be short without a word."""
    return client.search(**body, allow_partial_search_results=False)


def _user_query(q: str, shown: Shown) -> dict[str, Any]:
    if not q.strip():
        return {"match_all": {}}
    return {
        "simple_query_string": {
            "query": q,
            "fields": list(shown.searched),
            "default_operator": "and",
            # a record's fields include numbers: a word that is no number is not compared with them (one that is,
            # matches them) instead of failing the search
            "lenient": True,
        }
    }


#: the order of hits: by score, and among equal scores originals before their duplicates, then the earliest written
#: (a document neardup has not written yet comes after those it has); under "hide near duplicates" the same order
#: picks the hit each cluster is shown by
_ORDER: list[dict[str, Any]] = [
    {"_score": "desc"},
    {_IS_DUPLICATE: {"order": "asc", "missing": "_last", "unmapped_type": "boolean"}},
    {_INDEXED_AT: {"order": "asc", "missing": "_last", "unmapped_type": "date_nanos"}},
]
_FRAGMENTS = {"fragment_size": 120, "number_of_fragments": 2}
#: the neardup fields a hit is shown with
_HIT_FIELDS = [_CLUSTER, schema.path(schema.DUPLICATE_OF), schema.path(schema.DISTANCE)]


def _highlight(shown: Shown) -> dict[str, Any]:
    fields = {name: {} if whole else _FRAGMENTS for name, whole in shown.highlighted.items()}
    return {
        # the fragments are HTML (the page shows their <em> marks as they are): the document's own text in them must
        # come escaped, which Elasticsearch's default encoder does not do
        "encoder": "html",
        "fields": fields,
        # a field longer than the index's highlight limit (1M characters by default) fails the whole search; with this
        # set, Elasticsearch highlights within the first part of it instead
        "max_analyzed_offset": MAX_ANALYZED_OFFSET,
    }


def search(
    client: Elasticsearch,
    index: str,
    q: str,
    hide_duplicates: bool,
    size: int,
    from_: int,
    cluster: str | None = None,
    shown: Shown = _TEXTS,
) -> dict[str, Any]:
    """``{"total", "total_estimated", "hide_duplicates", "hits": [{"id", "score", "cluster", "duplicate_of",
    "duplicates_hidden", "title", "text", "highlight"}]}``, hits in the order of ``_ORDER``; ``cluster`` keeps that
    cluster's members only, ``shown`` says which fields are searched and shown (a record's, by its index's
    configuration).

    With ``hide_duplicates`` one hit per cluster, and one per document without a cluster (not assigned yet:
    written by other clients, fingerprinted only, or waiting for a dedupe); ``duplicates_hidden`` counts the
    cluster's other documents that matched too, and ``total`` counts clusters and such documents among the matches
    (``total_estimated`` when the clusters were too many to count exactly, see :func:`counted_clusters`).
    """
    query = _user_query(q, shown)
    if cluster is not None:
        query = {"bool": {"must": query, "filter": {"term": {_CLUSTER: cluster}}}}
    # every page of one query read from the same shard copies: hits of equal sort values then fall in one order from
    # page to page, and none is shown twice or skipped
    preference = "neardup-search-" + hashlib.sha256(json.dumps(query, sort_keys=True).encode()).hexdigest()[:16]
    if hide_duplicates:
        return _one_per_cluster(client, index, query, size, from_, preference, shown)
    resp = _search(
        client,
        index=index,
        preference=preference,
        query=query,
        sort=_ORDER,
        size=size,
        from_=from_,
        source_includes=[*shown.source, *_HIT_FIELDS],
        highlight=_highlight(shown),
        track_total_hits=True,
    )
    hits = [_hit(h, 0, shown) for h in resp["hits"]["hits"]]
    return {
        "total": int(resp["hits"]["total"]["value"]),
        "total_estimated": False,
        "hide_duplicates": False,
        "hits": hits,
    }


def _one_per_cluster(
    client: Elasticsearch, index: str, query: dict[str, Any], size: int, from_: int, preference: str, shown: Shown
) -> dict[str, Any]:
    """The page of :func:`search` that hides near duplicates.

    Elasticsearch's ``collapse`` puts every document without the collapse field into one group, so the matches
    are read in two parts, each up to the end of the page in ids and sort values only: the documents with a
    cluster collapsed on it, and those without one as they are. The page is cut from both merged in ``_ORDER``,
    then its documents are read with their highlights, and the matches of their clusters counted, by one more
    search."""
    depth = from_ + size
    if size == 0:
        from_ = depth = 0  # the totals alone
    clustered = _search(
        client,
        index=index,
        preference=preference,
        query={"bool": {"must": query, "filter": {"exists": {"field": _CLUSTER}}}},
        collapse={"field": _CLUSTER},
        sort=_ORDER,
        size=depth,
        source=False,
        track_total_hits=False,
        aggs={"clusters": {"cardinality": {"field": _CLUSTER, "precision_threshold": CLUSTER_COUNT_PRECISION}}},
    )
    loose = _search(
        client,
        index=index,
        preference=preference,
        query={"bool": {"must": query, "must_not": {"exists": {"field": _CLUSTER}}}},
        sort=_ORDER,
        size=depth,
        source=False,
        track_total_hits=True,
    )
    distinct, estimated = counted_clusters(clustered["aggregations"]["clusters"])
    total = distinct + int(loose["hits"]["total"]["value"])
    parts = (clustered["hits"]["hits"], loose["hits"]["hits"])
    # each part is in _ORDER already, its ties in Elasticsearch's order: the merge keeps both
    merged = sorted(
        ((part, rank) for part in range(2) for rank in range(len(parts[part]))),
        key=lambda at: (*_sort_key(parts[at[0]][at[1]]["sort"]), *at),
    )
    page = [parts[part][rank] for part, rank in merged[from_:depth]]
    if not page:
        return {"total": total, "total_estimated": estimated, "hide_duplicates": True, "hits": []}
    clusters = sorted({h["fields"][_CLUSTER][0] for h in page if h.get("fields", {}).get(_CLUSTER)})
    # the page's documents (each in its own index: behind an alias one id may be in several) with their highlights;
    # the aggregation counts what matched in each of their clusters, before the post filter leaves the page alone
    where = [{"bool": {"filter": [{"ids": {"values": [h["_id"]]}}, {"term": {"_index": h["_index"]}}]}} for h in page]
    scope: list[dict[str, Any]] = list(where)
    counted = None
    if clusters:
        scope.append({"terms": {_CLUSTER: clusters}})
        counted = {"matched": {"terms": {"field": _CLUSTER, "include": clusters, "size": len(clusters)}}}
    read = _search(
        client,
        index=index,
        preference=preference,
        query={"bool": {"must": query, "filter": {"bool": {"should": scope}}}},
        post_filter={"bool": {"should": where}},
        size=len(page),
        source_includes=[*shown.source, *_HIT_FIELDS],
        highlight=_highlight(shown),
        track_total_hits=False,
        aggs=counted,
    )
    buckets = read.get("aggregations", {}).get("matched", {}).get("buckets", [])
    matched = {b["key"]: int(b["doc_count"]) for b in buckets}
    found = {(h["_index"], h["_id"]): h for h in read["hits"]["hits"]}
    hits = []
    for h in page:
        got = found.get((h["_index"], h["_id"]))
        if got is None:  # deleted between the searches
            continue
        key = (h.get("fields", {}).get(_CLUSTER) or [None])[0]
        hits.append(_hit({**got, "_score": h["_score"]}, max(0, matched.get(key, 1) - 1) if key else 0, shown))
    return {"total": total, "total_estimated": estimated, "hide_duplicates": True, "hits": hits}


def _sort_key(values: list[Any]) -> tuple[float, int, int]:
    """A hit's ``_ORDER`` sort values as one ascending key (Elasticsearch gives a missing value as the largest)."""
    score, duplicate, written = values
    return (-float(score), int(duplicate), int(written))


def _hit(h: dict[str, Any], hidden: int, shown: Shown) -> dict[str, Any]:
    src = h.get("_source") or {}
    nd = src.get(schema.ROOT) or {}
    text = shown.text(src) or ""
    return {
        "id": h["_id"],
        "score": h.get("_score"),
        "cluster": nd.get(schema.CLUSTER),
        "duplicate_of": nd.get(schema.DUPLICATE_OF),
        "duplicates_hidden": hidden,
        "title": shown.label(src),
        "text": text[:_SNIPPET] + ("…" if len(text) > _SNIPPET else ""),
        "highlight": h.get("highlight", {}),
    }


def list_clusters(client: Elasticsearch, index: str, min_size: int, size: int, shown: Shown = _TEXTS) -> dict[str, Any]:
    """Largest clusters first (ties by cluster id), each with its canonical document's title (a record's
    :meth:`~neardup.es.shown.Shown.label`)."""
    resp = _search(
        client,
        index=index,
        size=0,
        track_total_hits=True,
        aggs={
            "clusters": {
                "terms": {
                    "field": _CLUSTER,
                    "size": size,
                    "min_doc_count": min_size,
                    "order": [{"_count": "desc"}, {"_key": "asc"}],
                }
            },
            "all_clusters": {"cardinality": {"field": _CLUSTER, "precision_threshold": CLUSTER_COUNT_PRECISION}},
            "duplicates": {"filter": {"term": {_IS_DUPLICATE: True}}},
        },
    )
    buckets = resp["aggregations"]["clusters"]["buckets"]
    titles: dict[str, Any] = {}
    if buckets:  # by a search, which reads through any alias (a get reads through an alias of one index only)
        keys = [b["key"] for b in buckets]
        found = _search(
            client,
            index=index,
            query={"ids": {"values": keys}},
            # room for an id in several of the indices behind an alias
            size=min(MAX_RESULT_WINDOW, len(keys) * _ALIAS_COPIES),
            source_includes=shown.label_source,
            track_total_hits=False,
        )["hits"]["hits"]
        for h in found:
            titles.setdefault(h["_id"], shown.label(h.get("_source") or {}))
    clusters_total, estimated = counted_clusters(resp["aggregations"]["all_clusters"])
    return {
        "documents": int(resp["hits"]["total"]["value"]),
        "clusters_total": clusters_total,
        "clusters_total_estimated": estimated,
        "duplicates": int(resp["aggregations"]["duplicates"]["doc_count"]),
        "clusters": [{"cluster": b["key"], "size": b["doc_count"], "title": titles.get(b["key"])} for b in buckets],
    }


def get_cluster(
    client: Elasticsearch,
    index: str,
    cluster: str,
    size: int = 100,
    from_: int = 0,
    text_chars: int | None = None,
    shown: Shown = _TEXTS,
) -> dict[str, Any] | None:
    """A page of one cluster's members: the canonical first, then by ``neardup.indexed_at``, each with its
    distance to the canonical and to the document it was matched to; ``size`` in the answer counts every member.
    ``text_chars`` cuts each text to that many characters (0: no text), ``text_length`` is its whole length; a
    record's text and title are its fields' (:class:`~neardup.es.shown.Shown`). None when no document has that
    cluster id."""
    # a text document's title alone when no text is wanted; a record's fields are few and short, and name it
    fields = [*_MEMBER_FIELDS, *(shown.label_source if text_chars == 0 else shown.source)]
    resp = _search(
        client,
        index=index,
        # the canonical (the document the cluster is named by) scores 1, the others 0: it leads the first page
        query={
            "bool": {
                "filter": [{"term": {_CLUSTER: cluster}}],
                "should": [{"constant_score": {"filter": {"ids": {"values": [cluster]}}}}],
            }
        },
        size=size,
        from_=from_,
        sort=["_score", {_INDEXED_AT: {"order": "asc", "unmapped_type": "date"}}],
        source_includes=fields,
        track_total_hits=True,
        # the same shard copies for every page of a cluster: ties (a dedupe gives one time to every document it
        # first sees) then fall in one order from page to page
        preference=f"neardup-cluster-{cluster}",
    )
    total = int(resp["hits"]["total"]["value"])
    if not total:
        return None
    hits = resp["hits"]["hits"]
    canonical_fp = _first_fingerprint(next((h["_source"] for h in hits if h["_id"] == cluster), None))
    if canonical_fp is None and from_ > 0:  # the canonical is on the first page; a search reads through any alias
        found = _search(
            client, index=index, query={"ids": {"values": [cluster]}}, size=1, source_includes=[_FINGERPRINT]
        )
        canonical_fp = _first_fingerprint(next((h["_source"] for h in found["hits"]["hits"]), None))
    members = []
    for h in hits:
        src = h["_source"]
        nd = src.get(schema.ROOT) or {}
        fp = _first_fingerprint(src)
        text = None if text_chars == 0 else shown.text(src)
        members.append(
            {
                "id": h["_id"],
                "title": shown.label(src),
                "text": text if text is None or text_chars is None else text[:text_chars],
                "text_length": None if text is None else len(text),
                "canonical": h["_id"] == cluster,
                "duplicate_of": nd.get(schema.DUPLICATE_OF),
                "distance": nd.get(schema.DISTANCE),
                "similarity": nd.get(schema.SIMILARITY),
                "distance_to_canonical": None if fp is None or canonical_fp is None else hamming(fp, canonical_fp),
                "indexed_at": nd.get(schema.INDEXED_AT),
                "status": nd.get(schema.STATUS),
            }
        )
    return {"cluster": cluster, "size": total, "members": members}


def _first_fingerprint(source: dict[str, Any] | None) -> int | None:
    """The first-seed fingerprint a document's ``_source`` holds (unsigned), if any."""
    fps = ((source or {}).get(schema.ROOT) or {}).get(schema.FINGERPRINT) or []
    return to_unsigned(int(fps[0])) if fps else None


def overview(client: Elasticsearch, index: str, max_clusters: int = 10000) -> dict[str, Any]:
    """Numbers for the overview charts: documents, clusters, duplicate share, cluster-size
    distribution (clusters per size, over the ``max_clusters`` largest; ``sizes_complete`` when no cluster was
    left out), duplicates over time."""
    head = _search(
        client,
        index=index,
        size=0,
        track_total_hits=True,
        aggs={
            "clusters": {"cardinality": {"field": _CLUSTER, "precision_threshold": CLUSTER_COUNT_PRECISION}},
            "duplicates": {"filter": {"term": {_IS_DUPLICATE: True}}},
            "span": {"stats": {"field": _INDEXED_AT}},
            "sizes": {"terms": {"field": _CLUSTER, "size": max_clusters, "min_doc_count": 1}},
        },
    )
    aggs = head["aggregations"]
    total = int(head["hits"]["total"]["value"])
    by_size: dict[int, int] = {}
    for b in aggs["sizes"]["buckets"]:
        by_size[int(b["doc_count"])] = by_size.get(int(b["doc_count"]), 0) + 1
    timeline: list[dict[str, Any]] = []
    span = aggs["span"]
    if span.get("count"):
        interval = _interval(float(span["max"]) - float(span["min"]))
        resp = _search(
            client,
            index=index,
            size=0,
            aggs={
                "t": {
                    "date_histogram": {"field": _INDEXED_AT, "fixed_interval": interval, "min_doc_count": 0},
                    "aggs": {"dups": {"filter": {"term": {_IS_DUPLICATE: True}}}},
                }
            },
        )
        timeline = [
            {"time": b["key_as_string"], "documents": b["doc_count"], "duplicates": b["dups"]["doc_count"]}
            for b in resp["aggregations"]["t"]["buckets"]
        ]
    duplicates = int(aggs["duplicates"]["doc_count"])
    clusters, estimated = counted_clusters(aggs["clusters"])
    return {
        "documents": total,
        "clusters": clusters,
        "clusters_estimated": estimated,
        "duplicates": duplicates,
        "duplicate_share": duplicates / total if total else 0.0,
        "cluster_sizes": [{"size": s, "clusters": c} for s, c in sorted(by_size.items())],
        "sizes_complete": int(aggs["sizes"].get("sum_other_doc_count", 0)) == 0,
        "timeline": timeline,
    }


def _interval(span_ms: float) -> str:
    """A fixed interval giving at most ~60 buckets.

    >>> _interval(30_000), _interval(3 * 3600_000), _interval(40 * 86400_000)
    ('1s', '5m', '1d')
    """
    for name, ms in (
        ("1s", 1000),
        ("10s", 10_000),
        ("1m", 60_000),
        ("5m", 300_000),
        ("1h", 3600_000),
        ("6h", 21600_000),
        ("1d", 86400_000),
        ("7d", 604800_000),
        ("30d", 2592000_000),
    ):
        if span_ms / ms <= 60:
            return name
    return "365d"

"""Ingest-time duplicate flagging: fingerprint → candidates → verify → assign → write.

Each document of a batch joins the cluster of its best verified match — among documents already in
Elasticsearch and earlier documents of the same batch (Elasticsearch sees a document only after a
refresh) — provided it still resembles that cluster's canonical document (the drift guard of
:func:`neardup.ingest.verify.close_to_canonical`). Otherwise it starts a cluster named by its own id.
The order of preference is the offline algorithm's (:func:`neardup.ingest.cluster.assign`): higher
sketch similarity, then smaller Hamming distance, then the earlier document.

Writes go through ``helpers.streaming_bulk`` with its retry arguments; every item's outcome comes back.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
from elasticsearch import ConnectionError as ESConnectionError
from elasticsearch import ConnectionTimeout, Elasticsearch, helpers

from .ingest.cluster import candidate_pairs
from .ingest.fingerprint import Fingerprinter, Record
from .ingest.verify import Comparable, Match, VerifyConfig, close_to_canonical, verify
from .lookup import SOURCE_FIELDS, Stored, search_candidates

__all__ = [
    "Assigned",
    "Incoming",
    "IngestConfig",
    "ItemResult",
    "assign_batch",
    "index_batch",
    "neardup_fields",
    "timestamp_ns",
]


@dataclass(frozen=True)
class Incoming:
    """One document to ingest: its id, title, text and the user's other fields (stored as given)."""

    id: str
    text: str | None  # None for a structured record (its fields are all in ``source``)
    title: str | None = None
    source: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class IngestConfig:
    verify: VerifyConfig = field(default_factory=VerifyConfig)
    max_candidates: int = 500
    refresh: str = "wait_for"
    bulk_retries: int = 3
    chunk_size: int = 500


@dataclass(frozen=True)
class Assigned:
    cluster: str
    duplicate_of: str | None
    match: Match | None


@dataclass(frozen=True)
class ItemResult:
    """What happened to one posted document (the ``items`` of the documents endpoint)."""

    id: str
    status: str  # "created", "updated" or "error"
    cluster: str | None
    duplicate_of: str | None
    distance: int | None
    similarity: float | None
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "status": self.status,
            "cluster": self.cluster,
            "duplicate_of": self.duplicate_of,
            "distance": self.distance,
            "similarity": None if self.similarity is None else round(self.similarity, 4),
        }
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass
class _Option:
    match: Match
    rank: tuple[int, tuple[str, str] | int]  # stored documents come before this batch's
    target_id: str
    cluster: str
    canonical: Comparable | None


def _in_batch_matches(records: Sequence[Record], config: VerifyConfig) -> dict[int, list[tuple[int, Match]]]:
    """Verified pairs inside the batch: later position → [(earlier position, match)]."""
    n = len(records)
    valid = np.fromiter((r.status == "ok" for r in records), dtype=bool, count=n)
    out: dict[int, list[tuple[int, Match]]] = {}
    pairs: list[tuple[int, int]] = []
    if valid.sum() > 1:
        width = max(len(r.fingerprints) for r in records if r.status == "ok")
        fps = np.zeros((n, width), dtype=np.uint64)
        for k, r in enumerate(records):
            if r.status == "ok":
                fps[k, : len(r.fingerprints)] = r.fingerprints
        i, j = candidate_pairs(fps, valid)
        pairs.extend(zip(i.tolist(), j.tolist(), strict=True))
    first_exact: dict[str, int] = {}
    for k, r in enumerate(records):
        if r.status == "too_short":
            first = first_exact.setdefault(r.exact, k)
            if first != k:
                pairs.append((first, k))
    for a, b in pairs:
        match = verify(records[b], records[a], config)
        if match is not None:
            out.setdefault(b, []).append((a, match))
    return out


def _fetch(client: Elasticsearch, index: str, ids: Sequence[str]) -> dict[str, Stored]:
    if not ids:
        return {}
    resp = client.mget(index=index, ids=list(ids), source=SOURCE_FIELDS)
    return {d["_id"]: Stored.from_hit(d) for d in resp["docs"] if d.get("found")}


def assign_batch(
    client: Elasticsearch, index: str, ids: Sequence[str], records: Sequence[Record], config: IngestConfig
) -> list[Assigned]:
    """Cluster assignment for a batch of fingerprinted documents (positions follow ``ids``)."""
    batch_ids = set(ids)
    stored = search_candidates(client, index, records, config.max_candidates, [[i] for i in ids])
    es_matches: list[list[tuple[Stored, Match]]] = []
    wanted: set[str] = set()
    known: dict[str, Stored] = {}
    for rec, cands in zip(records, stored, strict=True):
        kept = []
        for doc in cands:
            if doc.id in batch_ids:
                continue  # re-posted in this batch: its stored version is stale
            known[doc.id] = doc
            match = verify(rec, doc, config.verify)
            if match is not None:
                kept.append((doc, match))
                wanted.add(doc.cluster or doc.id)
        es_matches.append(kept)
    canon = known | _fetch(client, index, sorted(wanted - known.keys() - batch_ids))
    inner = _in_batch_matches(records, config.verify)

    out: list[Assigned] = []
    canonical_of: list[str] = []  # per position: its cluster's canonical id
    position = {doc_id: k for k, doc_id in enumerate(ids)}
    for k, rec in enumerate(records):
        options: list[_Option] = []
        for doc, match in es_matches[k]:
            cluster = doc.cluster or doc.id
            options.append(_Option(match, (0, doc.order), doc.id, cluster, canon.get(cluster)))
        for m, match in inner.get(k, []):
            cluster = canonical_of[m]
            where = position.get(cluster)
            canonical = records[where] if where is not None and where < k else canon.get(cluster)
            options.append(_Option(match, (1, m), ids[m], cluster, canonical))
        options.sort(key=lambda o: (-o.match.similarity, o.match.distance, o.rank))
        chosen = Assigned(ids[k], None, None)
        for o in options:
            if o.cluster == o.target_id or o.canonical is None or close_to_canonical(rec, o.canonical, config.verify):
                chosen = Assigned(o.cluster, o.target_id, o.match)
                break
        out.append(chosen)
        canonical_of.append(chosen.cluster)
    return out


def timestamp_ns(ns: int) -> str:
    """An ISO-8601 UTC timestamp with nanoseconds (field ``neardup.indexed_at`` is ``date_nanos``);
    equal-length strings, so text order is time order.

    >>> timestamp_ns(1_700_000_000_123_456_789)
    '2023-11-14T22:13:20.123456789Z'
    """
    seconds, nanos = divmod(ns, 1_000_000_000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos:09d}Z"


def neardup_fields(record: Record, assigned: Assigned, indexed_at: str) -> dict[str, Any]:
    """Every ``neardup.*`` field of one document."""
    m = assigned.match
    fields: dict[str, Any] = dict(record.as_fields())
    return fields | {
        "cluster": assigned.cluster,
        "duplicate_of": assigned.duplicate_of,
        "distance": None if m is None else m.distance,
        "similarity": None if m is None else round(m.similarity, 4),
        "is_duplicate": assigned.duplicate_of is not None,
        "indexed_at": indexed_at,
    }


def index_batch(
    client: Elasticsearch,
    index: str,
    docs: Sequence[Incoming],
    fingerprinter: Fingerprinter,
    config: IngestConfig,
    records: Sequence[Record] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> list[ItemResult]:
    """Flag and write one batch; ``records`` may be given when fingerprints were computed elsewhere
    (e.g. a process pool). Raises the client's ConnectionError when Elasticsearch is unreachable and
    nothing was written; a batch that was partly written reports the failed items."""
    recs = (
        list(records)
        if records is not None
        else fingerprinter.fingerprint_many([(d.text or "", d.title) for d in docs])
    )
    ids = [d.id for d in docs]
    assigned = assign_batch(client, index, ids, recs, config)
    start_ns = time.time_ns()

    def actions() -> Any:
        for k, (doc, rec, a) in enumerate(zip(docs, recs, assigned, strict=True)):
            now = timestamp_ns(start_ns + k)  # distinct and increasing: the batch's order is kept
            body = dict(doc.source)
            if doc.text is not None:
                body["text"] = doc.text
            if doc.title is not None:
                body["title"] = doc.title
            body["neardup"] = neardup_fields(rec, a, now)
            yield {"_op_type": "index", "_index": index, "_id": doc.id, "_source": body}

    results: list[ItemResult] = []
    unreachable: list[Exception] = []
    stream = helpers.streaming_bulk(
        client,
        actions(),
        chunk_size=config.chunk_size,
        max_retries=config.bulk_retries,
        initial_backoff=0.5,
        raise_on_error=False,
        raise_on_exception=False,
        refresh=config.refresh,
    )
    for (ok, item), a in zip(stream, assigned, strict=True):
        info = item.get("index", {})
        m = a.match
        if ok:
            status = "created" if info.get("result") == "created" else "updated"
            results.append(
                ItemResult(
                    str(info.get("_id")),
                    status,
                    a.cluster,
                    a.duplicate_of,
                    None if m is None else m.distance,
                    None if m is None else m.similarity,
                )
            )
        else:
            if isinstance(info.get("exception"), (ESConnectionError, ConnectionTimeout)):
                unreachable.append(info["exception"])
            err = info.get("error")
            reason = err.get("reason", str(err)) if isinstance(err, dict) else str(err)
            results.append(ItemResult(str(info.get("_id")), "error", None, None, None, None, reason))
        if on_progress is not None:
            on_progress(1)
    if unreachable and len(unreachable) == len(results):
        raise unreachable[0]  # nothing was written: Elasticsearch is away (the service answers 503)
    return results

"""Ingest-time duplicate flagging: fingerprint → candidates → verify → assign → write.

Each document of a batch is assigned by the offline clustering's own rule
(:func:`neardup.ingest.cluster.choose`): it joins the cluster of its best verified match, provided it
still resembles that cluster's canonical document, else it starts a cluster named by its own id. This
module only supplies the matches: documents already in Elasticsearch (candidates from
:func:`neardup.es.lookup.search_candidates`, with their stored clusters), documents this process wrote
moments ago (:class:`~neardup.recent.writes.RecentWrites`) and earlier documents of the same batch; the last
two by the offline candidate rule (:func:`neardup.ingest.cluster.record_candidate_pairs`), since
Elasticsearch sees a document only after a refresh. When all else is equal the earlier document ranks first,
by ``indexed_at`` and then id, wherever it was found; a document written again keeps its ``indexed_at``.

Writes go through ``helpers.streaming_bulk`` with its retry arguments; every item's outcome comes back.
A batch is all-or-nothing by default (``IngestConfig.atomic``): when Elasticsearch refuses any item, the
items written before are put back as they were (deleted, or their previous version restored). A
partial batch (``atomic=False``) keeps what was written, and the written documents are assigned again
without the refused ones, so no ``cluster`` or ``duplicate_of`` names a document that was not written; one whose
second write fails too, and whose first names a refused document, is answered as an error (send it again).
When Elasticsearch goes away (or does not answer in time) after a first chunk was written, the documents no answer
came for are refused ones (``unanswered``): a chunk it did not answer may be written all the same, so an
all-or-nothing batch undoes them with the written ones, and a partial batch's answer says they may be written (a
chunk Elasticsearch carries out only after the undo stays written: the undo cannot wait for what it was not told). An
all-or-nothing batch that then cannot be undone raises :class:`~neardup.errors.BatchNotUndone`, naming the
documents that may stay written.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from elasticsearch import ApiError as ESApiError
from elasticsearch import ConnectionError as ESConnectionError
from elasticsearch import ConnectionTimeout, Elasticsearch, NotFoundError, TransportError, helpers

from neardup.config import Settings
from neardup.errors import BatchNotUndone, NeardupError
from neardup.incoming.documents import Incoming
from neardup.ingest.cluster import DEFAULT_MIN_SHARED, Option, choose, record_candidate_pairs
from neardup.ingest.fingerprint import Fingerprinter, Record
from neardup.ingest.verify import (
    Comparable,
    Match,
    VerifyConfig,
    close_to_canonical,
    verify,
    verify_many,
    verify_pairs,
)
from neardup.mappings import schema
from neardup.mappings.schema import Stored
from neardup.recent.writes import RecentWrites

from .client import never_sent
from .lookup import search_candidates
from .pipeline import NO_PIPELINE, PipelineMissing, other_version

__all__ = [
    "Assigned",
    "IngestConfig",
    "ItemResult",
    "assign_batch",
    "index_batch",
    "index_batch_in_pipeline",
]


@dataclass(frozen=True)
class IngestConfig:
    verify: VerifyConfig = field(default_factory=VerifyConfig)
    max_candidates: int = Settings.max_candidates
    #: how many (seed, block) tokens a candidate must share (the offline candidate rule's, by default)
    min_shared: int = DEFAULT_MIN_SHARED
    #: Elasticsearch's ``refresh`` for the writes; documents written moments ago are found through
    #: :class:`~neardup.recent.writes.RecentWrites` rather than by waiting for a refresh
    refresh: str = "false"
    #: run the block match and the second check inside Elasticsearch (the cluster has neardup's plugin)
    in_es: bool = False
    bulk_retries: int = 3
    chunk_size: int = 500
    #: all-or-nothing: a batch with a refused item is undone
    atomic: bool = True

    @classmethod
    def from_settings(cls, settings: Settings, **given: Any) -> IngestConfig:
        """What ``settings`` set (``NEARDUP_MAX_CANDIDATES``, ``NEARDUP_MIN_SHARED``), and the rest as ``given``:
        the service and every command that flags take the same settings from here."""
        return cls(max_candidates=settings.max_candidates, min_shared=settings.min_shared, **given)


#: the error type of a bulk item no answer came for (not one of Elasticsearch's)
_NO_ANSWER = "no_answer"
_NO_ANSWER_REASON = (
    "no answer came from Elasticsearch for this document (it became unreachable, or did not answer in time)"
)


@dataclass(frozen=True)
class Assigned:
    cluster: str
    duplicate_of: str | None
    match: Match | None


@dataclass(frozen=True)
class ItemResult:
    """What happened to one posted document (the ``items`` of the documents endpoint)."""

    id: str
    status: str  # "created", "updated", "error" or "not_written" (undone: another item was refused)
    cluster: str | None
    duplicate_of: str | None
    distance: int | None
    similarity: float | None
    error: str | None = None
    #: Elasticsearch's status for a refused item
    error_status: int | None = None
    #: no answer came for it (Elasticsearch went away, or did not answer in time): it may be written or not
    unanswered: bool = False

    @property
    def written(self) -> bool:
        return self.status in ("created", "updated")

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "status": self.status,
            "cluster": self.cluster,
            "duplicate_of": self.duplicate_of,
            "distance": self.distance,
            "similarity": None if self.similarity is None else schema.rounded_similarity(self.similarity),
        }
        if self.error is not None:
            out["error"] = self.error
        return out


def _fetch(client: Elasticsearch, index: str, ids: Sequence[str]) -> dict[str, Stored]:
    if not ids:
        return {}
    resp = client.mget(index=index, ids=list(ids), source=schema.LOOKUP_FIELDS)
    return {d["_id"]: Stored.from_hit(d) for d in resp["docs"] if d.get("found")}


def assign_batch(
    client: Elasticsearch,
    index: str,
    ids: Sequence[str],
    records: Sequence[Record],
    times: Sequence[str],
    config: IngestConfig,
    recent: Sequence[Stored] = (),
) -> list[Assigned]:
    """Cluster assignment for a batch of fingerprinted documents (positions follow ``ids``), each with the
    ``indexed_at`` it is written with (``times``).

    The batch's documents are assigned in document order (``indexed_at``, then id), as the offline clustering and
    ``reconcile`` take them: a document sent again keeps its time and comes before the new ones.

    ``recent``: documents written moments ago that a search may not see yet (see
    :mod:`neardup.recent.writes`); they are candidates as stored documents are, by the offline candidate
    rule, and replace a search hit of the same id."""
    order = sorted(range(len(ids)), key=lambda k: (times[k], ids[k]))
    ids, records, times = [ids[k] for k in order], [records[k] for k in order], [times[k] for k in order]
    batch_ids = set(ids)
    prefilter = config.verify if config.in_es else None
    searched = search_candidates(
        client, index, records, config.max_candidates, [[i] for i in ids], config.min_shared, prefilter
    )
    versions = {r.version for r in records}
    fresh = [d for d in recent if d.id not in batch_ids and d.version in versions]
    fresh_ids = {d.id for d in fresh}
    n_fresh = len(fresh)
    pool: list[Record | Stored] = [*fresh, *records]
    ci, cj = record_candidate_pairs(pool, _seeds, min_shared=config.min_shared)
    later = cj >= n_fresh  # pairs among the recent documents themselves are not this batch's to check
    ci, cj = ci[later], cj[later]

    es_matches: list[list[tuple[Stored, Match]]] = []
    wanted: set[str] = set()
    known: dict[str, Stored] = {d.id: d for d in fresh}
    for rec, found in zip(records, searched, strict=True):
        cands = [doc for doc in found if doc.id not in batch_ids and doc.id not in fresh_ids]
        kept = []
        for doc, match in zip(cands, verify_many(rec, cands, config.verify), strict=True):
            known.setdefault(doc.id, doc)
            if match is not None:
                kept.append((doc, match))
                wanted.add(doc.cluster or doc.id)
        es_matches.append(kept)
    inner: dict[int, list[tuple[int, Match]]] = {}
    for a, b, match in zip(ci.tolist(), cj.tolist(), verify_pairs(pool, ci, cj, config.verify), strict=True):
        if match is None:
            continue
        if a < n_fresh:  # a recent document: a stored one, as a search would have found it
            es_matches[b - n_fresh].append((fresh[a], match))
            wanted.add(fresh[a].cluster or fresh[a].id)
        else:
            inner.setdefault(b - n_fresh, []).append((a - n_fresh, match))
    canon = known | _fetch(client, index, sorted(wanted - known.keys() - batch_ids))

    out: list[Assigned] = []
    position = {doc_id: k for k, doc_id in enumerate(ids)}
    for k, rec in enumerate(records):
        options: list[Option[str]] = [
            Option(doc.id, doc.cluster or doc.id, match, doc.order) for doc, match in es_matches[k]
        ]
        options += [Option(ids[m], out[m].cluster, match, (times[m], ids[m])) for m, match in inner.get(k, [])]

        def may_join(option: Option[str], k: int = k, rec: Record = rec) -> bool:
            where = position.get(option.cluster)
            canonical: Comparable | None = (
                records[where] if where is not None and where < k else canon.get(option.cluster)
            )
            # a canonical that is gone from the index cannot guard its cluster: the match alone decides
            return canonical is None or close_to_canonical(rec, canonical, config.verify)

        chosen = choose(options, may_join, own=ids[k], before=(times[k], ids[k]))
        out.append(
            Assigned(ids[k], None, None) if chosen is None else Assigned(chosen.cluster, chosen.target, chosen.match)
        )
    by_position = dict(zip(order, out, strict=True))  # back to the order the batch came in
    return [by_position[k] for k in range(len(ids))]


def _seeds(record: Record | Stored) -> Sequence[int]:
    return record.fingerprints


def _check_distinct(ids: Iterable[str]) -> None:
    """ValueError naming the first id a batch holds twice: such a document would be assigned to its own copy, and
    the two items' answers would be one.

    >>> _check_distinct(["a", "b", "a"])
    Traceback (most recent call last):
    ...
    ValueError: the batch names document 'a' twice; write its copies in separate batches
    """
    seen: set[str] = set()
    for doc_id in ids:
        if doc_id in seen:
            raise ValueError(f"the batch names document {doc_id!r} twice; write its copies in separate batches")
        seen.add(doc_id)


def index_batch(
    client: Elasticsearch,
    index: str,
    docs: Sequence[Incoming],
    fingerprinter: Fingerprinter,
    config: IngestConfig,
    records: Sequence[Record] | None = None,
    on_progress: Callable[[int], None] | None = None,
    recent: RecentWrites | None = None,
) -> list[ItemResult]:
    """Flag and write one batch; ``records`` may be given when fingerprints were computed elsewhere
    (e.g. a process pool). ``recent`` supplies (and then holds) documents written moments ago, so
    back-to-back batches find each other without waiting for a refresh. Raises the client's
    ConnectionError when Elasticsearch is unreachable and nothing was written. Refused items come back
    as ``error``; see the module doc for the rest. Ids must be distinct (:func:`_check_distinct`)."""
    _check_distinct(d.id for d in docs)
    recs = (
        list(records)
        if records is not None
        else fingerprinter.fingerprint_many([(d.text or "", d.title) for d in docs])
    )
    ids = [d.id for d in docs]
    # an all-or-nothing batch keeps whole documents to put back; a partial one reads what _times compares
    previous = _previous_versions(client, index, ids) if config.atomic else {}
    stored = previous if config.atomic else _previous_versions(client, index, ids, schema.LOOKUP_FIELDS)
    fresh = recent.documents(index) if recent is not None else []
    times = _times(ids, recs, stored, time.time_ns(), config.verify)
    assigned = assign_batch(client, index, ids, recs, times, config, fresh)
    results = _write(client, index, docs, recs, assigned, times, config, on_progress)

    def again(kept: list[int]) -> list[ItemResult]:
        return index_batch(
            client, index, [docs[k] for k in kept], fingerprinter, config, [recs[k] for k in kept], None, recent
        )

    settled = _settle_refusals(client, index, results, previous, config, again)
    if settled is not None:
        return settled
    written = [k for k, r in enumerate(results) if r.written]
    if recent is not None:
        recent.remember(index, (Stored.written(ids[k], recs[k], assigned[k].cluster, times[k]) for k in written))
    return results


def index_batch_in_pipeline(
    client: Elasticsearch,
    index: str,
    docs: Sequence[Incoming],
    pipeline: str,
    fingerprinter: Fingerprinter,
    config: IngestConfig,
    fingerprint: Callable[[Sequence[Incoming]], Sequence[Record]],
) -> list[ItemResult]:
    """Write one batch through the cluster's flagging ``pipeline`` (``neardup-flag``, see
    :mod:`neardup.es.pipeline`): Elasticsearch fingerprints and assigns each document by the rule
    :func:`index_batch` applies here, with its node's window of documents written moments ago; the stored
    assignments are then read back by a real-time ``mget``, which sees a write before any refresh. The answer is
    :func:`index_batch`'s, with these ways back to it (``fingerprint``: the records it is given, the processor's):

    - a batch naming a document the index holds goes through :func:`index_batch` itself: the processor excludes
      only a document's own id from its candidates, where this rule excludes every id of the batch (a re-sent
      batch would otherwise find the stored copies of its members);
    - a refused item: an atomic batch is undone; a partial one is assigned again by :func:`index_batch` when a
      written document was put in a refused one's cluster (the processor's window still offers the refused one).

    Raises :class:`~neardup.es.pipeline.PipelineMissing` (nothing written) when the cluster has no ``pipeline``,
    and :class:`~neardup.errors.ClusterFingerprintFailed` (the batch undone) when the processor wrote another
    fingerprint version than ``fingerprinter``'s. Ids must be distinct, as for :func:`index_batch`."""
    ids = [d.id for d in docs]
    _check_distinct(ids)
    if _existing(client, index, ids):
        client.indices.refresh(index=index)  # what the pipeline wrote moments ago, which this worker never saw
        return index_batch(client, index, docs, fingerprinter, config, fingerprint(docs))
    actions = [{"_op_type": "index", "_index": index, "_id": d.id, "_source": d.body()} for d in docs]
    outcomes = _bulk_once(client, actions, config, pipeline)
    if outcomes and all(not ok and _no_such_pipeline(info, pipeline) for ok, info in outcomes):
        raise PipelineMissing(pipeline)
    written = [k for k, (ok, _) in enumerate(outcomes) if ok]
    try:
        stored, unread = _read_back(client, index, [ids[k] for k in written])
    except (TransportError, ESApiError):  # Elasticsearch lost, busy, or the index gone in between
        stored, unread = {}, {ids[k] for k in written}
    # written, with assignments that cannot be read: what no answer came for (undone below when atomic)
    outcomes = [_unanswered(ids[k]) if ok and ids[k] in unread else (ok, info) for k, (ok, info) in enumerate(outcomes)]
    wrong = {v for _, v in stored.values()} - {fingerprinter.version}
    if wrong:
        _undo(client, index, [ids[k] for k in written], {}, config)
        raise other_version(wrong, fingerprinter.version)
    results = [_read_item(ids[k], ok, info, stored) for k, (ok, info) in enumerate(outcomes)]

    def again(kept: list[int]) -> list[ItemResult]:
        client.indices.refresh(index=index)  # the earlier batches the pipeline wrote, for the second pass's search
        kept_docs = [docs[k] for k in kept]
        return index_batch(client, index, kept_docs, fingerprinter, config, fingerprint(kept_docs))

    # all new (see above): an undo deletes them
    settled = _settle_refusals(client, index, results, {}, config, again)
    return results if settled is None else settled


def _settle_refusals(
    client: Elasticsearch,
    index: str,
    results: list[ItemResult],
    previous: dict[str, dict[str, Any]],
    config: IngestConfig,
    again: Callable[[list[int]], list[ItemResult]],
) -> list[ItemResult] | None:
    """The answer to a batch with refused items, or None when ``results`` stand as they are: an atomic batch is
    undone (its written documents put back as ``previous`` holds them); in a partial one where a written document
    names a refused one as its cluster or original, the written documents (their positions) are assigned and
    written ``again`` without the refused ones, each keeping the status of its first write."""
    refused = {r.id for r in results if r.status == "error"}
    if not refused:
        return None
    if config.atomic:  # what may be written is undone too: putting back or deleting what was not changes nothing
        _undo(client, index, [r.id for r in results if r.written or r.unanswered], previous, config)
        return [
            ItemResult(r.id, "not_written", None, None, None, None)
            if r.written
            else replace(r, error=f"{_NO_ANSWER_REASON}; undone with the batch")
            if r.unanswered
            else r
            for r in results
        ]
    if not any({r.cluster, r.duplicate_of} & refused for r in results if r.written):
        return None
    redone = {r.id: r for r in again([k for k, r in enumerate(results) if r.written])}

    def settled(r: ItemResult) -> ItemResult:
        second = redone.get(r.id)
        if second is None:
            return r
        if second.status != "error":
            return replace(second, status=r.status)
        named = sorted(i for i in (r.cluster, r.duplicate_of) if i is not None and i in refused)
        if not named:  # its first write stands: it names no refused document
            return r
        # written, but naming a document that was not: an error, so that the client sends it again
        return replace(
            second,
            error=f"written naming {named[0]!r}, which was refused, and writing it again without it failed "
            f"({second.error}): send it again",
        )

    return [settled(r) for r in results]


def _read_item(
    doc_id: str, ok: bool, info: dict[str, Any], stored: dict[str, tuple[tuple[Any, ...], str]]
) -> ItemResult:
    """A bulk item of the pipeline's write, with the assignment :func:`_read_back` found for it."""
    if not ok:
        return _item(ok, info, None, None, None, None)
    if doc_id not in stored:
        return _refused(
            doc_id, "written, then gone when read back (a final pipeline dropped it, or it was deleted)", None
        )
    return _item(ok, info, *stored[doc_id][0])


def _no_such_pipeline(info: dict[str, Any], pipeline: str) -> bool:
    error = info.get("error")
    reason = str(error.get("reason", "")) if isinstance(error, dict) else str(error)
    return f"pipeline with id [{pipeline}] does not exist" in reason


def _read_back(
    client: Elasticsearch, index: str, ids: Sequence[str]
) -> tuple[dict[str, tuple[tuple[Any, ...], str]], set[str]]:
    """Per id found: (its stored assignment as :func:`~neardup.mappings.schema.assignment_of` gives it, its
    fingerprint version); and the ids Elasticsearch could not read (no copy of their shard answered)."""
    if not ids:
        return {}, set()
    resp = client.mget(index=index, ids=list(ids), source=[*schema.ASSIGNMENT_PATHS, schema.path(schema.VERSION)])
    stored = {
        d["_id"]: (schema.assignment_of(d["_source"]), str((d["_source"].get(schema.ROOT) or {}).get(schema.VERSION)))
        for d in resp["docs"]
        if d.get("found")
    }
    return stored, {str(d.get("_id")) for d in resp["docs"] if "error" in d}


def _existing(client: Elasticsearch, index: str, ids: Sequence[str]) -> bool:
    """Does the index hold any of ``ids`` (a real-time read, no ``_source``)?"""
    try:
        resp = client.mget(index=index, ids=list(ids), source=False)
    except NotFoundError:
        return False  # no index yet
    return any(d.get("found") for d in resp["docs"])


#: an ``indexed_at`` as :func:`schema.timestamp` writes it, whose text order is time order
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z")


def _previous_versions(
    client: Elasticsearch, index: str, ids: Sequence[str], fields: list[str] | None = None
) -> dict[str, dict[str, Any]]:
    """The stored ``_source`` of those of ``ids`` that exist (only ``fields`` of it, when given), to put back if the
    batch is undone."""
    try:
        resp = client.mget(index=index, ids=list(ids), source_includes=fields)
    except NotFoundError:
        return {}  # no index yet: nothing to put back
    return {d["_id"]: d["_source"] for d in resp["docs"] if d.get("found")}


def _times(
    ids: Sequence[str], records: Sequence[Record], stored: dict[str, dict[str, Any]], now_ns: int, config: VerifyConfig
) -> list[str]:
    """Each document's ``indexed_at``: the one it is stored with (:func:`_kept_time`), else one from ``now_ns``
    (distinct and increasing in batch order)."""
    out = []
    for k, (doc_id, rec) in enumerate(zip(ids, records, strict=True)):
        kept = _kept_time(rec, stored[doc_id], config) if doc_id in stored else None
        out.append(kept or schema.timestamp(now_ns + k))
    return out


def _kept_time(record: Record, source: dict[str, Any], config: VerifyConfig) -> str | None:
    """The ``indexed_at`` of a stored document written again as ``record``, when it is still a near-duplicate of
    what is stored (sent again, or edited a little) under the same fingerprint version; None for a new time. A
    document written again so keeps its place in document order, and a later ``reconcile`` does not make a canonical
    the duplicate of a copy indexed after it; a text rewritten into another one is a new document. Fields neardup
    cannot read (a user's own values) and a time of another form than neardup writes compare with nothing."""
    nd = source.get(schema.ROOT)
    if not isinstance(nd, dict) or nd.get(schema.VERSION) != record.version:
        return None
    at = nd.get(schema.INDEXED_AT)
    at = schema.canonical_timestamp(at) if isinstance(at, str) else ""
    if not _TIMESTAMP.fullmatch(at):
        return None
    try:
        before = Stored.from_hit({"_id": "", "_source": source})
    except (ValueError, TypeError):
        return None
    return at if verify(record, before, config) is not None else None


def _undo(
    client: Elasticsearch, index: str, ids: Sequence[str], previous: dict[str, dict[str, Any]], config: IngestConfig
) -> None:
    """Put back what ``ids`` were before this batch: their previous version, or nothing."""
    actions = [
        {"_op_type": "index", "_index": index, "_id": i, "_source": previous[i]}
        if i in previous
        else {"_op_type": "delete", "_index": index, "_id": i}
        for i in ids
    ]
    stream = helpers.streaming_bulk(
        client,
        actions,
        max_retries=config.bulk_retries,
        raise_on_error=False,
        refresh=config.refresh,
        pipeline=NO_PIPELINE,
    )
    try:  # deleting a document that is not there (it was never written) is done
        failed = [item for ok, item in stream if not ok and item.get("delete", {}).get("status") != 404]
    except (ESConnectionError, ConnectionTimeout) as exc:
        raise BatchNotUndone(list(ids)) from exc
    if failed:
        raise NeardupError(f"a refused batch could not be undone for {len(failed)} documents: {failed[0]}")


def _write(
    client: Elasticsearch,
    index: str,
    docs: Sequence[Incoming],
    recs: Sequence[Record],
    assigned: Sequence[Assigned],
    times: Sequence[str],
    config: IngestConfig,
    on_progress: Callable[[int], None] | None,
) -> list[ItemResult]:
    def actions() -> Any:
        for doc, rec, a, now in zip(docs, recs, assigned, times, strict=True):
            body = doc.body()
            body[schema.ROOT] = (
                schema.record_fields(rec)
                | schema.assignment_fields(a.cluster, a.duplicate_of, a.match)
                | {schema.INDEXED_AT: now}
            )
            yield {"_op_type": "index", "_index": index, "_id": doc.id, "_source": body}

    # fingerprinted and assigned here: an index's default pipeline would redo or undo it
    outcomes = _bulk(client, list(actions()), config, NO_PIPELINE, on_progress)
    return [
        _item(
            ok,
            info,
            a.cluster,
            a.duplicate_of,
            None if a.match is None else a.match.distance,
            None if a.match is None else a.match.similarity,
        )
        for (ok, info), a in zip(outcomes, assigned, strict=True)
    ]


def _bulk_once(
    client: Elasticsearch, actions: Sequence[dict[str, Any]], config: IngestConfig, pipeline: str
) -> list[tuple[bool, dict[str, Any]]]:
    """:func:`_bulk` through the flagging ``pipeline``, never sent twice: after a timeout or a connection lost
    mid-request it may have been carried out, and would come back as a re-sent batch (see
    :func:`index_batch_in_pipeline`), so what it may have written is undone instead. A request that reached no node
    goes to the next (each node once), as the client's own retries would."""
    once = client.options(max_retries=0)
    for _ in range(len(client.transport.node_pool.all()) - 1):
        try:
            return _bulk(once, actions, config, pipeline)
        except (ESConnectionError, ConnectionTimeout):  # raised only when nothing was sent (see _bulk)
            continue  # the node is set aside as dead: the next request goes to another
    return _bulk(once, actions, config, pipeline)


def _unanswered(doc_id: str) -> tuple[bool, dict[str, Any]]:
    """A bulk item no answer came for (:data:`_NO_ANSWER`): it may be written or not."""
    return False, {
        "_id": doc_id,
        "error": {"type": _NO_ANSWER, "reason": f"{_NO_ANSWER_REASON}: it may be written or not"},
    }


def _bulk(
    client: Elasticsearch,
    actions: Sequence[dict[str, Any]],
    config: IngestConfig,
    pipeline: str,
    on_progress: Callable[[int], None] | None = None,
) -> list[tuple[bool, dict[str, Any]]]:
    """Every action's (accepted, bulk item), in the order of ``actions`` (``streaming_bulk`` yields an item it
    retried after the rest of its chunk). Raises the client's ConnectionError when no request reached Elasticsearch
    (:func:`~neardup.es.client.never_sent`), so nothing was written; otherwise, when Elasticsearch goes away or does
    not answer in time, the items no answer came for are refused ones of type :data:`_NO_ANSWER`: those of a chunk
    that was sent may be written all the same, the first chunk's included."""
    by_id: dict[str, tuple[bool, dict[str, Any]]] = {}
    stream = helpers.streaming_bulk(
        client,
        actions,
        chunk_size=config.chunk_size,
        max_retries=config.bulk_retries,
        initial_backoff=0.5,
        raise_on_error=False,
        raise_on_exception=False,
        refresh=config.refresh,
        pipeline=pipeline,
    )
    try:
        for ok, item in stream:
            info = item.get("index", {})
            by_id[str(info.get("_id"))] = (ok, info)
            if on_progress is not None:
                on_progress(1)
    except (ESConnectionError, ConnectionTimeout) as exc:
        if not by_id and never_sent(exc):
            raise  # nothing was written: Elasticsearch is away (the service answers 503)
    return [by_id.get(a["_id"]) or _unanswered(a["_id"]) for a in actions]


def _item(
    ok: bool,
    info: dict[str, Any],
    cluster: str | None,
    duplicate_of: str | None,
    distance: int | None,
    similarity: float | None,
) -> ItemResult:
    """The outcome of one bulk item: written with its assignment, or refused with Elasticsearch's reason."""
    if ok:
        status = "created" if info.get("result") == "created" else "updated"
        return ItemResult(str(info.get("_id")), status, cluster, duplicate_of, distance, similarity)
    err = info.get("error")
    reason = err.get("reason", str(err)) if isinstance(err, dict) else str(err)
    code = info.get("status")
    unanswered = isinstance(err, dict) and err.get("type") == _NO_ANSWER
    return _refused(str(info.get("_id")), reason, code if isinstance(code, int) else None, unanswered)


def _refused(doc_id: str, reason: str, status: int | None, unanswered: bool = False) -> ItemResult:
    return ItemResult(doc_id, "error", None, None, None, None, reason, status, unanswered)

"""Batch work over a whole index: ``dedupe`` (fingerprint what is missing, then cluster) and
``reconcile`` (re-cluster from stored fingerprints alone, no re-tokenising).

Both read the index through a point in time with sliced ``search_after`` scans, and write bulk
partial updates of the ``neardup.*`` fields only where something changed. Both are safe to re-run:

- dedupe stage "fingerprint" skips documents that already carry the current fingerprint version,
  so an interrupted run resumes where it stopped. That version names what was read: the fingerprinter's
  settings, and the text and title fields (or the index's field configuration), so a run that reads
  other fields fingerprints every document again; the fields are kept with the index for reconcile.
  Documents it sees for the first time all get the dedupe's start time as ``indexed_at`` (ties go by
  ``_id``); that time is kept with the index until the stage has read every document, so a run resumed after
  an interruption gives them the same time, and the same clusters, as an uninterrupted one. A document the
  stage read but could not write (a failure it reports) is left to a later run, and gets that run's time;
- stage "cluster" (= reconcile) is the offline algorithm (:func:`neardup.ingest.cluster.cluster_records`)
  over every document in document order — ``neardup.indexed_at``, then ``_id`` — which is the order
  a sequential ingest would have seen them in; it merges clusters that concurrent ingest split.

A text document without a text in the text field (missing, null, a number, a list) is neither fingerprinted nor
clustered, and nothing is written to it: it has no text to compare, and a later run with the right ``--text-field``
finds it unchanged. Dedupe counts them (``no_text``), and refuses an index that has documents but none with a
text there (:class:`NoTextField`), before writing anything: the text is most likely in another field.

Both write a document's fields only onto the copy they were computed from (each update carries the
``_seq_no`` and ``_primary_term`` the scan read, and the document's custom ``_routing``, if it has one, as every
request about one document does). A document written in between is read again: where the
fields the update was computed from are unchanged (another client changed other fields), or hold what the
update itself wrote (a bulk the client sent again after a timeout), the update is sent once more, onto the new
copy; otherwise the document keeps what was written and is counted
(``fingerprint_skipped``, ``assignment_skipped``), not failed. A document deleted in between is counted too
(``fingerprint_gone``, ``assignment_gone``). A later run fingerprints what lacks the
version, as a document written after this run began (its time is that run's), and clusters every document
again.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, overload

import numpy as np
import numpy.typing as npt
import xxhash
from elasticsearch import Elasticsearch, helpers

from neardup.config import Settings
from neardup.errors import UsageError
from neardup.incoming.documents import text_value
from neardup.ingest.cluster import Assignment, cluster_records
from neardup.ingest.fingerprint import Fingerprinter, Record
from neardup.ingest.pool import FingerprintPool
from neardup.ingest.records import RecordConfig, RecordError
from neardup.ingest.verify import Match, VerifyConfig
from neardup.mappings import schema

from .client import of_version, read_index_meta, write_index_meta
from .pipeline import fingerprint_in_pipeline
from .stored_table import CLUSTERED_FROM, StoredTable, TableBuilder

__all__ = [
    "DEFAULT_FIELDS",
    "BatchConfig",
    "NoTextField",
    "Progress",
    "check_text_field",
    "dedupe",
    "read_fields",
    "reconcile",
    "scan",
]

#: the text and title fields documents are read from unless told otherwise (what ingest reads)
DEFAULT_FIELDS = {"text_field": "text", "title_field": "title"}
#: where the fields the last dedupe read are kept with the index (``_meta.neardup.<key>``)
_FIELDS_META = "batch_fields"
#: the start time of a dedupe that has not completed (``_meta.neardup.<key>``)
_STARTED_META = "dedupe_started_at"

#: ``progress(stage, done, total)``; total is None while unknown
Progress = Callable[[str, int, int | None], None]


def _no_progress(stage: str, done: int, total: int | None) -> None:
    """The default progress callback: report nothing."""


class NoTextField(UsageError):
    """A dedupe of text documents found documents, but none with a text in the field it reads: the text is most
    likely in another field, and the dedupe would leave every document out. It refuses before writing anything."""

    def __init__(self, index: str, text_field: str, documents: int) -> None:
        super().__init__(
            f"none of the {documents} documents of {index!r} has a text in field {text_field!r}; nothing was written"
        )
        self.index = index
        self.text_field = text_field
        self.documents = documents


@dataclass(frozen=True)
class BatchConfig:
    verify: VerifyConfig = field(default_factory=VerifyConfig)
    workers: int = 1
    slices: int = 2
    page_size: int = 1000
    bulk_retries: int = 3
    #: concurrent bulk streams writing the cluster assignments (each partial update re-indexes the document)
    write_threads: int = 2
    text_field: str = "text"
    title_field: str = "title"
    #: the index's per-field configuration: documents are fingerprinted as records
    record: RecordConfig | None = None
    #: text documents are fingerprinted by the cluster's ``neardup`` ingest processor (``_simulate`` requests;
    #: the same records, computed in Java inside Elasticsearch) instead of ``workers`` processes here (see
    #: :attr:`fingerprints_in_es`)
    fingerprint_in_es: bool = False

    def version(self, fingerprinter: Fingerprinter) -> str:
        """The fingerprint version this batch writes and reads: the fingerprinter's, plus what is read.

        Records: :meth:`Fingerprinter.record_version` (the field configuration is in it). Text from the
        default fields: the plain :attr:`Fingerprinter.version`, the one ingest writes and posted lookups
        compare with. Text from other fields: the plain version plus ``-f`` and a hash of the fields.

        >>> fp = Fingerprinter.default()
        >>> BatchConfig().version(fp) == fp.version
        True
        >>> body = BatchConfig(text_field="body").version(fp)
        >>> body.startswith(fp.version + "-f"), body == BatchConfig(text_field="body").version(fp)
        (True, True)
        >>> len({body, BatchConfig(title_field="body").version(fp), BatchConfig(text_field="title").version(fp)})
        3
        """
        version: str
        if self.record is not None:
            version = fingerprinter.record_version(self.record)
            return version
        if self.fields() == DEFAULT_FIELDS:
            version = fingerprinter.version
            return version
        read = json.dumps([self.text_field, self.title_field], ensure_ascii=False).encode()
        return f"{fingerprinter.version}-f{xxhash.xxh3_64_hexdigest(read)[:6]}"

    @property
    def fingerprints_in_es(self) -> bool:
        """Whether Elasticsearch fingerprints: asked to, and the documents are texts (the processor reads one text
        field; records are fingerprinted here, by their field configuration).

        >>> BatchConfig(fingerprint_in_es=True).fingerprints_in_es
        True
        >>> records = RecordConfig.parse({"fields": {"a": {"mode": "text"}}})
        >>> BatchConfig(fingerprint_in_es=True, record=records).fingerprints_in_es
        False
        """
        return self.fingerprint_in_es and self.record is None

    def fields(self) -> dict[str, str]:
        """The fields text documents are read from (not used for records, which are read whole)."""
        return {"text_field": self.text_field, "title_field": self.title_field}

    def verify_config(self) -> VerifyConfig:
        return self.verify if self.record is None else self.record.verify_config(self.verify)


#: how long a scan's point in time outlives its last search
_KEEP_ALIVE = "5m"


class _SliceDone:
    """What a slice reader puts on the queue after its last page."""


def scan(
    client: Elasticsearch,
    index: str,
    query: dict[str, Any],
    source: list[str] | bool,
    slices: int,
    page_size: int,
    seq_no: bool = False,
) -> Generator[list[dict[str, Any]], None, None]:
    """Pages of hits of ``query`` over a point in time, ``slices`` slices read by as many threads; with
    ``seq_no``, each hit says where its document stood when read (``_seq_no``, ``_primary_term``).

    Pages are handed over as they arrive, at most two per slice ahead of the consumer, so memory holds a
    few pages whatever the index size, and every slice searches again (which extends the point in time's
    keep-alive) while the consumer is still at work; a consumer slower than the whole read does not
    outlive the point in time. The point in time is closed in any case, even if it expired, and when the consumer
    stops early (closes the generator)."""
    pit = client.open_point_in_time(index=index, keep_alive=_KEEP_ALIVE)["id"]
    pages: queue.Queue[list[dict[str, Any]] | _SliceDone | BaseException] = queue.Queue(maxsize=2 * slices)
    stop = threading.Event()

    def put(item: list[dict[str, Any]] | _SliceDone | BaseException) -> None:
        while not stop.is_set():
            try:
                pages.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def read_slice(slice_id: int) -> None:
        after: list[Any] | None = None
        try:
            while not stop.is_set():
                body: dict[str, Any] = {
                    "query": query,
                    "size": page_size,
                    "_source": source,
                    "pit": {"id": pit, "keep_alive": _KEEP_ALIVE},
                    "sort": [{"_shard_doc": "asc"}],
                    "seq_no_primary_term": seq_no,
                }
                if slices > 1:
                    body["slice"] = {"id": slice_id, "max": slices}
                if after is not None:
                    body["search_after"] = after
                # a page missing a shard's hits would skip its documents for good: all shards or an error
                hits = client.search(**body, allow_partial_search_results=False)["hits"]["hits"]
                if not hits:
                    break
                put(hits)
                after = hits[-1]["sort"]
        except Exception as exc:  # handed to the consumer, which raises it
            put(exc)
            return
        put(_SliceDone())

    readers = [threading.Thread(target=read_slice, args=(k,), daemon=True) for k in range(slices)]
    try:
        for reader in readers:
            reader.start()
        running = slices
        while running:
            item = pages.get()
            if isinstance(item, _SliceDone):
                running -= 1
            elif isinstance(item, BaseException):
                raise item
            else:
                yield item
    finally:
        stop.set()
        for reader in readers:
            if reader.is_alive():
                reader.join()
        client.options(ignore_status=404).close_point_in_time(id=pit)  # 404: it expired


#: a batch bulk request's timeout: 500 partial updates each re-index a document, which can take longer than an
#: interactive request's timeout on a busy node
_BULK_SECONDS = 120.0


class _Update(NamedTuple):
    """A partial update of ``neardup.*``: the document's id, the fields, where the document stood when they were
    computed from it (sequence number, primary term), and the document's custom routing if it has one (on an
    index with custom routing, a request without it looks on another shard, or is refused when routing is
    required)."""

    id: str
    fields: dict[str, Any]
    seen: tuple[int, int]
    routing: str | None = None


def _routings(hits: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The custom routing of each hit that has one, by id (a hit carries ``_routing`` only then).

    >>> _routings([{"_id": "a", "_routing": "k"}, {"_id": "b"}])
    {'a': 'k'}
    """
    return {h["_id"]: h["_routing"] for h in hits if h.get("_routing") is not None}


def _update_action(index: str, update: _Update) -> dict[str, Any]:
    """The bulk action of one :class:`_Update`: it applies only to the copy of the document the fields were
    computed from; one written since answers a version conflict (409), and keeps what was written.

    >>> action = _update_action("i", _Update("d", {"status": "ok"}, (7, 1)))
    >>> action["doc"] == {schema.ROOT: {"status": "ok"}}, action["if_seq_no"], action["if_primary_term"]
    (True, 7, 1)
    >>> "routing" in action, _update_action("i", _Update("d", {}, (7, 1), "k"))["routing"]
    (False, 'k')
    """
    seq_no, primary_term = update.seen
    action = {
        "_op_type": "update",
        "_index": index,
        "_id": update.id,
        "doc": {schema.ROOT: update.fields},
        "if_seq_no": seq_no,
        "if_primary_term": primary_term,
    }
    if update.routing is not None:
        action["routing"] = update.routing
    return action


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    """A failed bulk item as plain data: its id, status and error, without what the bulk helper adds when a
    whole request failed (the exception object, the action's fields), which a job's result cannot store.

    >>> _plain({"update": {"_id": "d", "status": 500, "error": "x", "exception": ValueError(), "data": {}}})
    {'update': {'_id': 'd', 'status': 500, 'error': 'x'}}
    """
    return {
        op: {k: v for k, v in result.items() if k in ("_index", "_id", "status", "error")}
        for op, result in item.items()
        if isinstance(result, dict)
    }


@dataclass(frozen=True)
class _Written:
    """What a run of partial updates did: ``written``; ``conflicted``, the ids of those not written because
    their document had been written since it was read (see :func:`_update_action`); ``failures``, the rest
    not written, with the first as plain data; ``gone``, those whose document was deleted since it was read
    (nothing left to write, nothing to run again)."""

    written: int = 0
    conflicted: tuple[str, ...] = ()
    failures: int = 0
    first_failure: dict[str, Any] | None = None
    gone: int = 0

    @property
    def conflicts(self) -> int:
        return len(self.conflicted)

    def __add__(self, other: _Written) -> _Written:
        return _Written(
            self.written + other.written,
            self.conflicted + other.conflicted,
            self.failures + other.failures,
            self.first_failure or other.first_failure,
            self.gone + other.gone,
        )

    def sent_again(self, again: Sequence[_Update], outcome: _Written) -> _Written:
        """This run with the conflicted updates ``again`` sent once more, to the ``outcome`` given.

        >>> first = _Written(5, ("a", "b", "c"))
        >>> first.sent_again([_Update("a", {}, (9, 1)), _Update("b", {}, (4, 1))], _Written(1, ("b",)))
        _Written(written=6, conflicted=('c', 'b'), failures=0, first_failure=None, gone=0)
        """
        resent = {u.id for u in again}
        kept = _Written(
            self.written,
            tuple(i for i in self.conflicted if i not in resent),
            self.failures,
            self.first_failure,
            self.gone,
        )
        return kept + outcome


def _bulk_update(
    client: Elasticsearch, index: str, updates: Sequence[_Update], retries: int, threads: int = 1
) -> _Written:
    """:func:`_update_action` for each update, in ``threads`` concurrent streams (each retrying what
    Elasticsearch rejects as too many requests); what they did, conflicts apart from failures."""
    if threads > 1 and len(updates) > 1:
        share = -(-len(updates) // threads)
        parts = [updates[k : k + share] for k in range(0, len(updates), share)]
        with ThreadPoolExecutor(len(parts)) as streams:
            return sum(streams.map(lambda part: _bulk_update(client, index, part, retries), parts), _Written())
    written = failures = gone = 0
    conflicted: list[str] = []
    first: dict[str, Any] | None = None
    for success, item in helpers.streaming_bulk(
        client.options(request_timeout=_BULK_SECONDS),
        (_update_action(index, u) for u in updates),
        chunk_size=500,
        max_retries=retries,
        raise_on_error=False,
        raise_on_exception=False,
    ):
        results = [r for r in item.values() if isinstance(r, dict)]
        if success:
            written += 1
        elif results and results[0].get("status") == 409:
            conflicted.append(str(results[0].get("_id")))
        elif results and results[0].get("status") == 404 and _error_type(results[0]) == "document_missing_exception":
            gone += 1  # deleted since it was read: nothing left to write, and no failure to run again
        else:
            failures += 1
            first = first or _plain(item)
    return _Written(written, tuple(conflicted), failures, first, gone)


def _error_type(result: dict[str, Any]) -> str | None:
    """The ``type`` of a bulk item's error, if it has one.

    >>> _error_type({"status": 404, "error": {"type": "document_missing_exception"}}), _error_type({"status": 201})
    ('document_missing_exception', None)
    """
    error = result.get("error")
    return error.get("type") if isinstance(error, dict) else None


#: the most documents one ``mget`` reads again
_MGET_IDS = 1_000


def _where_still_as_read(
    client: Elasticsearch,
    index: str,
    ids: Sequence[str],
    source: list[str] | bool,
    as_read: Callable[[str, dict[str, Any]], bool],
    routing: Mapping[str, str],
) -> dict[str, tuple[int, int]]:
    """Of the documents ``ids``, each written since it was read, those whose ``source`` fields still hold what
    was read (``as_read(id, source now)``): a write that changed only other fields, or this run's own update
    sent again. Each is read with its custom routing (``routing[id]``), if it has one. Returns where each of
    them stands now (sequence number, primary term)."""
    now: dict[str, tuple[int, int]] = {}
    for start in range(0, len(ids), _MGET_IDS):
        wanted = [
            {"_id": i, "routing": routing[i]} if i in routing else {"_id": i} for i in ids[start : start + _MGET_IDS]
        ]
        docs = client.mget(index=index, docs=wanted, source=source)["docs"]
        for d in docs:
            if d.get("found") and as_read(d["_id"], d.get("_source") or {}):
                now[d["_id"]] = (d["_seq_no"], d["_primary_term"])
    return now


def _sent_again_where_as_read(
    client: Elasticsearch,
    index: str,
    done: _Written,
    source: list[str] | bool,
    as_read: Callable[[str, dict[str, Any]], bool],
    fields_of: Callable[[str], dict[str, Any]],
    retries: int,
    routing: Mapping[str, str],
) -> _Written:
    """``done`` with each conflicted update sent once more, onto the document's new copy, where its ``source``
    fields still hold what the update was computed from (:func:`_where_still_as_read`); ``fields_of(id)`` gives
    the update's fields again, ``routing`` the custom routing of the documents that have one."""
    if not done.conflicted:
        return done
    now = _where_still_as_read(client, index, done.conflicted, source, as_read, routing)
    again = [_Update(doc_id, fields_of(doc_id), seen, routing.get(doc_id)) for doc_id, seen in now.items()]
    return done.sent_again(again, _bulk_update(client, index, again, retries)) if again else done


def _as_updated(src: dict[str, Any], fields: dict[str, Any], source: list[str] | bool) -> dict[str, Any]:
    """``src``, a source read through ``source`` (its paths, or True for all), as it reads once the partial
    update of ``fields`` under the root has been applied to the document. The root's fields are replaced one by
    one, as Elasticsearch merges a partial update: none of them holds an object, which it would merge deeper.

    >>> src = {"text": "t"}
    >>> after = _as_updated(src, {schema.INDEXED_AT: "x", schema.HEX: "h"}, ["text", schema.path(schema.INDEXED_AT)])
    >>> after == {"text": "t", schema.ROOT: {schema.INDEXED_AT: "x"}}, _as_updated(src, {schema.HEX: "h"}, ["text"])
    (True, {'text': 't'})
    >>> whole = {"a": 1, schema.ROOT: {schema.CLUSTER: "c", schema.VERSION: "old"}}
    >>> _as_updated(whole, {schema.VERSION: "new"}, True)[schema.ROOT] == {schema.CLUSTER: "c", schema.VERSION: "new"}
    True
    """
    root = dict(src.get(schema.ROOT) or {})
    root.update({k: v for k, v in fields.items() if schema.path(k) in source} if isinstance(source, list) else fields)
    return {**src, schema.ROOT: root} if root else src


def _write_page(
    client: Elasticsearch,
    index: str,
    updates: Sequence[_Update],
    read: dict[str, dict[str, Any]],
    source: list[str] | bool,
    retries: int,
) -> _Written:
    """A page's fingerprint updates; those that meet a document written since it was read are sent once more
    where the fields fingerprinted (``source`` of it) still hold what was read (``read[id]``), or what this
    update made of them: the update itself was applied (a bulk the client sent again after a timeout, whose
    first send had written), and sending it once more changes nothing."""
    done = _bulk_update(client, index, updates, retries)
    sent = {u.id: u.fields for u in updates}
    return _sent_again_where_as_read(
        client,
        index,
        done,
        source,
        lambda i, src: src == read[i] or src == _as_updated(read[i], sent[i], source),
        sent.__getitem__,
        retries,
        {u.id: u.routing for u in updates if u.routing is not None},
    )


#: the processor's text limit when dedupe fingerprints in Elasticsearch: none (Java's largest int), as here
_NO_TEXT_LIMIT = 2**31 - 1
#: the most characters one ``_simulate`` of dedupe carries (a longer text goes alone): a page of long texts
#: becomes several requests
_SIMULATE_CHARS = 1_000_000
#: a ``_simulate`` request's timeout: this many seconds, plus one per :data:`_CHARS_PER_SECOND` characters it
#: carries (about a tenth of what the processor fingerprints per second on one core in bench/results/ingest.md)
_SIMULATE_SECONDS = 30.0
_CHARS_PER_SECOND = 300_000


def _in_es_batches(pairs: Sequence[tuple[str, str | None]]) -> Iterator[Sequence[tuple[str, str | None]]]:
    """``pairs`` cut into runs of at most :data:`_SIMULATE_CHARS` characters (one longer text alone).

    >>> [len(b) for b in _in_es_batches([("x" * 600_000, None), ("y" * 600_000, "t"), ("z", None), ("", None)])]
    [1, 3]
    >>> [len(b) for b in _in_es_batches([("a", None), ("w" * 1_500_000, None), ("b", "c")])]
    [1, 1, 1]
    """
    start = size = 0
    for k, (text, title) in enumerate(pairs):
        chars = len(text) + len(title or "")
        if k > start and size + chars > _SIMULATE_CHARS:
            yield pairs[start:k]
            start, size = k, 0
        size += chars
    if start < len(pairs):
        yield pairs[start:]


def _page_records(
    client: Elasticsearch,
    pool: FingerprintPool,
    fingerprinter: Fingerprinter,
    config: BatchConfig,
    sources: list[dict[str, Any]],
) -> list[Record | RecordError | None]:
    """The records of one page's sources, in order. For records, the :class:`RecordError` where the field
    configuration refuses one; for texts, None where the text field holds no text (missing, null, or a value
    that is not a string), which is left out (see the module's notes)."""
    if config.record is not None:
        fields = [{k: v for k, v in src.items() if not schema.is_reserved(k)} for src in sources]
        return list(pool.fingerprint_records(fields, config.record))
    texts = [text_value(_field(src, config.text_field)) for src in sources]
    pairs = [
        (text, text_value(_field(src, config.title_field)))
        for text, src in zip(texts, sources, strict=True)
        if text is not None
    ]
    records: list[Record] = []
    if not config.fingerprints_in_es:
        records = pool.fingerprint(pairs)
    else:
        unlimited = Settings(max_text_chars=_NO_TEXT_LIMIT)
        for batch in _in_es_batches(pairs):
            chars = sum(len(text) + len(title or "") for text, title in batch)
            timeout = _SIMULATE_SECONDS + chars / _CHARS_PER_SECOND
            records.extend(
                fingerprint_in_pipeline(
                    client.options(request_timeout=timeout), batch, fingerprinter.version, unlimited
                )
            )
    made = iter(records)
    return [None if text is None else next(made) for text in texts]


def _holding(client: Elasticsearch, index: str, name: str) -> dict[str, Any] | None:
    """The query of the documents of ``index`` that hold a value in field ``name``; None where the index cannot
    tell, as the field is not searchable in every index ``index`` names (not mapped, as under ``dynamic: false``;
    ``index: false``; an object): then only the documents' sources can. A value the mapping did not index
    (beyond a keyword's ``ignore_above``, or malformed) is named in the document's ``_ignored``, and is held too.

    A null, an empty list or no field at all is no value; an empty string, a number or a list of strings is one
    (:func:`_page_records` then finds no text in the last two)."""
    caps = client.field_caps(index=index, fields=[name], include_unmapped=True)["fields"].get(name) or {}
    if not caps or any(kind in ("unmapped", "object", "nested") or not c.get("searchable") for kind, c in caps.items()):
        return None
    return {"bool": {"should": [{"exists": {"field": name}}, {"term": {"_ignored": name}}], "minimum_should_match": 1}}


#: the most documents a page of :func:`_check_text` reads: it stops at the first text, in most indices on the first
#: page
_CHECK_PAGE = 100


def check_text_field(client: Elasticsearch, index: str, config: BatchConfig, most: int | None = None) -> None:
    """Raise :class:`NoTextField` where :func:`dedupe` with ``config`` would refuse ``index``. A caller that sets the
    index up before a dedupe (adds the neardup fields to its mapping) checks first, so a refused dedupe changes
    nothing at all. With ``most``, the check reads at most that many documents (a request that cannot wait for a
    scan of a large index without the field): when none of them holds a text and more remain, it cannot tell, and
    returns as when it found one (the dedupe's own check then reads the rest)."""
    if config.record is None:
        _check_text(client, index, config.text_field, _holding(client, index, config.text_field), most)


def _check_text(
    client: Elasticsearch, index: str, name: str, holding: dict[str, Any] | None, most: int | None = None
) -> None:
    """Raise :class:`NoTextField` when ``index`` has documents but none holds a text in field ``name``
    (``holding``: see :func:`_holding`). Reads the field alone, up to the first text found: a page, unless no
    document has one (then every document, or ``most`` of them: see :func:`check_text_field`)."""
    query = holding or {"match_all": {}}
    read = 0
    with closing(scan(client, index, query, [name], slices=1, page_size=_CHECK_PAGE)) as pages:
        for hits in pages:
            if any(text_value(_field(h.get("_source") or {}, name)) is not None for h in hits):
                return
            read += len(hits)
            if most is not None and read >= most:
                break
    documents = client.count(index=index)["count"]
    if most is not None and read >= most and documents > read:
        return  # none of those read holds a text, and the rest were not read
    if documents:
        raise NoTextField(index, name, documents)


def _fingerprint_stage(
    client: Elasticsearch,
    index: str,
    fingerprinter: Fingerprinter,
    config: BatchConfig,
    progress: Progress,
    first_seen: str,
    holding: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Fingerprint every document that lacks the current version; write the fingerprint fields, and
    ``first_seen`` as the ``indexed_at`` of documents without one. A record the field configuration refuses
    (a value of the wrong type) is counted, not written; the first is named with the reason
    (``first_refused_record``). So is a text document without a text in the text field
    (``no_text``): ``holding``, the query of the documents with a value there (:func:`_holding`), keeps those
    without any out of the scan, so a run does not read them again each time; they are counted by a query. A
    value that is no text (a number, a list), or any document where the index cannot tell, is read to be counted,
    on every run, as it never gets the version.

    One page's updates are written while the next page is fingerprinted (by the pool, or by Elasticsearch),
    so neither waits for the other; progress counts written documents only, and a page is only sent once the
    page before it is written, so an interrupted run leaves at most the page in flight to redo."""
    started = time.perf_counter()
    version = config.version(fingerprinter)
    lacking = of_version(version)
    query: dict[str, Any] = {"bool": {"must_not": [lacking]}}
    no_text = 0
    if config.record is None and holding is not None:
        query = {"bool": {"must_not": [lacking], "filter": [holding]}}
        no_text = client.count(index=index, query={"bool": {"must_not": [lacking, holding]}})["count"]
    total = client.count(index=index, query=query)["count"]
    refused = skipped = 0
    first_refused: dict[str, str] | None = None
    written = _Written()
    progress("fingerprint", 0, total)
    source: list[str] | bool = (
        [config.text_field, config.title_field, schema.path(schema.INDEXED_AT)] if config.record is None else True
    )
    in_es = config.fingerprints_in_es
    writing: Future[_Written] | None = None

    def settle() -> None:
        """Wait for the page being written and count it. (When fingerprinting a page fails, the page in flight is
        still written before the error leaves: the writer's exit waits for it.)"""
        nonlocal written, skipped, writing
        if writing is not None:
            page = writing.result()
            skipped += page.conflicts
            written += replace(page, conflicted=())  # a count is all the report needs of a page's conflicts
            writing = None
            progress("fingerprint", written.written, total)

    with FingerprintPool(1 if in_es else config.workers) as pool, ThreadPoolExecutor(1) as writer:
        for hits in scan(client, index, query, source, config.slices, config.page_size, seq_no=True):
            sources = [h.get("_source") or {} for h in hits]
            records = _page_records(client, pool, fingerprinter, config, sources)
            updates = []
            read = {h["_id"]: src for h, src in zip(hits, sources, strict=True)}
            for h, src, r in zip(hits, sources, records, strict=True):
                if r is None:
                    no_text += 1
                    continue
                if isinstance(r, RecordError):
                    refused += 1
                    first_refused = first_refused or {"id": h["_id"], "reason": str(r)}
                    continue
                if r.version != version:
                    r = replace(r, version=version)  # the fields read are part of the version
                fields_out = schema.record_fields(r)
                if not (src.get(schema.ROOT) or {}).get(schema.INDEXED_AT):
                    fields_out[schema.INDEXED_AT] = first_seen  # a re-fingerprint keeps its place
                updates.append(_Update(h["_id"], fields_out, (h["_seq_no"], h["_primary_term"]), h.get("_routing")))
            settle()
            writing = writer.submit(_write_page, client, index, updates, read, source, config.bulk_retries)
        settle()
    return {
        "fingerprinted": written.written,
        "fingerprinted_by": "elasticsearch" if in_es else "python",
        "fingerprint_seconds": round(time.perf_counter() - started, 3),
        "fingerprint_failures": written.failures,
        "first_fingerprint_failure": written.first_failure,
        "fingerprint_skipped": skipped,
        "fingerprint_gone": written.gone,
        "refused_records": refused,
        "first_refused_record": first_refused,
        "no_text": no_text,
    }


def _field(source: dict[str, Any], name: str) -> Any:
    """A field of a ``_source`` by its name: a key as written, or a dotted path into objects (``body.text``),
    the two ways a document can hold a field of that name.

    >>> _field({"body": {"text": "a"}}, "body.text"), _field({"body.text": "b"}, "body.text"), _field({}, "x.y")
    ('a', 'b', None)
    >>> _field({"a.b": {"c": 1}}, "a.b.c"), _field({"a": {"b.c": 2}}, "a.b.c")
    (1, 2)
    """
    if name in source:
        return source[name]
    parts = name.split(".")
    for k in range(1, len(parts)):
        node = source.get(".".join(parts[:k]))
        if isinstance(node, dict):
            found = _field(node, ".".join(parts[k:]))
            if found is not None:
                return found
    return None


def read_fields(client: Elasticsearch, index: str) -> dict[str, str]:
    """The text and title fields the last dedupe of ``index`` read (``text_field``, ``title_field``): a
    reconcile configured with them works on the version that dedupe wrote. :data:`DEFAULT_FIELDS` when
    it read those, or none ran."""
    stored = read_index_meta(client, index, _FIELDS_META)
    if not isinstance(stored, dict):
        return dict(DEFAULT_FIELDS)
    return {k: stored[k] if isinstance(stored.get(k), str) else v for k, v in DEFAULT_FIELDS.items()}


class _Changes(Sequence[_Update]):
    """The assignments of a clustering that differ from what the documents carry, as updates, each
    built when it is read: a first clustering changes every document, and a million (id, fields) updates held at
    once would take about 278 MiB. ``routing`` holds the custom routing of the documents that have one, by id."""

    def __init__(
        self,
        docs: StoredTable,
        a: Assignment,
        routing: Mapping[str, str],
        rows: npt.NDArray[np.int64] | None = None,
    ) -> None:
        self.docs = docs
        self.a = a
        self.routing = routing
        if rows is None:
            rows = np.fromiter(
                (k for k in range(len(docs)) if not docs.unchanged(k, {schema.ROOT: self.fields(k)})), dtype=np.int64
            )
        self.rows = rows

    def fields(self, k: int) -> dict[str, Any]:
        """The assignment fields of row ``k``."""
        dup = int(self.a.duplicate_of[k])
        match = Match(int(self.a.distance[k]), float(self.a.similarity[k])) if dup >= 0 else None
        ids = self.docs.ids
        fields: dict[str, Any] = schema.assignment_fields(
            ids[int(self.a.cluster[k])], ids[dup] if dup >= 0 else None, match
        )
        return fields

    def __len__(self) -> int:
        return int(self.rows.size)

    @overload
    def __getitem__(self, at: int) -> _Update: ...
    @overload
    def __getitem__(self, at: slice) -> _Changes: ...
    def __getitem__(self, at: int | slice) -> _Update | _Changes:
        if isinstance(at, slice):
            return _Changes(self.docs, self.a, self.routing, self.rows[at])
        k = int(self.rows[at])
        doc_id = self.docs.ids[k]
        return _Update(doc_id, self.fields(k), self.docs.seen(k), self.routing.get(doc_id))


def reconcile(
    client: Elasticsearch,
    index: str,
    version: str,
    config: BatchConfig | None = None,
    progress: Progress = _no_progress,
) -> dict[str, Any]:
    """Re-cluster every document of fingerprint ``version`` from its stored fields; write the changes."""
    cfg = config or BatchConfig()
    started = time.perf_counter()
    fields = [*schema.LOOKUP_FIELDS, *schema.ASSIGNMENT_PATHS]
    query = of_version(version)
    total = client.count(index=index, query=query)["count"]
    loading = TableBuilder()
    routing: dict[str, str] = {}  # empty unless the index has documents with custom routing
    progress("load", 0, total)
    for hits in scan(client, index, query, fields, cfg.slices, cfg.page_size, seq_no=True):
        for h in hits:
            loading.add(h)
        routing.update(_routings(hits))
        progress("load", len(loading), total)
    docs = loading.build()
    progress("cluster", 0, len(docs))
    a = cluster_records(docs, lambda r: r.fingerprints, cfg.verify_config())
    updates = _Changes(docs, a, routing)
    progress("write", 0, len(updates))
    written = _bulk_update(client, index, updates, cfg.bulk_retries, cfg.write_threads)
    if written.conflicted:  # sent once more where what the clustering read is unchanged
        conflicted = set(written.conflicted)
        rows = {doc_id: k for k, doc_id in enumerate(docs.ids) if doc_id in conflicted}
        written = _sent_again_where_as_read(
            client,
            index,
            written,
            CLUSTERED_FROM,
            lambda i, src: docs.still_as_read(rows[i], src),
            lambda i: updates.fields(rows[i]),
            cfg.bulk_retries,
            routing,
        )
    progress("write", written.written, len(updates))
    client.indices.refresh(index=index)
    return {
        "documents": len(docs),
        "clusters": int(np.count_nonzero(a.cluster == np.arange(len(docs)))),
        "changed": written.written,
        "assignment_skipped": written.conflicts,
        "assignment_gone": written.gone,
        "failures": written.failures,
        "first_failure": written.first_failure,
        "seconds": round(time.perf_counter() - started, 3),
    }


def dedupe(
    client: Elasticsearch,
    index: str,
    fingerprinter: Fingerprinter,
    config: BatchConfig | None = None,
    progress: Progress = _no_progress,
) -> dict[str, Any]:
    """Fingerprint what is missing, then cluster the whole index (see the module doc)."""
    cfg = config or BatchConfig()
    started = time.perf_counter()
    client.indices.refresh(index=index)  # what an interrupted run wrote is not redone; the check sees every document
    holding = None
    if cfg.record is None:
        holding = _holding(client, index, cfg.text_field)
        _check_text(client, index, cfg.text_field, holding)
        # reconcile reads the version of these fields (see read_fields)
        write_index_meta(client, index, _FIELDS_META, None if cfg.fields() == DEFAULT_FIELDS else cfg.fields())
    first_seen = read_index_meta(client, index, _STARTED_META)
    if not isinstance(first_seen, str):  # no interrupted dedupe to resume: this one starts now
        first_seen = schema.timestamp(time.time_ns())
        write_index_meta(client, index, _STARTED_META, first_seen)
    stage = _fingerprint_stage(client, index, fingerprinter, cfg, progress, first_seen, holding)
    # the stage read every document: what it could not write is a failure it reports, and a later run gives it
    # that run's time, as it does every document written after this one began
    write_index_meta(client, index, _STARTED_META, None)
    client.indices.refresh(index=index)
    result = reconcile(client, index, cfg.version(fingerprinter), cfg, progress)
    return stage | result | {"seconds": round(time.perf_counter() - started, 3)}

"""Elasticsearch I/O shared by the CLI and the service: the client, index names, index set-up."""

from __future__ import annotations

import threading
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from elastic_transport import BaseNode, NodeSelector
from elasticsearch import ApiError, Elasticsearch, NotFoundError, TransportError
from elasticsearch import ConnectionError as ESConnectionError
from urllib3.exceptions import ConnectTimeoutError

from neardup import mappings
from neardup.config import Settings
from neardup.errors import NeardupError, UsageError, error_reason
from neardup.ingest.records import RecordConfig
from neardup.mappings import schema

__all__ = [
    "IMPORTS_INDEX",
    "INTERNAL_INDICES",
    "JOBS_INDEX",
    "ESUnavailable",
    "FirstNamed",
    "IndexInfo",
    "RecordConfigs",
    "count_fingerprinted_otherwise",
    "create_index",
    "default_pipelines",
    "es_hosts",
    "index_allowed",
    "inspect_index",
    "install_index_template",
    "is_internal_index",
    "location",
    "make_client",
    "never_sent",
    "not_written_to",
    "of_version",
    "read_index_meta",
    "read_record_config",
    "record_config",
    "refusal_reason",
    "setup_index",
    "validate_index_name",
    "write_index_meta",
    "write_record_config",
]

#: batch jobs' records and locks (:mod:`neardup.es.jobs`)
JOBS_INDEX = "neardup-jobs"
#: SQL imports' high-water marks (``neardup.integrations.sql_import.STATE_INDEX``)
IMPORTS_INDEX = "neardup-imports"
#: neardup's own state, never user data: the service neither reads nor writes them for a request
INTERNAL_INDICES = frozenset({JOBS_INDEX, IMPORTS_INDEX})
#: the internal indices' settings: a replica where there is a node for it, none on one node (green there, not yellow
#: for want of a second node), as Elasticsearch's own system indices have
_INTERNAL_SETTINGS = {"index.auto_expand_replicas": "0-1"}
#: the key of an index's per-field configuration in its mapping's ``_meta.neardup``
_RECORD_CONFIG_META = "record_config"

#: what Elasticsearch refuses anywhere in an index name besides spaces (``:`` names a remote cluster)
_INDEX_FORBIDDEN = '\\/*?"<>|,#:'
#: Elasticsearch's limit on an index name, in UTF-8 bytes
_INDEX_NAME_BYTES = 255


class ESUnavailable(NeardupError):
    """Elasticsearch could not be reached; ``url`` says where we looked (never with credentials)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"Elasticsearch at {url} is unavailable: {reason}")
        self.url = url
        self.reason = reason


def location(client: Elasticsearch) -> str:
    """Where ``client`` sends its requests, for messages: its nodes' base URLs, never with credentials."""
    return ", ".join(str(node.base_url) for node in client.transport.node_pool.all())


def validate_index_name(name: str) -> str:
    """Return ``name`` if neardup takes it as an index name, else raise UsageError. neardup's names are
    Elasticsearch's without the hidden ones: lowercase (letters of any script, ``新闻`` included), none of
    ``\\ / * ? " < > | , # :``, no spaces or control characters, not first ``- _ + .``, at most 255 bytes in
    UTF-8. A name starting with "." is Elasticsearch's or a plugin's (see :func:`is_internal_index`).

    >>> validate_index_name("news-2024"), validate_index_name("新闻-2024")
    ('news-2024', '新闻-2024')
    >>> validate_index_name("News")
    Traceback (most recent call last):
    ...
    neardup.errors.UsageError: invalid index name 'News': it has uppercase letters
    >>> validate_index_name("新" * 86)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    neardup.errors.UsageError: invalid index name ...(86 characters): it has 258 bytes in UTF-8; the limit is 255
    """
    problem = _index_name_problem(name)
    if problem:
        long = isinstance(name, str) and len(name) > 40
        shown = f"{name[:10]!r}… ({len(name)} characters)" if long else repr(name)
        raise UsageError(f"invalid index name {shown}: {problem}")
    return name


def _index_name_problem(name: object) -> str:
    """What makes ``name`` no index name for neardup (see :func:`validate_index_name`); "" when nothing."""
    if not isinstance(name, str) or not name:
        return "it is empty" if name == "" else "it is not a string"
    bad = sorted({c for c in name if c in _INDEX_FORBIDDEN or unicodedata.category(c)[0] in "CZ"})  # Z: spaces
    if bad:
        listed = ", ".join(repr(c) for c in bad)
        shown = " ".join(_INDEX_FORBIDDEN)
        return f"it has {listed}; an index name has no spaces, control characters or any of {shown}"
    if name != name.lower():
        return "it has uppercase letters"
    if name[0] in "-_+.":
        return f"it starts with {name[0]!r}"
    size = len(name.encode("utf-8"))
    if size > _INDEX_NAME_BYTES:
        return f"it has {size} bytes in UTF-8; the limit is {_INDEX_NAME_BYTES}"
    return ""


def refusal_reason(exc: ApiError) -> str:
    """What Elasticsearch said when it refused a request: its error's reason (the type when it gives none). An answer
    that is no Elasticsearch error (another server's page at that address) is cut to its first 200 characters.

    >>> refusal_reason(ApiError("x", None, {"error": {"type": "illegal_argument_exception", "reason": "can't merge"}}))
    "can't merge"
    >>> refusal_reason(ApiError("x", None, {"error": "Incorrect HTTP method for uri", "status": 405}))
    'Incorrect HTTP method for uri'
    >>> page = refusal_reason(ApiError("x", None, "<html>\\n  <body>" + "a" * 300))
    >>> page[:20], len(page)
    ('<html> <body>aaaaaaa', 201)
    """
    info = exc.info if isinstance(exc.info, dict) else {}
    err = info.get("error")
    if isinstance(err, dict):
        return error_reason(err) if err.get("reason") or err.get("type") else str(exc.error)
    if isinstance(err, str) and err:  # some refusals say it in a string ("Incorrect HTTP method ...")
        return err
    said = " ".join(str(exc.info if exc.info else exc.error).split())
    return said if len(said) <= 200 else said[:200] + "…"


def is_internal_index(name: str) -> bool:
    """neardup's own indices, and every name starting with "." (Elasticsearch's and its plugins').

    >>> [is_internal_index(n) for n in ("neardup-jobs", "neardup-imports", ".kibana_1", "news")]
    [True, True, True, False]
    """
    return name in INTERNAL_INDICES or name.startswith(".")


def index_allowed(name: str, patterns: tuple[str, ...]) -> bool:
    """``name`` matches one of the fnmatch ``patterns`` (``NEARDUP_INDEX_PATTERNS``), case-sensitively.

    >>> index_allowed("news-2024", ("news-*", "hr")), index_allowed("hr-salaries", ("news-*", "hr"))
    (True, False)
    """
    return any(fnmatchcase(name, p) for p in patterns)


@dataclass(frozen=True)
class IndexInfo:
    """What a name is in Elasticsearch: ``kind`` is ``missing``, ``index``, ``alias`` or ``data_stream``;
    ``indices`` maps each index it stands for to what is wrong with its neardup fields ("" when
    every one is mapped with neardup's type); ``conflicting``: those that map one with another type
    (no set-up can fix that; missing fields it adds)."""

    name: str
    kind: str
    indices: dict[str, str]
    conflicting: frozenset[str] = frozenset()

    @property
    def ready(self) -> bool:
        """An index (not an alias) with the whole neardup mapping: neardup may write to it as it is."""
        return self.kind == "index" and self.indices.get(self.name) == ""

    @property
    def problems(self) -> dict[str, str]:
        return {name: problem for name, problem in self.indices.items() if problem}


def not_written_to(info: IndexInfo) -> str:
    """Why neardup does not write to what ``info`` names ("" for an index, or a name that is missing): a data stream
    or an alias; neardup writes to an index by its own name.

    >>> not_written_to(IndexInfo("news", "alias", {"news-1": "", "news-2": ""}))
    "'news' is an alias of news-1, news-2; neardup writes to an index by its own name"
    """
    if info.kind not in ("alias", "data_stream"):
        return ""
    what = "a data stream" if info.kind == "data_stream" else "an alias"
    return f"{info.name!r} is {what} of {', '.join(sorted(info.indices))}; neardup writes to an index by its own name"


NO_NEARDUP_FIELDS = "has no neardup fields"
_MAPPED_TYPES = f"*.mappings.properties.{schema.ROOT}.properties.*.type"


def _fields_problem(index_mapping: dict[str, Any]) -> tuple[str, bool]:
    """What is wrong with one index's neardup fields, from its mapping (only their types): "" if nothing;
    and whether a field has another type."""
    mapped = index_mapping.get("mappings", {}).get("properties", {}).get(schema.ROOT, {}).get("properties", {})
    wrong = mappings.missing_fields(mapped, doc_values=False)
    for name, spec in wrong.items():
        got = (mapped.get(name) or {}).get("type")
        if got is not None:
            return f"maps {schema.path(name)} as {got}, not {spec['type']}", True
    missing = [schema.path(name) for name in wrong]
    return (f"does not map {', '.join(missing)}" if missing else ""), False


def inspect_index(client: Elasticsearch, index: str) -> IndexInfo:
    """What ``index`` is and whether it carries the neardup mapping: one ``GET _mapping`` (of the neardup
    fields' types only) for an index that does, the cheap check made for every request; a second
    request (``_resolve/index``) for anything else, to tell a plain index from an alias."""
    try:
        found = client.indices.get_mapping(index=index, filter_path=[_MAPPED_TYPES]).body
    except NotFoundError:
        return IndexInfo(index, "missing", {})
    checked = {name: _fields_problem(body) for name, body in (found or {}).items()}
    conflicting = frozenset(name for name, (_, conflict) in checked.items() if conflict)

    def info(kind: str, names: list[str]) -> IndexInfo:
        problems = {n: checked[n][0] if n in checked else NO_NEARDUP_FIELDS for n in names}
        return IndexInfo(index, kind, problems, conflicting & set(names))

    if set(checked) == {index}:
        return info("index", [index])
    resolved = client.indices.resolve_index(name=index, expand_wildcards="all").body
    for entry in resolved.get("indices", []):
        if entry.get("name") == index:
            return info("index", [index])
    for entry in resolved.get("aliases", []):
        if entry.get("name") == index:
            return info("alias", list(entry.get("indices", [])))
    for entry in resolved.get("data_streams", []):
        if entry.get("name") == index:
            return info("data_stream", list(entry.get("backing_indices", [])))
    return IndexInfo(index, "missing", {})  # deleted in between


def es_hosts(url: str) -> list[str]:
    """The nodes named by ``NEARDUP_ES_URL``: one URL, or several separated by commas.

    >>> es_hosts("http://a:9200, http://b:9200,")
    ['http://a:9200', 'http://b:9200']
    """
    return [u.strip() for u in url.split(",") if u.strip()]


def never_sent(exc: TransportError) -> bool:
    """Whether no attempt of a request that failed with ``exc`` reached Elasticsearch: each failed to connect
    (refused, or no connection made in time), so nothing the request carried was carried out. A request whose
    answer did not come in time, or whose connection was lost after it was sent, may have been carried out all the
    same, and so may any request of which a retry failed to connect after an attempt that connected.

    The client keeps the attempts before the last in ``exc.errors`` and the last one's cause in ``__cause__``;
    each attempt's own cause is the HTTP library's exception (urllib3's, the client's default)."""
    attempts = [e for e in exc.errors if isinstance(e, TransportError)] + [exc]
    return all(isinstance(a.__cause__, ConnectTimeoutError) for a in attempts)  # urllib3's "refused" is one too


class FirstNamed(NodeSelector):
    """Of the nodes that answer, the first named: every request through one node while it answers, the next named
    when it does not. What the cluster's flagging pipeline writes through one node, that node's window of documents
    written moments ago holds; spread round-robin, back-to-back batches would each go to another node's window."""

    def select(self, nodes: Sequence[BaseNode]) -> BaseNode:
        order = {config: k for k, config in enumerate(self.node_configs)}
        return min(nodes, key=lambda node: order.get(node.config, len(order)))


def make_client(settings: Settings) -> Elasticsearch:
    """One client per process/app, with retries on connection errors and timeouts. With several nodes named,
    requests go round-robin (through the first that answers when the cluster's pipeline flags the documents,
    :class:`FirstNamed`) and a node that stops answering is set aside (and retried later), so losing one node of a
    cluster loses no request."""
    kwargs: dict[str, Any] = {
        "request_timeout": settings.es_timeout,
        "max_retries": settings.es_retries,
        "retry_on_timeout": True,
    }
    if settings.flag_in_es:  # in the order named (the client shuffles them otherwise)
        kwargs |= {"node_selector_class": FirstNamed, "randomize_nodes_in_pool": False}
    if settings.es_api_key:
        kwargs["api_key"] = settings.es_api_key
    elif settings.es_username:
        kwargs["basic_auth"] = (settings.es_username, settings.es_password)
    return Elasticsearch(es_hosts(settings.es_url), **kwargs)


def setup_index(client: Elasticsearch, index: str, meta: dict[str, Any] | None = None) -> bool:
    """Install the component + index template and create ``index`` if missing. Idempotent.

    Returns True when the index was created now, with ``meta`` as its ``_meta.neardup`` from the first moment (what
    :func:`write_index_meta` writes later). On an existing index the neardup fields are added to its mapping (a
    no-op when present), so a user's own index can be prepared too; ``meta`` is then not written.
    """
    validate_index_name(index)
    try:
        client.cluster.put_component_template(name=mappings.COMPONENT_NAME, **mappings.component_template())
        install_index_template(client, index)
        if client.indices.exists(index=index):
            _add_missing_fields(client, index)
            return False
        return create_index(client, index, None if meta is None else {"_meta": {schema.ROOT: meta}})
    except ESConnectionError as exc:
        raise ESUnavailable(location(client), type(exc).__name__) from exc


def install_index_template(client: Elasticsearch, index: str, default_pipeline: str | None = None) -> None:
    """Put the index template of ``index`` (:func:`neardup.mappings.index_template`); without
    ``default_pipeline``, the one the installed template names (if any) is kept, so that setting ``index``
    up again does not take away what ``neardup setup --pipeline`` gave it."""
    if default_pipeline is None:
        default_pipeline = _template_pipeline(client, index)
    client.indices.put_index_template(
        name=mappings.index_template_name(index), **mappings.index_template(index, default_pipeline)
    )


def _template_pipeline(client: Elasticsearch, index: str) -> str | None:
    """The default pipeline ``index``'s neardup index template names, if any."""
    name = mappings.index_template_name(index)
    found = client.options(ignore_status=404).indices.get_index_template(name=name, flat_settings=True).body
    for entry in found.get("index_templates", []):
        settings = entry["index_template"].get("template", {}).get("settings", {})
        pipeline: str | None = settings.get(mappings.DEFAULT_PIPELINE_SETTING)
        if pipeline is not None:
            return pipeline
    return None


def default_pipelines(client: Elasticsearch, index: str) -> list[str]:
    """The ingest pipelines a write to ``index`` that names none runs: the ``index.default_pipeline`` of each index
    it names; for a missing one, the pipeline its neardup index template gives the index a set-up would create."""
    if not client.indices.exists(index=index):
        pipeline = _template_pipeline(client, index)
        return [] if pipeline is None else [pipeline]
    setting = mappings.DEFAULT_PIPELINE_SETTING
    found = client.indices.get_settings(index=index, name=setting, flat_settings=True).body
    return sorted({str(s["settings"][setting]) for s in found.values() if s.get("settings", {}).get(setting)})


def of_version(version: str) -> dict[str, Any]:
    """The query of the documents fingerprinted by ``version``; under ``must_not``, of those lacking it."""
    return {"term": {schema.path(schema.VERSION): version}}


def count_fingerprinted_otherwise(client: Elasticsearch, index: str, version: str) -> int:
    """How many documents of ``index`` lack fingerprint ``version``: texts, records of another field configuration,
    documents not fingerprinted at all. Records of that version are not compared with them (a lookup reads
    candidates of its own version) until a dedupe fingerprints them by it."""
    query = {"bool": {"must_not": of_version(version)}}
    return int(client.count(index=index, query=query)["count"])


def _add_missing_fields(client: Elasticsearch, index: str) -> None:
    """Map the neardup fields an existing ``index`` (or each index behind an alias) lacks, one index at a
    time (what one lacks may be mapped otherwise in another); an index with all of them, strict, is left as it is."""
    root_mapping = mappings.component_template()["template"]["mappings"]["properties"][schema.ROOT]
    for name, found in client.indices.get_mapping(index=index).items():
        root = found.get("mappings", {}).get("properties", {}).get(schema.ROOT, {})
        missing = mappings.missing_fields(root.get("properties", {}))
        if missing or root.get("dynamic") != root_mapping["dynamic"]:
            client.indices.put_mapping(index=name, properties={schema.ROOT: root_mapping | {"properties": missing}})


def create_index(client: Elasticsearch, index: str, index_mappings: dict[str, Any] | None = None) -> bool:
    """Create ``index`` (with ``index_mappings``; an internal index with its settings) unless it exists; True when
    created now. Another process creating it at the same moment is not an error."""
    if client.indices.exists(index=index):
        return False
    settings = _INTERNAL_SETTINGS if index in INTERNAL_INDICES else None
    try:
        client.indices.create(index=index, mappings=index_mappings, settings=settings)
    except ApiError as exc:
        if exc.meta.status == 400 and "resource_already_exists_exception" in str(exc):
            return False
        raise
    return True


def write_record_config(client: Elasticsearch, index: str, data: dict[str, Any] | None) -> None:
    """Keep an index's per-field configuration in its mapping's ``_meta.neardup.record_config``
    (None removes it): documents posted to the index are then fingerprinted as records."""
    write_index_meta(client, index, _RECORD_CONFIG_META, data)


def write_index_meta(client: Elasticsearch, index: str, key: str, data: Any) -> None:
    """Keep ``data`` with the index, in its mapping's ``_meta.neardup.<key>`` (None removes it)."""
    meta = _one_mapping(client, index).get("_meta", {})
    neardup_meta = dict(meta.get(schema.ROOT, {}))
    if data is None:
        if key not in neardup_meta:
            return
        neardup_meta.pop(key)
    elif neardup_meta.get(key) == data:
        return
    else:
        neardup_meta[key] = data
    client.indices.put_mapping(index=index, meta={**meta, schema.ROOT: neardup_meta})


def _mappings(client: Elasticsearch, index: str) -> dict[str, dict[str, Any]]:
    """The mappings of each index ``index`` names: itself, or every index an alias of that name points to.
    Elasticsearch keys its answer by the indices, never by the alias."""
    return {name: found.get("mappings", {}) for name, found in client.indices.get_mapping(index=index).body.items()}


def _one_mapping(client: Elasticsearch, index: str) -> dict[str, Any]:
    """The mappings of the one index ``index`` names (an alias of one index included); an alias of several
    is a :class:`UsageError`: what is kept with an index is kept with one."""
    found = _mappings(client, index)
    if len(found) != 1:
        raise UsageError(f"{index!r} names {len(found)} indices ({', '.join(sorted(found))}); name one of them")
    return next(iter(found.values()))


def _agreed(client: Elasticsearch, index: str, key: str) -> Any:
    """``_meta.neardup.<key>`` of the indices ``index`` names, which must all keep the same (None when none
    keeps anything, or no such index); indices that disagree behind one alias are a :class:`UsageError`."""
    try:
        found = _mappings(client, index)
    except NotFoundError:
        return None
    kept = {name: mappings.get("_meta", {}).get(schema.ROOT, {}).get(key) for name, mappings in found.items()}
    values = list(kept.values())
    if any(value != values[0] for value in values[1:]):
        raise UsageError(
            f"the indices behind {index!r} ({', '.join(sorted(kept))}) keep different neardup {key}; name one of them"
        )
    return values[0] if values else None


def read_index_meta(client: Elasticsearch, index: str, key: str) -> Any:
    """What :func:`write_index_meta` kept under ``key`` (None when nothing, or no such index)."""
    return _agreed(client, index, key)


def read_record_config(client: Elasticsearch, index: str) -> dict[str, Any] | None:
    """The per-field configuration stored with ``index``, if any (None for a missing index). Through an alias:
    the configuration its indices share (a :class:`UsageError` when they differ)."""
    data: dict[str, Any] | None = _agreed(client, index, _RECORD_CONFIG_META)
    return data


def record_config(client: Elasticsearch, index: str) -> RecordConfig | None:
    """The index's per-field configuration, parsed: its documents are records; None: text documents."""
    stored = read_record_config(client, index)
    return RecordConfig.parse(stored, strict=False) if stored else None  # as it was taken when stored


class RecordConfigs:
    """Each index's field configuration, read from its mapping once and kept for ``ttl`` seconds, so a
    request does not cost a ``GET _mapping``. A change made through this object is seen at once; one made
    by another process, after at most ``ttl`` seconds."""

    def __init__(self, client: Elasticsearch, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._client = client
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[float, RecordConfig | None]] = {}

    def get(self, index: str) -> RecordConfig | None:
        now = self._clock()
        with self._lock:
            hit = self._cache.get(index)
        if hit is not None and now - hit[0] < self._ttl:
            return hit[1]
        config = record_config(self._client, index)
        with self._lock:
            self._cache[index] = (now, config)
        return config

    def write(self, index: str, data: dict[str, Any] | None) -> None:
        """:func:`write_record_config`, and forget what was cached for ``index``."""
        write_record_config(self._client, index, data)
        self.forget(index)

    def forget(self, index: str) -> None:
        with self._lock:
            self._cache.pop(index, None)

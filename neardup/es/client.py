"""Elasticsearch I/O shared by the CLI and the service: the client, index names, index set-up."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Any

from elasticsearch import ApiError, Elasticsearch, NotFoundError
from elasticsearch import ConnectionError as ESConnectionError

from neardup import mappings
from neardup.config import Settings
from neardup.errors import NeardupError, UsageError
from neardup.ingest.records import RecordConfig
from neardup.mappings import schema

__all__ = [
    "ESUnavailable",
    "RecordConfigs",
    "create_index",
    "make_client",
    "read_record_config",
    "record_config",
    "setup_index",
    "validate_index_name",
    "write_record_config",
]

# Elasticsearch's own rules: lowercase, no \ / * ? " < > | space , #, not starting with - _ +, not . or ..
_INDEX_RE = re.compile(r"^(?![-_+.])[a-z0-9][a-z0-9._+-]{0,254}$|^[a-z0-9]$")


class ESUnavailable(NeardupError):
    """Elasticsearch could not be reached; ``url`` says where we looked (never with credentials)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"Elasticsearch at {url} is unavailable: {reason}")
        self.url = url
        self.reason = reason


def validate_index_name(name: str) -> str:
    """Return ``name`` if Elasticsearch would accept it as an index name, else raise UsageError.

    >>> validate_index_name("news-2024")
    'news-2024'
    >>> validate_index_name("News")
    Traceback (most recent call last):
    ...
    neardup.errors.UsageError: invalid index name 'News': use lowercase letters, digits and . _ - + (not first)
    """
    if not isinstance(name, str) or not _INDEX_RE.match(name) or name in {".", ".."}:
        raise UsageError(f"invalid index name {name!r}: use lowercase letters, digits and . _ - + (not first)")
    return name


def make_client(settings: Settings) -> Elasticsearch:
    """One client per process/app, with retries on connection errors and timeouts."""
    kwargs: dict[str, Any] = {
        "request_timeout": settings.es_timeout,
        "max_retries": settings.es_retries,
        "retry_on_timeout": True,
    }
    if settings.es_api_key:
        kwargs["api_key"] = settings.es_api_key
    elif settings.es_username:
        kwargs["basic_auth"] = (settings.es_username, settings.es_password)
    return Elasticsearch(settings.es_url, **kwargs)


def setup_index(client: Elasticsearch, index: str) -> bool:
    """Install the component + index template and create ``index`` if missing. Idempotent.

    Returns True when the index was created now. On an existing index the neardup fields are added
    to its mapping (a no-op when present), so a user's own index can be prepared too.
    """
    validate_index_name(index)
    try:
        client.cluster.put_component_template(name=mappings.COMPONENT_NAME, **mappings.component_template())
        client.indices.put_index_template(name=mappings.index_template_name(index), **mappings.index_template(index))
        if client.indices.exists(index=index):
            props = mappings.component_template()["template"]["mappings"]["properties"]
            client.indices.put_mapping(index=index, properties=props)
            return False
        return create_index(client, index)
    except ESConnectionError as exc:
        raise ESUnavailable(str(client.transport.node_pool.get().base_url), type(exc).__name__) from exc


def create_index(client: Elasticsearch, index: str, index_mappings: dict[str, Any] | None = None) -> bool:
    """Create ``index`` (with ``index_mappings``) unless it exists; True when created now. Another
    process creating it at the same moment is not an error."""
    if client.indices.exists(index=index):
        return False
    try:
        client.indices.create(index=index, mappings=index_mappings)
    except ApiError as exc:
        if exc.meta.status == 400 and "resource_already_exists_exception" in str(exc):
            return False
        raise
    return True


def write_record_config(client: Elasticsearch, index: str, data: dict[str, Any] | None) -> None:
    """Keep an index's per-field configuration in its mapping's ``_meta.neardup.record_config``
    (None removes it): documents posted to the index are then fingerprinted as records."""
    meta = client.indices.get_mapping(index=index)[index]["mappings"].get("_meta", {})
    neardup_meta = dict(meta.get(schema.ROOT, {}))
    if data is None:
        neardup_meta.pop("record_config", None)
    else:
        neardup_meta["record_config"] = data
    client.indices.put_mapping(index=index, meta={**meta, schema.ROOT: neardup_meta})


def read_record_config(client: Elasticsearch, index: str) -> dict[str, Any] | None:
    """The per-field configuration stored with ``index``, if any (None for a missing index)."""
    try:
        mappings = client.indices.get_mapping(index=index)[index]["mappings"]
    except NotFoundError:
        return None
    data: dict[str, Any] | None = mappings.get("_meta", {}).get(schema.ROOT, {}).get("record_config")
    return data


def record_config(client: Elasticsearch, index: str) -> RecordConfig | None:
    """The index's per-field configuration, parsed: its documents are records; None: text documents."""
    stored = read_record_config(client, index)
    return RecordConfig.parse(stored) if stored else None


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

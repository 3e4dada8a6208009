"""The per-index field configuration is read from the mapping once and cached (:class:`RecordConfigs`),
against the real Elasticsearch."""

from __future__ import annotations

import pytest
from elasticsearch import Elasticsearch

from neardup.es.client import RecordConfigs, setup_index, write_record_config

pytestmark = pytest.mark.es

FIELDS = {"fields": {"body": {"mode": "text"}, "tags": {"mode": "set"}}}
OTHER = {"fields": {"body": {"mode": "text"}, "kind": {"mode": "value"}}}


def test_configuration_is_cached_for_ttl_and_a_local_write_is_seen_at_once(
    es: Elasticsearch, index_name: str
) -> None:
    setup_index(es, index_name)
    now = [0.0]
    configs = RecordConfigs(es, ttl=30.0, clock=lambda: now[0])
    assert configs.get(index_name) is None
    configs.write(index_name, FIELDS)
    first = configs.get(index_name)
    assert first is not None and set(first.fields) == {"body", "tags"}

    write_record_config(es, index_name, OTHER)  # another process changes it
    now[0] = 29.0
    assert configs.get(index_name) == first  # still cached: no GET _mapping per request
    now[0] = 31.0
    changed = configs.get(index_name)
    assert changed is not None and set(changed.fields) == {"body", "kind"}

    configs.write(index_name, None)
    assert configs.get(index_name) is None

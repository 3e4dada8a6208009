"""The in-Elasticsearch Hamming filter (:func:`neardup.es.lookup.hamming_filter`)."""

from __future__ import annotations

import random

import pytest
from elasticsearch import Elasticsearch

from neardup.es.client import setup_index

pytestmark = pytest.mark.es


def test_hamming_script_filter_keeps_exactly_the_close_fingerprints(es: Elasticsearch, index_name: str) -> None:
    """The in-Elasticsearch Hamming check (Painless on a full cluster, the native script embedded)."""
    from neardup.es.lookup import hamming_filter, script_language
    from neardup.ingest.bits import hamming, to_signed

    setup_index(es, index_name)
    rng = random.Random(5)
    query = rng.getrandbits(64)
    values = [query ^ (1 << rng.randrange(64)) ^ (1 << rng.randrange(64)) for _ in range(10)]
    values += [query ^ rng.getrandbits(64) for _ in range(40)] + [query, query ^ 0b1111]
    for k, v in enumerate(values):
        es.index(index=index_name, id=str(k), document={"neardup": {"fingerprint": [to_signed(v)]}})
    es.indices.refresh(index=index_name)
    lang = script_language(es)
    for k in (0, 2, 3, 4):
        resp = es.search(index=index_name, query=hamming_filter([to_signed(query)], k, lang), size=100)
        got = {int(h["_id"]) for h in resp["hits"]["hits"]}
        assert got == {i for i, v in enumerate(values) if hamming(v, query) <= k}

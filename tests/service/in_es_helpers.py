"""Helpers of the tests that compare the service fingerprinting or flagging inside Elasticsearch with the Python
service: a news set with planted reprints, posting it in batches, and the ``neardup.*`` fields an index stored."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from neardup.es.pipeline import nodes_without_processor
from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.sets import Doc, news_set
from neardup.mappings import schema


def news_docs(es: Elasticsearch, seed: int) -> list[Doc]:
    """People's Daily articles with 15 planted reprint groups and 30 singles, ids in posting order; the test is
    skipped on a cluster without the plugin."""
    if nodes_without_processor(es):
        pytest.skip("this cluster has no neardup plugin")
    shuffled = news_set(load_peoples_daily(), seed=seed, groups=15, singles=30)
    return [Doc(f"d{k:03d}", d.title, d.text, d.group) for k, d in enumerate(shuffled)]


def ndjson(docs: Sequence[dict[str, Any]]) -> str:
    return "\n".join(json.dumps(d, ensure_ascii=False) for d in docs)


def post(
    api: FlaskClient, index: str, docs: Sequence[Doc], batch: int = 40, refresh: str = "true"
) -> list[dict[str, Any]]:
    """The items of posting ``docs`` in batches, each answered 200."""
    items: list[dict[str, Any]] = []
    for k in range(0, len(docs), batch):
        body = ndjson([{"id": d.id, "title": d.title, "text": d.text} for d in docs[k : k + batch]])
        resp = api.post(
            f"/v1/indices/{index}/documents?refresh={refresh}", data=body, content_type="application/x-ndjson"
        )
        assert resp.status_code == 200, resp.json
        items += resp.json["items"]
    return items


def stored(es: Elasticsearch, index: str) -> dict[str, dict[str, Any]]:
    """Every document's ``neardup.*`` fields but its time (which differs between two writes of it)."""
    es.indices.refresh(index=index)
    hits = es.search(index=index, size=1000, query={"match_all": {}})["hits"]["hits"]
    out = {}
    for h in hits:
        nd = dict(h["_source"][schema.ROOT])
        nd.pop(schema.INDEXED_AT)
        out[h["_id"]] = nd
    return out

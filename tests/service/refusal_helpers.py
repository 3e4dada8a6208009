"""Helpers of the refused-document tests (``test_reserved_fields``, ``test_atomic_batches``)."""

from __future__ import annotations

import json

from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from neardup.evaluation.corpus import load_peoples_daily


def corpus_text(k: int) -> str:
    return load_peoples_daily()[k].text


def assert_refused_first(api: FlaskClient, es: Elasticsearch, index: str, extra: dict[str, object]) -> None:
    """A batch of a good document and one with ``extra`` is a 400 naming item 1, and nothing is written."""
    docs = [{"id": "ok-1", "text": corpus_text(1)}, {"id": "bad", "text": corpus_text(2), **extra}]
    body = json.dumps(docs, allow_nan=True)  # NaN as Python's json writes it
    resp = api.post(f"/v1/indices/{index}/documents?refresh=true", data=body, content_type="application/json")
    assert resp.status_code == 400, resp.json
    assert resp.json["error"]["type"] == "invalid_document"
    assert "item 1" in resp.json["error"]["message"]
    assert not es.indices.exists(index=index) or es.count(index=index)["count"] == 0

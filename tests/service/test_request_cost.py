"""One request's cost is bounded whatever its content: in-batch matching of many alike documents grows
linearly (each document keeps a bounded number of candidates), not with the square of the batch."""

from __future__ import annotations

import random

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from neardup.evaluation.corpus import load_peoples_daily
from neardup.ingest.cluster import record_candidate_pairs
from neardup.ingest.fingerprint import Fingerprinter
from neardup.service import create_app

N = 600
PER_DOCUMENT = 64  # at most this many earlier candidates per document (ingest/cluster.py)


def _alike(n: int) -> list[str]:
    """``n`` copies of one ~1,500-character article, each with 10 characters changed at random."""
    base = "".join(a.text for a in load_peoples_daily()[:8])[:1500]
    rng = random.Random(4)
    out = []
    for _ in range(n):
        chars = list(base)
        for _ in range(10):
            chars[rng.randrange(len(chars))] = rng.choice("的了是在和有我们他这中大为上个国")
        out.append("".join(chars))
    return out


def test_candidates_of_many_alike_documents_grow_linearly(fp: Fingerprinter) -> None:
    records = fp.fingerprint_many([(t, None) for t in _alike(N)])
    i, j = record_candidate_pairs(records, lambda r: r.fingerprints)
    per_doc = [0] * N
    for b in j.tolist():
        per_doc[b] += 1
    assert max(per_doc) <= PER_DOCUMENT
    assert len(i) <= N * PER_DOCUMENT < N * (N - 1) // 2  # all pairs would be 179,700


@pytest.mark.es
def test_one_request_of_many_alike_documents_is_flagged_and_stored(es: Elasticsearch, es_url: str) -> None:
    api: FlaskClient = create_app({"es_url": es_url}).test_client()
    index = "test-request-cost"
    es.indices.delete(index=index, ignore_unavailable=True)
    docs = [{"id": f"a{k:04d}", "text": t} for k, t in enumerate(_alike(N))]
    resp = api.post(f"/v1/indices/{index}/documents?refresh=true", json=docs)
    assert resp.status_code == 200, resp.json
    items = resp.json["items"]
    assert [i["status"] for i in items] == ["created"] * N
    assert len({i["cluster"] for i in items}) == 1  # one cluster of copies, named by the first
    assert items[0]["duplicate_of"] is None and all(i["duplicate_of"] for i in items[1:])
    assert es.count(index=index)["count"] == N
    es.indices.delete(index=index)

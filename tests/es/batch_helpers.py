"""What the tests of a batch cut short (Elasticsearch gone, or silent) share: the batch, and what was stored."""

from __future__ import annotations

from elasticsearch import Elasticsearch

from neardup.evaluation.corpus import load_peoples_daily
from neardup.incoming.documents import Incoming

__all__ = ["distinct_docs", "stored_ids"]


def distinct_docs(n: int) -> list[Incoming]:
    """The first ``n`` People's Daily articles as documents ``d0``, ``d1``, …: each its own cluster, none names
    another."""
    texts = [a.text for a in load_peoples_daily()[:n]]
    assert len(set(texts)) == n  # distinct articles
    return [Incoming(f"d{k}", t) for k, t in enumerate(texts)]


def stored_ids(client: Elasticsearch, index: str) -> set[str]:
    """The ids ``index`` holds, after a refresh."""
    client.indices.refresh(index=index)
    return {h["_id"] for h in client.search(index=index, size=100)["hits"]["hits"]}

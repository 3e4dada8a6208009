"""A batch is never half-written: items Elasticsearch would refuse are refused before anything is written, a
batch Elasticsearch refuses in part is undone, and with ``?partial=true`` nothing points at a refused document."""

from __future__ import annotations

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from neardup.service import create_app
from tests.es.holding_proxy import TIMEOUT, holding_proxy
from tests.service.refusal_helpers import assert_refused_first, corpus_text

pytestmark = pytest.mark.es


def _nested(depth: int) -> dict[str, object]:
    value: dict[str, object] = {"leaf": 1}
    for _ in range(depth):
        value = {"o": value}
    return value


@pytest.mark.parametrize(
    "extra",
    [
        {"_id": "other"},
        {"_index": "elsewhere"},
        {"_routing": "r"},
        {"score": float("nan")},
        {"deep": _nested(25)},
        {"": "empty name"},
        {"a..b": 1},
    ],
    ids=["_id", "_index", "_routing", "nan", "too-deep", "empty-name", "dots"],
)
def test_a_document_elasticsearch_would_refuse_is_refused_first_and_nothing_is_written(
    api: FlaskClient, es: Elasticsearch, index: str, extra: dict[str, object]
) -> None:
    assert_refused_first(api, es, index, extra)


def test_a_batch_elasticsearch_refuses_in_part_is_undone(api: FlaskClient, es: Elasticsearch, index: str) -> None:
    first = api.post(
        f"/v1/indices/{index}/documents?refresh=true",
        json=[{"id": "orig", "text": corpus_text(3), "views": 5}, {"id": "keep", "text": corpus_text(4), "views": 1}],
    )
    assert first.status_code == 200
    reprint = "来源：新华社\n" + corpus_text(3)
    # "views" is mapped as a number now: Elasticsearch refuses the third item, after writing the others
    batch = [
        {"id": "keep", "text": corpus_text(4) + "（更新）", "views": 2},
        {"id": "new", "text": reprint, "views": 3},
        {"id": "refused", "text": corpus_text(5), "views": "many"},
    ]
    resp = api.post(f"/v1/indices/{index}/documents?refresh=true", json=batch)
    assert resp.status_code == 400, resp.json
    assert resp.json["error"]["type"] == "batch_refused"
    assert [i["id"] for i in resp.json["error"]["detail"]["items"]] == ["refused"]
    assert es.get(index=index, id="keep")["_source"]["views"] == 1  # the previous version is back
    assert not es.exists(index=index, id="new") and not es.exists(index=index, id="refused")
    assert es.count(index=index)["count"] == 2


def test_partial_keeps_the_accepted_and_nothing_points_at_a_refused_document(
    api: FlaskClient, es: Elasticsearch, index: str
) -> None:
    api.post(f"/v1/indices/{index}/documents?refresh=true", json=[{"id": "seed", "text": corpus_text(6), "views": 1}])
    original = corpus_text(7)
    batch = [
        {"id": "refused-original", "text": original, "views": "many"},
        {"id": "copy", "text": "来源：人民日报\n" + original, "views": 2},
    ]
    resp = api.post(f"/v1/indices/{index}/documents?refresh=true&partial=true", json=batch)
    assert resp.status_code == 200, resp.json
    items = {i["id"]: i for i in resp.json["items"]}
    assert items["refused-original"]["status"] == "error"
    assert items["copy"]["status"] == "created"
    stored = es.get(index=index, id="copy")["_source"]["neardup"]
    assert stored["cluster"] == "copy" and stored["duplicate_of"] is None  # not the refused original
    assert items["copy"]["cluster"] == "copy" and items["copy"]["duplicate_of"] is None


@pytest.mark.parametrize(
    ("how", "status"),
    [({"refuse": 503}, 503), ({"refuse": 429, "times": 10}, 429), ({}, 503)],
    ids=["shard-without-a-copy", "full-queue", "no-answer-in-time"],
)
def test_a_batch_elasticsearch_cannot_take_for_the_moment_is_undone_and_answered_send_it_again(
    es_url: str, es: Elasticsearch, index: str, how: dict[str, int], status: int
) -> None:
    """Refusals that pass within seconds, and a write whose answer did not come in time (it may be carried out: it is
    undone), are no fault of the batch nor of Elasticsearch's for good: 503 (429 for a full queue, once the bulk's own
    retries of it ran out) with Retry-After, as a lookup's are, not the 502 of a failure."""
    with holding_proxy(es_url, hold=1, **how) as proxy:
        api = create_app({"es_url": proxy.url, "es_timeout": TIMEOUT, "es_retries": 0}).test_client()
        resp = api.post(
            f"/v1/indices/{index}/documents",
            json=[{"id": "a", "text": corpus_text(1)}, {"id": "b", "text": corpus_text(2)}],
        )
    assert resp.status_code == status, resp.json
    assert resp.headers.get("Retry-After") == "1"
    assert resp.json["error"]["type"] == "batch_refused"
    assert [i["id"] for i in resp.json["error"]["detail"]["items"]] == ["a", "b"]
    es.indices.refresh(index=index)
    assert es.count(index=index)["count"] == 0  # carried out or not, undone

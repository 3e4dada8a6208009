"""A batch is never half-written: items Elasticsearch would refuse are refused before anything is written, a
batch Elasticsearch refuses in part is undone, and with ``?partial=true`` nothing points at a refused document."""

from __future__ import annotations

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

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

"""An index with a field configuration takes records through the service (:mod:`neardup.service`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from neardup.evaluation.record_sets import template_text
from tests.indices import remove_indices


@pytest.mark.es
def test_an_index_with_a_field_configuration_takes_records_through_the_service(
    es_url: str, index_name: str, wait_for_job: Callable[..., dict[str, Any]]
) -> None:
    from neardup.service import create_app

    api = create_app({"es_url": es_url}).test_client()
    config = {
        "fields": {
            "complaint": {"mode": "text"},
            "category": {"mode": "value", "weight": 2},
            "tags": {"mode": "set"},
            "office": {"mode": "ignore"},
        },
    }
    put = api.put(f"/v1/indices/{index_name}", json=config)
    assert put.status_code == 200 and put.json["fields"]["category"] == {"mode": "value", "weight": 2}
    sports = template_text("春季运动会报名", "报名时间为三月一日至三月十日，各学院统一组织报名")
    library = template_text("图书馆闭馆维修", "图书馆将于四月份闭馆维修一个月，请读者提前归还图书")
    rows = [
        {"id": "a", "complaint": sports, "category": "通知", "tags": ["体育"], "office": "x"},
        {"id": "b", "complaint": sports.replace("认真", "仔细"), "category": "通知", "tags": ["体育"]},
        {"id": "c", "complaint": library, "category": "通知", "tags": ["图书馆"]},
        {"id": "d", "category": None, "complaint": None},
    ]
    resp = api.post(f"/v1/indices/{index_name}/documents?refresh=wait_for", json=rows)  # read right after
    assert resp.status_code == 200, resp.json
    items = {i["id"]: i for i in resp.json["items"]}
    assert items["b"]["duplicate_of"] == "a" and items["c"]["duplicate_of"] is None
    assert items["d"]["cluster"] == "d"
    dups = api.get(f"/v1/indices/{index_name}/documents/a/duplicates").json["items"]
    assert [d["id"] for d in dups] == ["b"]  # c shares the template, not the tags
    bad = api.post(f"/v1/indices/{index_name}/documents", json=[{"id": "e", "complaint": 5}])
    assert bad.status_code == 400 and "complaint" in bad.json["error"]["message"]

    # lookups of a posted record use the index's configuration; text is refused with a reason
    probe = {"complaint": sports.replace("统一", "集中"), "category": "通知", "tags": ["体育"]}
    looked = api.post(f"/v1/indices/{index_name}/duplicates", json={"record": probe})
    assert looked.status_code == 200, looked.json
    # c shares the template but not the tags
    assert {d["id"] for d in looked.json["items"]} == {"a", "b"} and looked.json["status"] == "ok"
    as_text = api.post(f"/v1/indices/{index_name}/duplicates", json={"text": sports})
    assert as_text.status_code == 400 and as_text.json["error"]["type"] == "record_expected"
    both = api.post(f"/v1/indices/{index_name}/duplicates", json={"text": sports, "record": probe})
    assert both.status_code == 400
    refused = api.post(f"/v1/indices/{index_name}/duplicates", json={"record": {"complaint": 5}})
    assert refused.status_code == 400 and "complaint" in refused.json["error"]["message"]

    # reconcile re-clusters the stored records with the same rules: nothing changes
    job = api.post(f"/v1/indices/{index_name}/reconcile").json
    done = wait_for_job(api, job["id"])
    assert done["state"] == "done" and done["result"]["changed"] == 0 and done["result"]["documents"] == 4

    # the same rows put into an index without neardup, then deduped with the configuration
    from elasticsearch import Elasticsearch, helpers

    plain = index_name + "-plain"
    es = Elasticsearch(es_url)
    try:
        es.indices.create(index=plain)
        stored = [*rows, {"id": "e", "complaint": 5}]  # the configuration refuses e: counted, left as it is
        helpers.bulk(
            es, ({"_index": plain, "_id": r["id"], **{k: v for k, v in r.items() if k != "id"}} for r in stored)
        )
        es.indices.refresh(index=plain)
        assert api.put(f"/v1/indices/{plain}", json=config).status_code == 200
        done = wait_for_job(api, api.post(f"/v1/indices/{plain}/dedupe", json={}).json["id"])
        assert done["state"] == "done" and done["result"]["fingerprinted"] == 4, done
        assert done["result"]["refused_records"] == 1
        assert done["result"]["first_refused_record"] == {
            "id": "e",
            "reason": "field 'complaint': text must be a string, got int",
        }
        es.indices.refresh(index=plain)
        hits = es.search(index=plain)["hits"]["hits"]
        got = {h["_id"]: h["_source"]["neardup"]["cluster"] for h in hits if "neardup" in h["_source"]}
        assert got == {i: items[i]["cluster"] for i in items}
        assert len(hits) == 5
    finally:
        remove_indices(es, plain)
        es.close()

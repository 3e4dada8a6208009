"""Bad input, the API key, the OpenAPI description, and Elasticsearch going away mid-run — all
against the real Elasticsearch (a second embedded node is started and stopped for the outage test)."""

from __future__ import annotations

import json
import os
import socket
import time

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from neardup.errors import BatchNotUndone, SearchFailed
from neardup.es.client import IndexInfo
from neardup.service import create_app
from neardup.service.api import common
from tests.nodes import own_node

pytestmark = pytest.mark.es

TEXT = "国务院今天召开常务会议，部署进一步推动经济稳定增长的措施，会议指出要扩大内需。"


@pytest.fixture
def api(es_url: str) -> FlaskClient:
    return create_app({"es_url": es_url, "max_body_bytes": 20_000, "max_documents_per_request": 50}).test_client()


def _count(es: Elasticsearch, index: str) -> int:
    if not es.indices.exists(index=index):
        return 0
    es.indices.refresh(index=index)
    return int(es.count(index=index)["count"])


def _error(resp: object, status: int) -> dict[str, str]:
    assert resp.status_code == status, resp.json  # type: ignore[attr-defined]
    body = resp.json["error"]  # type: ignore[attr-defined]
    assert body["type"] and body["message"]
    return body  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("data", "content_type", "status", "needle"),
    [
        ('{"text": "a"', "application/json", 400, "not valid JSON"),
        ('{"id": "x", "text": 42}', "application/json", 400, "'text' must be a string"),
        ('{"id": "x", "title": "t"}', "application/json", 400, "'text' is missing"),
        ('[{"id": "x", "text": "好"}, {"id": true, "text": "好"}]', "application/json", 400, "item 1"),
        ('[{"id": "x", "text": "好"}, {"id": "x", "text": "好"}]', "application/json", 400, "also appears"),
        ('{"text": "好", "neardup": {}}', "application/json", 400, "reserved"),
        ("[]", "application/json", 400, "no documents"),
        (json.dumps([{"text": "好"}] * 51), "application/json", 413, "limit per request"),
        ("text=hello", "application/x-www-form-urlencoded", 415, "application/json"),
    ],
)
def test_bad_documents_get_a_4xx_and_nothing_is_written(
    api: FlaskClient, es: Elasticsearch, index_name: str, data: str, content_type: str, status: int, needle: str
) -> None:
    resp = api.post(f"/v1/indices/{index_name}/documents", data=data, content_type=content_type)
    assert needle in _error(resp, status)["message"]
    assert _count(es, index_name) == 0


def test_ndjson_with_one_broken_line_names_it_and_writes_nothing(
    api: FlaskClient, es: Elasticsearch, index_name: str
) -> None:
    lines = [json.dumps({"id": f"d{k}", "text": TEXT + str(k)}, ensure_ascii=False) for k in range(5)]
    lines[3] = '{"id": "d3", "text": '
    resp = api.post(f"/v1/indices/{index_name}/documents", data="\n".join(lines), content_type="application/x-ndjson")
    err = _error(resp, 400)
    assert err["message"].startswith("line 4:")
    assert _count(es, index_name) == 0


def test_oversized_body_invalid_index_unknown_ids(api: FlaskClient, index_name: str) -> None:
    big = json.dumps({"text": "好" * 30_000}, ensure_ascii=False)
    _error(api.post(f"/v1/indices/{index_name}/documents", data=big, content_type="application/json"), 413)
    for bad in ["Upper", "_under", "a*b", "a b", "..", "x" * 300]:
        _error(api.put(f"/v1/indices/{bad}"), 400)
        _error(api.get(f"/v1/indices/{bad}/search"), 400)
    assert api.put(f"/v1/indices/{index_name}").json == {"index": index_name, "created": True, "fields": None}
    assert api.put(f"/v1/indices/{index_name}").json["created"] is False
    bad_config = api.put(f"/v1/indices/{index_name}", json={"fields": {"body": {"mode": "blob"}}})
    assert "mode must be one of" in _error(bad_config, 400)["message"]
    assert _error(api.get(f"/v1/indices/{index_name}/documents/nope/duplicates"), 404)["type"] == "document_not_found"
    as_record = api.post(f"/v1/indices/{index_name}/duplicates", json={"record": {"body": TEXT}})
    assert _error(as_record, 400)["type"] == "text_expected"  # no field configuration: text only
    assert "'text' or 'record'" in json.dumps(_error(api.post(f"/v1/indices/{index_name}/duplicates", json={}), 400))
    assert _error(api.get(f"/v1/indices/{index_name}/clusters/nope"), 404)["type"] == "cluster_not_found"
    assert _error(api.get("/v1/jobs/nope"), 404)["type"] == "job_not_found"
    assert _error(api.get("/v1/indices/no-such-index-here/search"), 404)["type"] == "index_not_found"
    assert _error(api.post("/v1/indices/no-such-index-here/dedupe", json={}), 404)["type"] == "index_not_found"
    detail = _error(api.get(f"/v1/indices/{index_name}/search?size=abc&hide_duplicates=maybe"), 400)
    assert "size" in json.dumps(detail) and "hide_duplicates" in json.dumps(detail)
    _error(api.post("/v1/fingerprint", json={"title": "no text"}), 400)


def test_writes_need_the_api_key_when_one_is_set(es_url: str, es: Elasticsearch, index_name: str) -> None:
    api = create_app({"es_url": es_url, "api_key": "s3cret"}).test_client()
    doc = {"id": "a", "text": TEXT}
    assert _error(api.post(f"/v1/indices/{index_name}/documents", json=doc), 401)["type"] == "unauthorized"
    _error(api.post(f"/v1/indices/{index_name}/documents", json=doc, headers={"X-API-Key": "wrong"}), 401)
    _error(api.put(f"/v1/indices/{index_name}"), 401)
    assert _count(es, index_name) == 0
    ok = api.post(f"/v1/indices/{index_name}/documents", json=doc, headers={"X-API-Key": "s3cret"})
    assert ok.status_code == 200 and ok.json["items"][0]["status"] == "created"
    ok2 = api.post(f"/v1/indices/{index_name}/documents", json=doc, headers={"Authorization": "ApiKey s3cret"})
    assert ok2.json["items"][0]["status"] == "updated"
    assert api.get(f"/v1/indices/{index_name}/search").status_code == 200  # reads stay open
    _error(api.post(f"/v1/indices/{index_name}/reconcile"), 401)


def test_openapi_describes_every_endpoint(api: FlaskClient) -> None:
    spec = api.get("/openapi.json").json
    paths = spec["paths"]
    expected = {
        ("/healthz", "get"),
        ("/v1/indices/{index}", "put"),
        ("/v1/indices/{index}/documents", "post"),
        ("/v1/indices/{index}/documents/{doc_id}/duplicates", "get"),
        ("/v1/indices/{index}/duplicates", "post"),
        ("/v1/indices/{index}/search", "get"),
        ("/v1/indices/{index}/clusters", "get"),
        ("/v1/indices/{index}/clusters/{cluster_id}", "get"),
        ("/v1/indices/{index}/dedupe", "post"),
        ("/v1/indices/{index}/reconcile", "post"),
        ("/v1/jobs/{job_id}", "get"),
        ("/v1/fingerprint", "post"),
    }
    assert expected <= {(p, m) for p, ops in paths.items() for m in ops}
    search_params = {p["name"] for p in paths["/v1/indices/{index}/search"]["get"]["parameters"]}
    assert {"q", "hide_duplicates", "size", "from"} <= search_params
    body = paths["/v1/indices/{index}/documents"]["post"]["requestBody"]["content"]
    assert {"application/json", "application/x-ndjson"} <= set(body)
    assert "text" in spec["components"]["schemas"]["DocumentIn"]["required"]
    # errors as the service sends them, and the answers any endpoint may give
    for name in ("HTTPError", "ValidationError"):
        assert spec["components"]["schemas"][name]["required"] == ["error"], name
    for path, method in expected - {("/healthz", "get")}:
        assert {"400", "401", "503"} <= set(paths[path][method]["responses"]), (path, method)
        assert {"ApiKey": []} in paths[path][method]["security"], (path, method)
    assert "503" in paths["/healthz"]["get"]["responses"]


def test_the_health_check_asks_another_node_when_the_first_named_is_down(es_url: str) -> None:
    """Of ``NEARDUP_ES_URL``'s nodes, one down (the first named, so the first asked) and one up: the cluster
    answers, and so does the health check, every time."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{s.getsockname()[1]}"  # nothing listens there once closed
    api = create_app({"es_url": f"{down},{es_url}"}).test_client()
    answers = [api.get("/healthz") for _ in range(4)]
    assert [a.status_code for a in answers] == [200] * 4, answers[0].json


def test_a_batch_that_could_not_be_undone_is_a_503_naming_what_may_stay_written(es_url: str) -> None:
    # how a write view fails when Elasticsearch goes away mid-batch (tests/es/test_outage_mid_batch.py makes it
    # happen); raised here from a route of the test's own, through the service's own error handlers
    app = create_app({"es_url": es_url})

    def fail() -> None:
        raise BatchNotUndone(["a", "b"])

    app.add_url_rule("/test-not-undone", view_func=fail)
    body = _error(app.test_client().get("/test-not-undone"), 503)
    assert body["type"] == "elasticsearch_unavailable"
    assert "2 of its documents may still be written (a, b)" in body["message"]
    assert body["detail"] == {"written": ["a", "b"]}


@pytest.mark.parametrize(
    ("es_status", "es_type", "status", "kind", "retry_after"),
    [
        (429, "es_rejected_execution_exception", 429, "elasticsearch_busy", "1"),
        (503, "search_phase_execution_exception", 503, "elasticsearch_unavailable", "1"),
        (504, "search_phase_execution_exception", 503, "elasticsearch_unavailable", "1"),
        (400, "index_closed_exception", 400, "elasticsearch_rejected", None),
        (404, "index_not_found_exception", 404, "index_not_found", None),
        (500, "exception", 502, "elasticsearch_error", None),
        (401, "security_exception", 502, "elasticsearch_refused_service", None),
        (403, "security_exception", 502, "elasticsearch_refused_service", None),
        (403, "cluster_block_exception", 400, "elasticsearch_rejected", None),
    ],
)
def test_a_failed_search_is_answered_by_what_the_client_can_do(
    es_url: str, es_status: int, es_type: str, status: int, kind: str, retry_after: str | None
) -> None:
    """A busy node or a shard without a copy passes: the client is told to retry (429/503 with Retry-After); a
    request Elasticsearch refused is the client's to change (400); its own failure, or a refusal of the service's
    credentials (401/403), is a 502: nothing the client changes mends it. Real statuses come
    from tests/es/test_unsearchable_shard.py; here each is raised from a route of the test's own."""
    app = create_app({"es_url": es_url})

    def fail() -> None:
        raise SearchFailed(es_status, {"type": es_type, "reason": f"what Elasticsearch said ({es_status})"})

    app.add_url_rule("/test-search-failed", view_func=fail)
    resp = app.test_client().get("/test-search-failed")
    body = _error(resp, status)
    assert body["type"] == kind and f"({es_status})" in body["message"]
    assert resp.headers.get("Retry-After") == retry_after


@pytest.mark.skipif(bool(os.environ.get("ES_URL")), reason="needs an embedded node it may stop and restart")
def test_elasticsearch_outage_gives_503_loses_nothing_and_recovers() -> None:
    with own_node("neardup-outage-", heap="512m") as node:
        url = node.start().url
        app = create_app({"es_url": url, "es_retries": 1, "es_timeout": 5})
        api = app.test_client()
        acked: list[str] = []
        for k in range(3):
            resp = api.post("/v1/indices/outage/documents", json={"id": f"a{k}", "text": TEXT + str(k)})
            assert resp.status_code == 200
            acked += [i["id"] for i in resp.json["items"] if i["status"] != "error"]
        node.stop()
        t0 = time.monotonic()
        down = [
            api.get("/healthz"),
            api.post("/v1/indices/outage/documents", json={"id": "lost", "text": TEXT}),
            api.get("/v1/indices/outage/search"),
            api.get("/v1/indices/outage/clusters"),
        ]
        elapsed = time.monotonic() - t0
        for resp in down:
            assert _error(resp, 503)["type"] == "elasticsearch_unavailable"
        print(f"4 requests answered 503 in {elapsed:.2f}s")
        assert node.start().url == url  # the same port and data
        for _ in range(50):  # the same app, no restart: it reconnects
            if api.get("/healthz").status_code == 200:
                break
            time.sleep(0.2)
        assert api.get("/healthz").status_code == 200
        resp = api.post("/v1/indices/outage/documents", json={"id": "after", "text": TEXT + "0"})
        assert resp.status_code == 200 and resp.json["items"][0]["duplicate_of"] == "a0"
        es = Elasticsearch(url)
        es.indices.refresh(index="outage")
        stored = {h["_id"] for h in es.search(index="outage", size=100)["hits"]["hits"]}
        es.close()
        assert set(acked) <= stored and "lost" not in stored
    assert not node.data.exists()  # the temporary cluster went with its data


def test_elasticsearch_lost_during_an_index_set_up_is_the_503_of_any_outage(monkeypatch: pytest.MonkeyPatch) -> None:
    """Elasticsearch answers the check of the index and is gone when ``setup_index`` runs (which raises neardup's
    ``ESUnavailable``, not the client's error): the same 503 as every outage, and where Elasticsearch is stays
    unsaid."""
    closed = "http://127.0.0.1:9"
    monkeypatch.setattr(common, "inspect_index", lambda client, index: IndexInfo(index, "missing", {}))
    api = create_app({"es_url": closed, "es_retries": 0}).test_client()
    body = _error(api.put("/v1/indices/lost-in-set-up"), 503)
    assert body == {"type": "elasticsearch_unavailable", "message": "Elasticsearch is unreachable; retry later"}

"""Reads need an index with the neardup mapping, ``NEARDUP_INDEX_PATTERNS`` limits the indices the service
touches, and ``NEARDUP_PROTECT_READS`` puts every read behind the API key."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from neardup.service import create_app
from tests.indices import remove_indices
from tests.service.access_helpers import TEXT, error_of, every_request

pytestmark = pytest.mark.es


def test_reads_refuse_an_index_without_the_neardup_mapping(
    api: FlaskClient, es: Elasticsearch, index_name: str, wait_for_job: Callable[..., dict[str, Any]]
) -> None:
    """The issue's hr-salaries: created directly in Elasticsearch, read through every endpoint."""
    es.indices.create(index=index_name)
    es.index(index=index_name, id="1", document={"name": "Wang", "salary": 91000, "text": TEXT}, refresh=True)
    for method, url, kwargs in every_request(index_name):
        if method == "get" or url.endswith("/duplicates"):
            resp = getattr(api, method)(url, **kwargs)
            body = error_of(resp, 404)
            assert body["type"] == "not_a_neardup_index", (url, body)
            assert "Wang" not in resp.get_data(as_text=True) and "91000" not in resp.get_data(as_text=True)
    # a write prepares it (dedupe is how a user's own index becomes a neardup index); then it reads
    job = wait_for_job(api, api.post(f"/v1/indices/{index_name}/dedupe", json={}).json["id"])
    assert job["state"] == "done", job
    assert api.get(f"/v1/indices/{index_name}/search").json["total"] == 1


def test_reads_refuse_an_index_whose_neardup_fields_have_other_types(
    api: FlaskClient, es: Elasticsearch, index_name: str
) -> None:
    es.index(index=index_name, id="1", document={"text": TEXT, "neardup": {"b0": "x", "version": "v"}}, refresh=True)
    body = error_of(api.get(f"/v1/indices/{index_name}/search"), 404)
    assert body["type"] == "not_a_neardup_index" and "neardup.b0" in body["message"]
    # nor is it written to: no set-up can change those types, so the write is refused before anything is written
    refused = error_of(api.post(f"/v1/indices/{index_name}/documents", json={"id": "2", "text": TEXT}), 409)
    assert refused["type"] == "not_a_neardup_index" and "neardup.b0" in refused["message"]
    assert es.count(index=index_name)["count"] == 1


def test_index_patterns_limit_the_indices_the_service_touches(es_url: str, es: Elasticsearch, index_name: str) -> None:
    allowed = f"allowed-{uuid.uuid4().hex[:8]}"
    api = create_app({"es_url": es_url, "index_patterns": "allowed-*, other"}).test_client()
    try:
        for method, url, kwargs in every_request(index_name):
            body = error_of(getattr(api, method)(url, **kwargs), 403)
            assert body["type"] == "index_not_allowed" and "NEARDUP_INDEX_PATTERNS" in body["message"], url
        assert not es.indices.exists(index=index_name)
        assert api.put(f"/v1/indices/{allowed}").status_code == 200
        assert api.get(f"/v1/indices/{allowed}/search").status_code == 200
        # an allowed name that is an alias of an index outside the patterns reads nothing of it
        es.indices.create(index=index_name)
        es.indices.put_alias(index=index_name, name=f"{allowed}-alias")
        assert error_of(api.get(f"/v1/indices/{allowed}-alias/search"), 403)["type"] == "index_not_allowed"
    finally:
        remove_indices(es, allowed)


def test_protect_reads_puts_every_read_behind_the_key(es_url: str, es: Elasticsearch, index_name: str) -> None:
    api = create_app({"es_url": es_url, "api_key": "s3cret", "protect_reads": True}).test_client()
    key = {"X-API-Key": "s3cret"}
    assert api.put(f"/v1/indices/{index_name}", headers=key).status_code == 200
    assert (
        api.post(f"/v1/indices/{index_name}/documents", json={"id": "a", "text": TEXT}, headers=key).status_code == 200
    )
    reads = [(m, u, k) for m, u, k in every_request(index_name) if m == "get" or u.endswith("/duplicates")]
    reads.append(("get", "/v1/jobs/0123456789abcdef0123456789abcdef", {}))
    for method, url, kwargs in reads:
        body = error_of(getattr(api, method)(url, **kwargs), 401)
        assert body["type"] == "unauthorized", url
        with_key = getattr(api, method)(url, headers=key, **kwargs)
        assert with_key.status_code in (200, 404), (url, with_key.get_data(as_text=True)[:200])
        if with_key.status_code == 404:
            assert with_key.json["error"]["type"] in ("cluster_not_found", "document_not_found", "job_not_found")
    assert api.get("/healthz").status_code == 200  # the health check stays open
    # without the setting, reads stay open as before
    open_api = create_app({"es_url": es_url, "api_key": "s3cret"}).test_client()
    assert open_api.get(f"/v1/indices/{index_name}/search").status_code == 200


def test_a_browser_reads_the_protected_page_with_the_key_as_its_password(
    es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """A browser cannot send X-API-Key: a page refused for want of the key asks for Basic credentials, and the key
    as their password (any user name) opens the pages and the API the page's script calls."""
    api = create_app({"es_url": es_url, "api_key": "s3cret", "protect_reads": True}).test_client()
    assert api.put(f"/v1/indices/{index_name}", headers={"X-API-Key": "s3cret"}).status_code == 200

    def basic(user: str, password: str) -> dict[str, str]:
        return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}

    for url in (f"/?index={index_name}", f"/clusters?index={index_name}", f"/overview?index={index_name}"):
        refused = api.get(url)
        assert error_of(refused, 401)["type"] == "unauthorized"
        assert refused.headers["WWW-Authenticate"] == 'Basic realm="neardup", charset="UTF-8"', url
        assert error_of(api.get(url, headers=basic("reader", "wrong")), 401)["type"] == "unauthorized"
        assert api.get(url, headers=basic("reader", "s3cret")).status_code == 200, url
    assert api.get(f"/v1/indices/{index_name}/search?q=x", headers=basic("", "s3cret")).status_code == 200
    assert "WWW-Authenticate" not in api.get(f"/v1/indices/{index_name}/search").headers  # the API does not ask
    assert error_of(api.get(f"/?index={index_name}", headers={"Authorization": "Basic %%%"}), 401)
    # a key outside ASCII, as a browser sends it (UTF-8)
    other = create_app({"es_url": es_url, "api_key": "钥匙", "protect_reads": True}).test_client()
    assert other.get(f"/?index={index_name}", headers=basic("u", "钥匙")).status_code == 200
    # writes take no Basic credentials: a browser would attach them to another site's form posted here
    for url in (f"/v1/indices/{index_name}/reconcile", f"/v1/indices/{index_name}/dedupe"):
        posted = api.post(url, headers=basic("reader", "s3cret"), data={"x": "1"})
        assert error_of(posted, 401)["type"] == "unauthorized", url
    # reads protected with no key set: no password opens them, so the page does not ask for one
    keyless = create_app({"es_url": es_url, "protect_reads": True}).test_client()
    refused = keyless.get(f"/?index={index_name}", headers=basic("reader", ""))
    assert error_of(refused, 401)["type"] == "unauthorized" and "WWW-Authenticate" not in refused.headers


def test_settings_read_the_new_variables() -> None:
    from neardup.config import Settings
    from neardup.es.client import INTERNAL_INDICES
    from neardup.es.jobs import JOBS_INDEX
    from neardup.integrations.sql_import import STATE_INDEX

    s = Settings.from_env({"NEARDUP_INDEX_PATTERNS": "news-*,hr", "NEARDUP_PROTECT_READS": "true"})
    assert s.index_patterns == "news-*,hr" and s.protect_reads is True
    assert Settings().index_patterns == "*" and Settings().protect_reads is False
    assert {JOBS_INDEX, STATE_INDEX} <= INTERNAL_INDICES


def test_the_key_is_checked_before_the_request_is_read(es_url: str, index_name: str) -> None:
    """A client without the key learns nothing of what its request would have done, and costs no decoding."""
    api = create_app({"es_url": es_url, "api_key": "s3cret", "protect_reads": True}).test_client()
    for method, url, body in [
        ("post", f"/v1/indices/{index_name}/dedupe", '{"workers": 99}'),
        ("post", f"/v1/indices/{index_name}/documents", "{not json"),
        ("post", f"/v1/indices/{index_name}/duplicates", "{not json"),
        ("post", "/v1/fingerprint", '{"text": "' + TEXT + '"}'),  # it costs a worker's CPU as a lookup does
    ]:
        resp = getattr(api, method)(url, data=body, content_type="application/json")
        assert error_of(resp, 401)["type"] == "unauthorized", url


@pytest.mark.parametrize("key", ["clé", "clà", "丅"])  # the last bytes of the last two read as latin-1 blanks
def test_a_key_outside_ascii_matches_as_sent(es_url: str, index_name: str, key: str) -> None:
    api = create_app({"es_url": es_url, "api_key": key}).test_client()
    # a WSGI server hands a header's bytes over as latin-1 code points: the key sent in UTF-8, and sent in latin-1
    # (as Python's http.client sends a header) where it can be
    in_utf8 = key.encode().decode("latin-1")
    sent = [in_utf8, key] if all(ord(c) < 256 for c in key) else [in_utf8]
    for value in sent:
        for header in ({"X-API-Key": value}, {"Authorization": f"ApiKey {value}"}):
            assert api.put(f"/v1/indices/{index_name}", headers=header).status_code == 200, (key, header)
    assert error_of(api.put(f"/v1/indices/{index_name}", headers={"X-API-Key": "cle"}), 401)["type"] == "unauthorized"


def test_a_client_may_ask_what_an_endpoint_takes_without_the_key(es_url: str, index_name: str) -> None:
    api = create_app({"es_url": es_url, "api_key": "s3cret"}).test_client()
    resp = api.options(f"/v1/indices/{index_name}/documents")
    assert resp.status_code == 200 and "POST" in resp.headers["Allow"]

"""Schemathesis fuzzes the service through its own OpenAPI description, against the real
Elasticsearch: whatever the input, no 5xx, and every error is the JSON error shape."""

from __future__ import annotations

import json

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from neardup.config import Settings
from neardup.es.client import RecordConfigs, make_client
from neardup.service import create_app

pytestmark = pytest.mark.es


@schemathesis.serializer("application/x-ndjson")
def _ndjson(ctx: object, value: object) -> bytes:
    """The documents body's NDJSON form: generated strings go as they are (mostly broken lines)."""
    return value.encode("utf-8") if isinstance(value, str) else json.dumps(value).encode("utf-8")


# The schema is loaded at import; the fixture below points the app at the session's Elasticsearch
# (schemathesis' lazy fixture loader does not work with this pytest).
APP = create_app({"es_url": "http://127.0.0.1:9", "ui_index": "fuzz"})
schema = schemathesis.openapi.from_wsgi("/openapi.json", APP)


@pytest.fixture(autouse=True, scope="module")
def _real_elasticsearch(es_url: str) -> None:
    state = APP.extensions["neardup"]
    state.settings = Settings.from_env(es_url=es_url, ui_index="fuzz")
    state.client = make_client(state.settings)
    state.record_configs = RecordConfigs(state.client, state.settings.index_cache_seconds)


@schema.parametrize()
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case: schemathesis.Case) -> None:
    if case.path_parameters and "index" in case.path_parameters:
        case.path_parameters["index"] = "fuzz-" + str(case.path_parameters["index"])[:20]
    response = case.call()
    assert response.status_code < 500, (case.method, case.path, response.status_code, response.text[:300])
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error"} and body["error"]["type"] and body["error"]["message"]

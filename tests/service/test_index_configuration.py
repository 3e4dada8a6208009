"""``PUT /v1/indices/{index}`` with a field configuration, and the records it makes the index take: the text limit
holds a written record as it holds a looked-up one; an index running neardup's text pipeline is refused; the
answer counts the documents fingerprinted otherwise; the OpenAPI description says all of it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from neardup.es.client import read_record_config, setup_index
from neardup.es.pipeline import PIPELINE_ID, install_pipeline, nodes_without_processor, pipeline_body, use_pipeline
from neardup.evaluation.corpus import load_peoples_daily
from neardup.service import create_app
from tests.indices import remove_indices

pytestmark = pytest.mark.es

CONFIG = {"fields": {"complaint": {"mode": "text"}, "category": {"mode": "value", "weight": 2}}}
#: a small NEARDUP_MAX_TEXT_CHARS, so that a record over it is a small request
LIMIT = 1000


@pytest.fixture(scope="module")
def small(es_url: str) -> FlaskClient:
    return create_app({"es_url": es_url, "max_text_chars": LIMIT}).test_client()


def test_a_record_is_held_to_the_text_limit_as_its_lookup_is(
    small: FlaskClient, es: Elasticsearch, index_name: str
) -> None:
    """The characters of a record's fields together, written or looked up: over the limit a write is a 400 naming
    it (as for a text) and nothing is written, a lookup a 413."""
    assert small.put(f"/v1/indices/{index_name}", json=CONFIG).status_code == 200
    over = {"complaint": "环保" * (LIMIT // 2), "category": "x"}
    written = small.post(f"/v1/indices/{index_name}/documents", json=[{"id": "big", **over}])
    assert written.status_code == 400, written.json
    error = written.json["error"]
    assert error["type"] == "invalid_document" and error["detail"] == {"at": "item 0"}
    assert f"{LIMIT + 1} characters together; the limit is {LIMIT}" in error["message"]
    es.indices.refresh(index=index_name)
    assert es.count(index=index_name)["count"] == 0
    looked = small.post(f"/v1/indices/{index_name}/duplicates", json={"record": over})
    assert looked.status_code == 413 and looked.json["error"]["type"] == "text_too_long"

    at_limit = {"complaint": "环保" * (LIMIT // 2 - 1), "category": "xy"}
    taken = small.post(f"/v1/indices/{index_name}/documents?refresh=wait_for", json=[{"id": "full", **at_limit}])
    assert taken.status_code == 200 and taken.json["items"][0]["status"] == "created", taken.json
    assert small.post(f"/v1/indices/{index_name}/duplicates", json={"record": at_limit}).status_code == 200


@pytest.fixture
def own_pipeline(es: Elasticsearch) -> Iterator[str]:
    """A user's pipeline holding neardup's processor (as ``check_pipeline`` tells a user with a pipeline to do)."""
    if nodes_without_processor(es):
        pytest.skip("this cluster has no neardup plugin")
    name = "test-users-pipeline-with-neardup"
    es.ingest.put_pipeline(id=name, description="the user's", processors=pipeline_body()["processors"])
    yield name
    es.ingest.delete_pipeline(id=name)


def test_an_index_running_neardups_text_pipeline_takes_no_field_configuration(
    api: FlaskClient, es: Elasticsearch, index_name: str, own_pipeline: str
) -> None:
    """``neardup setup --pipeline`` made the processor, which reads ``text``, the index's default pipeline: records
    written by any other client would all fail there. Refused before anything changes, with what to do."""
    setup_index(es, index_name)
    use_pipeline(es, index_name, install_pipeline(es))
    refused = api.put(f"/v1/indices/{index_name}", json=CONFIG)
    assert refused.status_code == 409, refused.json
    error = refused.json["error"]
    assert error["type"] == "text_pipeline" and error["detail"] == {"pipeline": PIPELINE_ID}
    message = error["message"]
    assert f"runs the ingest pipeline {PIPELINE_ID!r} by default" in message, message
    assert f"neardup setup {index_name} --pipeline" in message and '"index.default_pipeline": null' in message
    assert read_record_config(es, index_name) is None
    assert api.put(f"/v1/indices/{index_name}").status_code == 200  # an empty body changes nothing: taken

    # deleted, the index would come back from its template with the pipeline: not created by a refused PUT
    es.indices.delete(index=index_name)
    assert api.put(f"/v1/indices/{index_name}", json=CONFIG).status_code == 409
    assert not es.indices.exists(index=index_name)

    # a pipeline of the user's own with the processor in it
    es.indices.create(index=index_name, settings={"index.default_pipeline": own_pipeline})
    theirs = api.put(f"/v1/indices/{index_name}", json=CONFIG)
    assert theirs.status_code == 409 and theirs.json["error"]["detail"] == {"pipeline": own_pipeline}
    es.indices.put_settings(index=index_name, settings={"index.default_pipeline": None})
    assert api.put(f"/v1/indices/{index_name}", json=CONFIG).status_code == 200
    remove_indices(es, index_name)


def test_the_answer_counts_the_documents_fingerprinted_otherwise(
    api: FlaskClient, es: Elasticsearch, index_name: str, wait_for_job: Callable[..., dict[str, Any]]
) -> None:
    """Changing an index's fingerprinting by PUT is deliberate, so it is taken; the answer says how many documents
    records are not compared with, and that a dedupe fingerprints them by the configuration."""
    texts = [{"id": f"t{k}", "text": a.text} for k, a in enumerate(load_peoples_daily()[:3])]
    assert api.post(f"/v1/indices/{index_name}/documents?refresh=wait_for", json=texts).status_code == 200
    put = api.put(f"/v1/indices/{index_name}", json=CONFIG)
    assert put.status_code == 200, put.json
    other = put.json["fingerprinted_otherwise"]
    assert other["documents"] == 3, put.json
    assert other["message"].startswith("3 documents of the index are not fingerprinted by this field configuration")
    assert f"POST /v1/indices/{index_name}/dedupe" in other["message"]
    assert f"`neardup dedupe {index_name}`" in other["message"]
    assert "fingerprinted_otherwise" not in api.put(f"/v1/indices/{index_name}").json  # no configuration given

    rows = [{"id": "r1", "complaint": load_peoples_daily()[5].text, "category": "环保"}]
    assert api.post(f"/v1/indices/{index_name}/documents?refresh=wait_for", json=rows).status_code == 200
    same = api.put(f"/v1/indices/{index_name}", json=CONFIG).json["fingerprinted_otherwise"]
    assert same["documents"] == 3  # the texts; the record is of this configuration
    changed = {"fields": CONFIG["fields"] | {"category": {"mode": "value", "weight": 3}}}
    assert api.put(f"/v1/indices/{index_name}", json=changed).json["fingerprinted_otherwise"]["documents"] == 4

    done = wait_for_job(api, api.post(f"/v1/indices/{index_name}/dedupe", json={}).json["id"])
    assert done["state"] == "done", done
    assert api.put(f"/v1/indices/{index_name}", json=changed).json["fingerprinted_otherwise"] == {
        "documents": 0,
        "message": None,
    }


def test_the_openapi_description_of_the_index_put_and_of_a_score(api: FlaskClient) -> None:
    """The /docs page sends what the description gives: the PUT's body (a field configuration), its refusals, and
    the documents fingerprinted otherwise; a lookup's score is said to be the combined one where it is."""
    spec = api.get("/openapi.json").json
    schemas = spec["components"]["schemas"]
    put = spec["paths"]["/v1/indices/{index}"]["put"]
    body = put["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert set(schemas[body]["properties"]) == {"fields", "mu", "min_combined"}
    field = schemas[body]["properties"]["fields"]["additionalProperties"]["$ref"].rsplit("/", 1)[1]
    assert schemas[field]["properties"]["mode"]["enum"] == ["text", "value", "set", "ignore"]
    assert {"400", "409"} <= set(put["responses"])
    out = put["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert "dedupe" in schemas[out]["properties"]["fingerprinted_otherwise"]["description"]
    score = schemas["DuplicateOut"]["properties"]["score"]["description"]
    assert "combined score" in score and "mu" in score

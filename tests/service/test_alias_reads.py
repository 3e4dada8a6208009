"""Reads through an alias: Elasticsearch answers a mapping request by the indices behind it, never by the alias, so
what neardup keeps in an index's mapping (its field configuration) is read from them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from neardup.es.client import read_record_config
from tests.indices import remove_indices
from tests.service.access_helpers import TEXT, error_of

pytestmark = pytest.mark.es

RECORDS = {"fields": {"complaint": {"mode": "text"}, "category": {"mode": "value"}}}


@pytest.fixture
def names(es: Elasticsearch, index_name: str) -> Iterator[tuple[str, str, str]]:
    """A text index, a records index and an alias name, all removed afterwards."""
    text, records, alias = f"{index_name}-text", f"{index_name}-records", f"{index_name}-alias"
    yield text, records, alias
    remove_indices(es, text, records)


def test_lookups_through_an_alias_read_the_configuration_of_the_index_behind_it(
    api: FlaskClient, es: Elasticsearch, names: tuple[str, str, str]
) -> None:
    text, records, alias = names
    assert api.put(f"/v1/indices/{text}").status_code == 200
    posted = api.post(f"/v1/indices/{text}/documents?refresh=wait_for", json={"id": "a", "text": TEXT})
    assert posted.status_code == 200, posted.json
    es.indices.put_alias(index=text, name=alias)

    looked = api.post(f"/v1/indices/{alias}/duplicates", json={"text": TEXT + "。"})
    assert looked.status_code == 200, looked.json
    assert [i["id"] for i in looked.json["items"]] == ["a"]
    assert api.get(f"/v1/indices/{alias}/documents/a/duplicates").status_code == 200
    assert read_record_config(es, alias) is None

    # behind one alias, indices that read their documents differently: refused, naming them
    assert api.put(f"/v1/indices/{records}", json=RECORDS).status_code == 200
    assert read_record_config(es, records) == RECORDS
    both = f"{alias}-both"  # a new name: the service keeps what it read of a name for a few seconds
    es.indices.update_aliases(actions=[{"add": {"indices": [text, records], "alias": both}}])
    body = error_of(api.post(f"/v1/indices/{both}/duplicates", json={"text": TEXT}), 400)
    assert text in body["message"] and records in body["message"], body
    # a search reads them all, as texts (no one configuration reads both)
    for url in (f"/v1/indices/{both}/search?q=中国", f"/v1/indices/{both}/clusters", f"/?index={both}"):
        assert api.get(url).status_code == 200, url


def test_a_stored_document_and_cluster_titles_are_read_through_an_alias_of_several_indices(
    api: FlaskClient, es: Elasticsearch, names: tuple[str, str, str]
) -> None:
    first, second, alias = names
    for index in (first, second):
        assert api.put(f"/v1/indices/{index}").status_code == 200
    docs = [{"id": "a", "title": "原文", "text": TEXT}, {"id": "b", "text": TEXT + "。"}]
    assert api.post(f"/v1/indices/{first}/documents?refresh=true", json=docs).status_code == 200
    assert api.post(f"/v1/indices/{second}/documents?refresh=true", json={"id": "c", "text": TEXT}).status_code == 200
    es.indices.update_aliases(actions=[{"add": {"indices": [first, second], "alias": alias}}])

    # Elasticsearch refuses a get through such an alias; the lookup reads the document by a search of its id
    looked = api.get(f"/v1/indices/{alias}/documents/b/duplicates")
    assert looked.status_code == 200, looked.json
    assert {i["id"] for i in looked.json["items"]} == {"a", "c"}
    assert error_of(api.get(f"/v1/indices/{alias}/documents/nope/duplicates"), 404)["type"] == "document_not_found"
    listed = api.get(f"/v1/indices/{alias}/clusters")
    assert listed.status_code == 200, listed.json
    assert {(c["cluster"], c["title"]) for c in listed.json["clusters"]} == {("a", "原文")}

    # one id in both indices: which of them is meant cannot be told
    assert api.post(f"/v1/indices/{second}/documents?refresh=true", json={"id": "a", "text": "别的"}).status_code == 200
    body = error_of(api.get(f"/v1/indices/{alias}/documents/a/duplicates"), 409)
    assert body["type"] == "ambiguous_document" and first in body["message"] and second in body["message"], body

"""Candidate lookup against the real Elasticsearch: when more documents share a block than the
candidate cap allows, the cap must keep the ones that share the most block tokens; a failed search
is an error that says why."""

from __future__ import annotations

import pytest
from elasticsearch import Elasticsearch, helpers

from neardup.errors import SearchFailed
from neardup.es.client import setup_index
from neardup.es.lookup import find_duplicates, search_candidates
from neardup.evaluation.corpus import load_peoples_daily
from neardup.ingest.fingerprint import Fingerprinter
from neardup.ingest.verify import VerifyConfig
from neardup.mappings import schema

pytestmark = pytest.mark.es


def test_the_candidate_cap_keeps_the_documents_sharing_most_block_tokens(es: Elasticsearch, index_name: str) -> None:
    fp = Fingerprinter.default()
    articles = load_peoples_daily()
    target = fp.fingerprint(articles[0].text, articles[0].title)
    reprint = fp.fingerprint("来源：新华社\n" + articles[0].text, articles[0].title)
    tokens = target.block_tokens()
    shared_by_reprint = sum(len(set(a) & set(b)) for a, b in zip(tokens, reprint.block_tokens(), strict=True))
    assert shared_by_reprint >= 8  # a reprint shares many (seed, block) tokens
    setup_index(es, index_name)
    # 40 unrelated articles that each share exactly one token per block field with the target (as
    # boilerplate does): under a per-field score they tie with the reprint, which comes last
    actions = []
    for k, article in enumerate(articles[1:41]):
        fields = schema.record_fields(fp.fingerprint(article.text, article.title))
        for b, name in enumerate(schema.BLOCKS):
            fields[name] = [tokens[b][k % len(tokens[b])], *fields[name][1:]]
        fields[schema.INDEXED_AT] = f"2026-01-01T00:00:{k:02d}Z"
        actions.append({"_index": index_name, "_id": f"noise-{k}", schema.ROOT: fields})
    actions.append(
        {
            "_index": index_name,
            "_id": "reprint",
            schema.ROOT: schema.record_fields(reprint) | {schema.INDEXED_AT: "2026-01-02T00:00:00Z"},
        }
    )
    helpers.bulk(es, actions, refresh="wait_for")

    [candidates] = search_candidates(es, index_name, [target], max_candidates=5)
    assert len(candidates) == 5 and candidates[0].id == "reprint"
    found, looked_at = find_duplicates(es, index_name, target, VerifyConfig(), max_candidates=5)
    assert looked_at == 5 and [f.doc.id for f in found] == ["reprint"]


def test_a_failed_candidate_search_is_an_error_with_its_status(es: Elasticsearch, es_url: str, index_name: str) -> None:
    from neardup.service import create_app

    fp = Fingerprinter.default()
    record = fp.fingerprint(load_peoples_daily()[0].text)
    setup_index(es, index_name)
    es.indices.close(index=index_name)
    with pytest.raises(SearchFailed) as failed:
        search_candidates(es, index_name, [record], max_candidates=5)
    assert failed.value.status == 400 and failed.value.error["type"] == "index_closed_exception"
    api = create_app({"es_url": es_url}).test_client()
    resp = api.post(f"/v1/indices/{index_name}/duplicates", json={"text": load_peoples_daily()[0].text})
    assert resp.status_code == 400 and resp.json["error"]["type"] == "elasticsearch_rejected", resp.json
    assert "closed" in resp.json["error"]["message"]

"""The HTTP service against the real Elasticsearch: ingest-time flagging, hide-duplicates search,
clusters, batch dedupe, concurrent ingest + reconcile, lookups.

The labelled set is a small People's Daily news set (reprint variants + boilerplate hard negatives).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from elasticsearch import Elasticsearch, helpers
from flask.testing import FlaskClient

from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.metrics import pairwise_scores
from neardup.evaluation.sets import Doc, news_set
from neardup.ingest.cluster import cluster_records
from neardup.ingest.fingerprint import Fingerprinter
from neardup.ingest.verify import VerifyConfig
from neardup.service import create_app

pytestmark = pytest.mark.es


@pytest.fixture(scope="module")
def docs() -> list[Doc]:
    """Ids renumbered in the set's (shuffled) order, so _id order = ingest order: a plain index has
    no other order for dedupe to follow."""
    shuffled = news_set(load_peoples_daily(), seed=11, groups=40, singles=80)
    return [Doc(f"d{k:04d}", d.title, d.text, d.group) for k, d in enumerate(shuffled)]


@pytest.fixture(scope="module")
def api(es_url: str) -> FlaskClient:
    return create_app({"es_url": es_url}).test_client()


def _ndjson(docs: list[Doc]) -> str:
    return "\n".join(json.dumps({"id": d.id, "title": d.title, "text": d.text}, ensure_ascii=False) for d in docs)


def _ingest(api: FlaskClient, index: str, docs: list[Doc], batch: int = 60) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for k in range(0, len(docs), batch):
        resp = api.post(
            f"/v1/indices/{index}/documents",
            data=_ndjson(docs[k : k + batch]),
            content_type="application/x-ndjson",
        )
        assert resp.status_code == 200, resp.json
        assert resp.json["errors"] is False
        out.update({item["id"]: item for item in resp.json["items"]})
    return out


def _partition(clusters: dict[str, str]) -> set[frozenset[str]]:
    groups: dict[str, set[str]] = {}
    for doc_id, cluster in clusters.items():
        groups.setdefault(cluster, set()).add(doc_id)
    return {frozenset(g) for g in groups.values()}


def _stored_clusters(es: Elasticsearch, index: str) -> dict[str, str]:
    es.indices.refresh(index=index)
    return {
        h["_id"]: h["_source"]["neardup"]["cluster"]
        for h in helpers.scan(es, index=index, _source=["neardup.cluster"], query={"query": {"match_all": {}}})
    }


@pytest.fixture(scope="module")
def sequential(api: FlaskClient, es: Elasticsearch, docs: list[Doc]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The news set ingested in file order, in batches, through the service."""
    index = "test-sequential-news"
    es.indices.delete(index=index, ignore_unavailable=True)
    items = _ingest(api, index, docs)
    es.indices.refresh(index=index)  # the service writes with refresh=false: make every document searchable
    yield index, items
    es.indices.delete(index=index, ignore_unavailable=True)


def test_ingest_flags_reach_the_offline_clustering_scores(
    sequential: tuple[str, dict[str, Any]], docs: list[Doc]
) -> None:
    _, items = sequential
    truth = [d.group for d in docs]
    service = pairwise_scores(truth, [items[d.id]["cluster"] for d in docs])
    fp = Fingerprinter.default()
    records = [fp.fingerprint(d.text, d.title) for d in docs]
    offline = cluster_records(records, lambda r: r.fingerprints, VerifyConfig())
    offline_scores = pairwise_scores(truth, offline.cluster.tolist())
    print(
        f"service P {service.precision:.3f} R {service.recall:.3f}; offline P {offline_scores.precision:.3f} "
        f"R {offline_scores.recall:.3f}"
    )
    assert service.precision >= 0.97 and service.recall >= 0.93
    assert abs(service.precision - offline_scores.precision) <= 0.01
    assert abs(service.recall - offline_scores.recall) <= 0.02
    # flags are consistent: a duplicate names an existing original in its own cluster
    for d in docs:
        item = items[d.id]
        if item["duplicate_of"] is not None:
            assert items[item["duplicate_of"]]["cluster"] == item["cluster"]
            assert item["cluster"] != d.id
        else:
            assert item["cluster"] == d.id


def test_hide_duplicates_returns_one_hit_per_cluster(
    api: FlaskClient, es: Elasticsearch, sequential: tuple[str, dict[str, Any]], docs: list[Doc]
) -> None:
    index, items = sequential
    clusters = {i["cluster"] for i in items.values()}
    shown = api.get(f"/v1/indices/{index}/search?hide_duplicates=true&size=100").json
    assert shown["total"] == len(clusters)
    page2 = api.get(f"/v1/indices/{index}/search?hide_duplicates=true&size=100&from=100").json
    hits = shown["hits"] + page2["hits"]
    assert len(hits) == len(clusters)
    assert len({h["cluster"] for h in hits}) == len(hits)  # never two hits of one cluster
    sizes: dict[str, int] = {}
    for i in items.values():
        sizes[i["cluster"]] = sizes.get(i["cluster"], 0) + 1
    assert all(h["duplicates_hidden"] == sizes[h["cluster"]] - 1 for h in hits)

    everything = api.get(f"/v1/indices/{index}/search?hide_duplicates=false&size=100").json
    assert everything["total"] == len(docs)
    assert all(h["duplicates_hidden"] == 0 for h in everything["hits"])

    # a text query: hidden counts only the cluster's other *matching* documents
    word = docs[0].title[:2]
    q = api.get(f"/v1/indices/{index}/search", query_string={"q": word, "hide_duplicates": "true", "size": 100}).json
    plain = api.get(f"/v1/indices/{index}/search", query_string={"q": word, "size": 100}).json
    assert q["total"] == len({h["cluster"] for h in plain["hits"]})
    assert sum(h["duplicates_hidden"] + 1 for h in q["hits"]) == plain["total"]


def test_clusters_list_and_one_cluster(api: FlaskClient, sequential: tuple[str, dict[str, Any]]) -> None:
    index, items = sequential
    listing = api.get(f"/v1/indices/{index}/clusters?min_size=2&size=5").json
    sizes = [c["size"] for c in listing["clusters"]]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] >= 3 and min(sizes) >= 2
    biggest = listing["clusters"][0]["cluster"]
    one = api.get(f"/v1/indices/{index}/clusters/{biggest}").json
    assert one["size"] == sizes[0] == len(one["members"])
    assert one["members"][0]["id"] == biggest and one["members"][0]["canonical"]
    for m in one["members"][1:]:
        assert items[m["id"]]["cluster"] == biggest
        assert isinstance(m["distance_to_canonical"], int)
    assert api.get(f"/v1/indices/{index}/clusters/no-such-cluster").status_code == 404


def test_duplicates_of_a_stored_document_and_of_posted_text(
    api: FlaskClient, sequential: tuple[str, dict[str, Any]], docs: list[Doc]
) -> None:
    index, items = sequential
    dup = next(d for d in docs if items[d.id]["duplicate_of"])
    found = api.get(f"/v1/indices/{index}/documents/{dup.id}/duplicates").json
    ids = [i["id"] for i in found["items"]]
    assert items[dup.id]["duplicate_of"] in ids and dup.id not in ids
    posted = api.post(f"/v1/indices/{index}/duplicates", json={"title": dup.title, "text": dup.text}).json
    assert dup.id in [i["id"] for i in posted["items"]]  # the identical stored copy
    assert posted["items"][0]["score"] == 1.0 and posted["items"][0]["distance"] == 0
    sizes: dict[str, int] = {}
    for d in docs:
        sizes[d.group] = sizes.get(d.group, 0) + 1
    single = next(d for d in docs if sizes[d.group] == 1)  # a document with no near-duplicates
    alone = api.get(f"/v1/indices/{index}/documents/{single.id}/duplicates").json
    assert alone["items"] == []
    assert api.get(f"/v1/indices/{index}/documents/nope/duplicates").status_code == 404


def test_dedupe_of_a_plain_index_gives_the_ingest_clusters(
    api: FlaskClient,
    es: Elasticsearch,
    index_name: str,
    sequential: tuple[str, dict[str, Any]],
    docs: list[Doc],
    wait_for_job: Callable[..., dict[str, Any]],
) -> None:
    """An index filled without neardup (ids in file order), deduped by the HTTP job, equals ingest."""
    _, items = sequential
    es.indices.create(index=index_name)
    helpers.bulk(es, ({"_index": index_name, "_id": d.id, "title": d.title, "text": d.text} for d in docs))
    es.indices.refresh(index=index_name)
    job = api.post(f"/v1/indices/{index_name}/dedupe", json={"workers": 1})
    assert job.status_code == 202, job.json
    result = wait_for_job(api, job.json["id"])
    assert result["state"] == "done", result
    assert result["result"]["fingerprinted"] == len(docs)
    deduped = _partition(_stored_clusters(es, index_name))
    ingested = _partition({k: v["cluster"] for k, v in items.items()})
    assert deduped == ingested
    # a re-run changes nothing and re-fingerprints nothing
    again = wait_for_job(api, api.post(f"/v1/indices/{index_name}/dedupe", json={}).json["id"])
    assert again["result"]["fingerprinted"] == 0 and again["result"]["changed"] == 0


def test_concurrent_ingest_then_reconcile_gives_the_sequential_clusters(
    es_url: str,
    es: Elasticsearch,
    index_name: str,
    sequential: tuple[str, dict[str, Any]],
    docs: list[Doc],
    wait_for_job: Callable[..., dict[str, Any]],
) -> None:
    _, items = sequential
    app = create_app({"es_url": es_url})
    # near-duplicates of one group go to different clients, in small concurrent batches
    shards: list[list[Doc]] = [[], [], [], []]
    for k, d in enumerate(docs):
        shards[k % 4].append(d)

    def client_run(part: list[Doc]) -> None:
        _ingest(app.test_client(), index_name, part, batch=10)

    _ingest(app.test_client(), index_name, docs[:1])  # create the index once
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(client_run, [s[1:] if k == 0 else s for k, s in enumerate(shards)]))
    before = _partition(_stored_clusters(es, index_name))
    job = app.test_client().post(f"/v1/indices/{index_name}/reconcile")
    assert job.status_code == 202
    result = wait_for_job(app.test_client(), job.json["id"])
    assert result["state"] == "done", result
    after = _partition(_stored_clusters(es, index_name))
    sequential_partition = _partition({k: v["cluster"] for k, v in items.items()})
    print(f"clusters: concurrent {len(before)}, reconciled {len(after)}, sequential {len(sequential_partition)}")
    assert after == sequential_partition

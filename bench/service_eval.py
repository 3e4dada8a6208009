"""Ingest-time flagging through the HTTP service and through the plugin's flag pipeline vs offline ``neardup
cluster``, same sets, same run.

Each news evaluation set (People's Daily, reprint variants, boilerplate hard negatives; the sets of
``neardup eval``) is posted to ``POST /v1/indices/{index}/documents`` as NDJSON in batches of 100,
against the real Elasticsearch; the same set is also written by ``helpers.bulk(..., pipeline="neardup-flag")`` in
batches of 500 (the plugin's processor fingerprints and flags it inside Elasticsearch), and that index is then
reconciled (``neardup reconcile``). The ``cluster`` of every document (as the service answered it, as the pipeline
stored it, as reconcile left it) is scored pairwise and compared with the offline clustering of the same documents.

Run: ``python -m bench.service_eval`` (embedded Elasticsearch, or ``NEARDUP_ES_URL`` of a cluster with neardup's
plugin)
→ bench/results/service_eval.md
"""

from __future__ import annotations

import json
import time
from typing import Any

from elasticsearch import Elasticsearch, helpers

from bench.harness import elasticsearch, stored_clusters
from bench.machine import RESULTS, describe, no_options, write_results
from neardup.es.batch import reconcile
from neardup.es.client import setup_index
from neardup.es.pipeline import install_pipeline
from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.metrics import pairwise_scores
from neardup.evaluation.sets import Doc, news_set
from neardup.ingest.cluster import cluster_records
from neardup.ingest.fingerprint import Fingerprinter
from neardup.ingest.verify import VerifyConfig
from neardup.service import create_app

OUT = RESULTS / "service_eval.md"
SEEDS = (1, 2, 3)
BATCH = 100
#: the batch size of the pipeline's bulk requests (helpers.bulk's chunk)
PIPELINE_BATCH = 500


def _ingest(api: Any, index: str, docs: list[Doc]) -> dict[str, str]:
    """POST the documents as NDJSON in batches; the cluster each one was given."""
    clusters: dict[str, str] = {}
    for k in range(0, len(docs), BATCH):
        body = "\n".join(
            json.dumps({"id": d.id, "title": d.title, "text": d.text}, ensure_ascii=False) for d in docs[k : k + BATCH]
        )
        resp = api.post(f"/v1/indices/{index}/documents", data=body, content_type="application/x-ndjson")
        if resp.status_code != 200 or resp.json["errors"]:
            raise SystemExit(f"ingest failed: {resp.status_code} {resp.json}")
        clusters.update({i["id"]: i["cluster"] for i in resp.json["items"]})
    return clusters


def _stored_clusters(client: Elasticsearch, index: str, docs: list[Doc]) -> list[str]:
    clusters = stored_clusters(client, index, [d.id for d in docs])
    missing = sum(1 for c in clusters if c is None)
    if missing:
        raise SystemExit(f"{missing} documents of {index} hold no cluster")
    return [str(c) for c in clusters]


def _through_pipeline(
    client: Elasticsearch, index: str, docs: list[Doc], version: str
) -> tuple[list[str], list[str], float]:
    """The clusters the flag pipeline stored for ``docs`` (bulk in batches of :data:`PIPELINE_BATCH`), those after a
    reconcile of the index, and the bulk's seconds."""
    setup_index(client, index)
    pipeline = install_pipeline(client, flag=True)  # idempotent: put once more after main's first
    actions = ({"_index": index, "_id": d.id, "_source": {"title": d.title, "text": d.text}} for d in docs)
    start = time.perf_counter()
    helpers.bulk(client, actions, chunk_size=PIPELINE_BATCH, pipeline=pipeline)
    bulk_s = time.perf_counter() - start
    client.indices.refresh(index=index)
    flagged = _stored_clusters(client, index, docs)
    reconcile(client, index, version)
    client.indices.refresh(index=index)
    return flagged, _stored_clusters(client, index, docs), bulk_s


def main() -> None:
    no_options(__doc__)
    articles = load_peoples_daily()
    fp = Fingerprinter.default()
    rows = []
    with elasticsearch(port=9278, heap="1g") as (url, es_label):
        api = create_app({"es_url": url}).test_client()
        install_pipeline(api.application.extensions["neardup"].client, flag=True)  # no plugin: stop before any run
        for seed in SEEDS:
            docs = news_set(articles, seed=seed)
            index = f"bench-service-eval-{seed}"
            start = time.perf_counter()
            clusters = _ingest(api, index, docs)
            ingest_s = time.perf_counter() - start
            truth = [d.group for d in docs]
            service = pairwise_scores(truth, [clusters[d.id] for d in docs])
            start = time.perf_counter()
            records = fp.fingerprint_many([(d.text, d.title) for d in docs])
            offline_a = cluster_records(records, lambda r: r.fingerprints, VerifyConfig())
            offline_s = time.perf_counter() - start
            offline = pairwise_scores(truth, offline_a.cluster.tolist())
            client = api.application.extensions["neardup"].client
            piped = f"{index}-pipeline"
            flagged, reconciled, bulk_s = _through_pipeline(client, piped, docs, fp.version)
            pipeline = pairwise_scores(truth, flagged)
            after = pairwise_scores(truth, reconciled)
            rows.append((seed, len(docs), service, pipeline, after, offline, ingest_s, bulk_s, offline_s))
            client.indices.delete(index=[index, piped])
    lines = [
        "# Ingest-time flagging (HTTP service, the plugin's flag pipeline) vs offline clustering, news sets",
        "",
        f"Machine: {describe()}",
        f"Elasticsearch: {es_label}. The service: batches of {BATCH} documents "
        "(NDJSON, the service's default refresh=false), in-process (Flask test client, real HTTP to "
        f'Elasticsearch). The pipeline: `helpers.bulk(..., pipeline="neardup-flag")` in batches of {PIPELINE_BATCH}, '
        "one client thread, then `neardup reconcile` of that index. Pairwise precision (P) and recall (R) of each "
        "one's clusters against the sets' groups.",
        "Command: `python -m bench.service_eval`",
        "",
        "| set | docs | service P / R | pipeline P / R | pipeline + reconcile P / R | offline P / R "
        "| service s (docs/s) | pipeline s (docs/s) | offline s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for seed, n, s, pl, rc, o, ingest_s, bulk_s, offline_s in rows:
        lines.append(
            f"| news seed {seed} | {n} | {s.precision:.3f} / {s.recall:.3f} | {pl.precision:.3f} / {pl.recall:.3f} "
            f"| {rc.precision:.3f} / {rc.recall:.3f} | {o.precision:.3f} / {o.recall:.3f} "
            f"| {ingest_s:.1f} ({n / ingest_s:.0f}) | {bulk_s:.1f} ({n / bulk_s:.0f}) | {offline_s:.1f} |"
        )
    write_results(OUT, lines)


if __name__ == "__main__":
    main()

"""Ingest-time flagging through the HTTP service vs offline ``neardup cluster``, same sets, same run.

Each news evaluation set (People's Daily, reprint variants, boilerplate hard negatives; the sets of
``neardup eval``) is posted to ``POST /v1/indices/{index}/documents`` as NDJSON in batches of 100,
against the real Elasticsearch; the ``cluster`` flags the service returns are scored pairwise and
compared with the offline clustering of the same documents.

Run: ``python -m bench.service_eval`` (embedded Elasticsearch, or ``NEARDUP_ES_URL``)
→ bench/results/service_eval.md
"""

from __future__ import annotations

import json
import time
from typing import Any

from bench.harness import elasticsearch
from bench.machine import RESULTS, describe, no_options, write_results
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


def main() -> None:
    no_options(__doc__)
    articles = load_peoples_daily()
    fp = Fingerprinter.default()
    rows = []
    with elasticsearch(port=9278, heap="1g") as (url, es_label):
        api = create_app({"es_url": url}).test_client()
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
            rows.append((seed, len(docs), service, offline, ingest_s, offline_s))
            api.application.extensions["neardup"].client.indices.delete(index=index)
    lines = [
        "# Ingest-time flagging (HTTP service) vs offline clustering, news sets",
        "",
        f"Machine: {describe()}",
        f"Elasticsearch: {es_label}. Batches of {BATCH} documents "
        "(NDJSON, the service's default refresh=false), service in-process (Flask test client, real HTTP to "
        "Elasticsearch).",
        "Command: `python -m bench.service_eval`",
        "",
        "| set | docs | service P | service R | offline P | offline R | ingest s (docs/s) | offline s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for seed, n, s, o, ingest_s, offline_s in rows:
        lines.append(
            f"| news seed {seed} | {n} | {s.precision:.3f} | {s.recall:.3f} | {o.precision:.3f} | {o.recall:.3f} "
            f"| {ingest_s:.1f} ({n / ingest_s:.0f}) | {offline_s:.1f} |"
        )
    write_results(OUT, lines)


if __name__ == "__main__":
    main()

"""Losing a node: a 3-node embedded cluster, an index of 3 shards with 1 replica, and ``neardup serve``
ingesting and answering lookups while one node is stopped and started again.

Timeline: 20 s of normal work, then node-2 is stopped (``neardup es node stop 2``), 40 s later started
again, then 40 s more. Throughout, one client thread posts batches of 100 documents and another asks for
the duplicates of documents already acknowledged. Afterwards every acknowledged document is looked up by
id. The service talks to node-0.

Run: ``python -m bench.node_loss`` → bench/results/node_loss.md
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from typing import Any

from elasticsearch import Elasticsearch

from bench.corpus import corpus_path, read_corpus
from bench.harness import WRITTEN, serve
from bench.machine import RESULTS, describe, no_options, write_results
from neardup import node as esnode
from neardup.config import Settings
from neardup.es.client import setup_index

OUT = RESULTS / "node_loss.md"
INDEX = "bench-node-loss"
PHASES = (("before", 20.0), ("node-2 stopped", 40.0), ("node-2 back", 40.0))


def _request(req: urllib.request.Request | str) -> tuple[int, dict[str, Any] | None]:
    """(status, JSON body or None when the body is not JSON)."""
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as err:
        try:
            return err.code, json.loads(err.read())
        except ValueError:
            return err.code, None
    except OSError:
        return 0, None


def main() -> None:
    no_options(__doc__)
    docs = read_corpus(corpus_path(1_000_000), 60_000)
    log: list[tuple[str, str, int, bool]] = []  # (phase, kind, status, JSON body)
    acknowledged: set[str] = set()
    phase = [PHASES[0][0]]
    stop = threading.Event()
    with esnode.temporary_cluster(
        Settings.from_env().home, 9295, "3g", nodes=3, prefix="neardup-node-loss-"
    ) as cluster:
        info = cluster.start()
        client = Elasticsearch(info.url, request_timeout=120)
        client.indices.create(index=INDEX, settings={"number_of_shards": 3, "number_of_replicas": 1})
        setup_index(client, INDEX)
        client.cluster.health(index=INDEX, wait_for_status="green", timeout="120s")
        with serve(info.url) as served:

            def ingest() -> None:
                k = 0
                while not stop.is_set() and k < len(docs):
                    batch = docs[k : k + 100]
                    k += 100
                    body = "\n".join(json.dumps({"id": d.id, "text": d.text}, ensure_ascii=False) for d in batch)
                    req = urllib.request.Request(
                        f"{served.url}/v1/indices/{INDEX}/documents",
                        data=body.encode(),
                        headers={"Content-Type": "application/x-ndjson"},
                    )
                    status, answer = _request(req)
                    log.append((phase[0], "ingest", status, answer is not None))
                    if status == 200 and answer is not None:
                        acknowledged.update(i["id"] for i in answer["items"] if i["status"] in WRITTEN)

            def lookups() -> None:
                while not stop.is_set():
                    known = sorted(acknowledged)[-2000:]
                    if not known:
                        time.sleep(0.2)
                        continue
                    doc_id = known[len(log) % len(known)]
                    status, answer = _request(f"{served.url}/v1/indices/{INDEX}/documents/{doc_id}/duplicates")
                    log.append((phase[0], "lookup", status, answer is not None))

            threads = [threading.Thread(target=ingest), threading.Thread(target=lookups)]
            for t in threads:
                t.start()
            events = []
            for k, (name, seconds) in enumerate(PHASES):
                phase[0] = name
                if k == 1:
                    t0 = time.perf_counter()
                    esnode.control(cluster.data, 2, "stop")
                    events.append(f"node-2 stopped in {time.perf_counter() - t0:.1f}s")
                elif k == 2:
                    t0 = time.perf_counter()
                    esnode.control(cluster.data, 2, "start")
                    events.append(f"node-2 started again in {time.perf_counter() - t0:.1f}s")
                time.sleep(seconds)
            stop.set()
            for t in threads:
                t.join()
        health = client.cluster.health(index=INDEX, wait_for_status="green", timeout="300s")
        client.indices.refresh(index=INDEX)
        ids = sorted(acknowledged)
        found = 0
        for k in range(0, len(ids), 1000):
            resp = client.mget(index=INDEX, ids=ids[k : k + 1000], source=False)
            found += sum(1 for d in resp["docs"] if d.get("found"))
        client.close()

    counts = Counter((p, kind, status) for p, kind, status, _ in log)
    not_json = sum(1 for _, _, status, is_json in log if status != 200 and not is_json)
    lines = [
        "# Losing a node while ingesting and looking up",
        "",
        f"Machine: {describe()}",
        f"Elasticsearch: embedded {esnode.ES_VERSION}, 3 nodes in one JVM (3 GB heap in all); index of 3 shards, "
        "1 replica; `neardup serve` (2 workers) talking to node-0; node-2 stopped and started again.",
        "Command: `python -m bench.node_loss`",
        "",
        "| phase | seconds | ingest requests (status: count) | lookups (status: count) |",
        "|---|---|---|---|",
    ]
    for name, seconds in PHASES:
        parts = []
        for kind in ("ingest", "lookup"):
            by_status = sorted((s, c) for (p, k, s), c in counts.items() if p == name and k == kind)
            parts.append(", ".join(f"{s}: {c}" for s, c in by_status) or "none")
        lines.append(f"| {name} | {seconds:.0f} | {parts[0]} | {parts[1]} |")
    lines += [
        "",
        f"Events: {'; '.join(events)}. Cluster green again afterwards: {health['status'] == 'green'}.",
        f"Requests: {len(log)}; answers other than 200: {sum(1 for e in log if e[2] != 200)}, of which without a JSON "
        f"body: {not_json} (status 0 = no answer).",
        f"Documents acknowledged: {len(acknowledged):,}; found afterwards: {found:,}; "
        f"lost: {len(acknowledged) - found:,}.",
    ]
    write_results(OUT, lines)


if __name__ == "__main__":
    main()

"""Losing a node: a 3-node embedded cluster, an index of 3 shards with 1 replica, and ``neardup serve`` (given
every node's URL, which its client takes round-robin; its default, Python write path) ingesting and answering
lookups while one node is stopped and started again: first node-2, then node-0 (the results say which node was the
elected master before each stop).

Timeline: 20 s of normal work; node-2 stopped (``neardup es node stop 2``), 40 s later started again, 40 s more;
node-0 stopped, 40 s later started again, 40 s more. Throughout, one client thread posts batches of 100 documents and
another asks for the duplicates of documents already acknowledged. Afterwards every acknowledged document is looked up
by id, and so is every document of a batch answered with an error (all or nothing: none of them should be stored,
but those a 503 names as possibly written, and a write Elasticsearch carried out only after the undo); a batch no
answer came for (the client's timeout) is counted apart.

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
#: (phase, seconds, what starts it: (action, node) or None)
PHASES = (
    ("before", 20.0, None),
    ("node-2 stopped", 40.0, ("stop", 2)),
    ("node-2 back", 40.0, ("start", 2)),
    ("node-0 stopped", 40.0, ("stop", 0)),
    ("node-0 back", 40.0, ("start", 0)),
)


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


def _master(client: Elasticsearch) -> str:
    """The name of the cluster's elected master."""
    rows = client.cat.master(format="json")
    return str(rows[0]["node"]) if rows else "none"


def _found(client: Elasticsearch, ids: set[str]) -> int:
    """How many of ``ids`` the index holds (a real-time read)."""
    wanted = sorted(ids)
    found = 0
    for k in range(0, len(wanted), 1000):
        resp = client.mget(index=INDEX, ids=wanted[k : k + 1000], source=False)
        found += sum(1 for d in resp["docs"] if d.get("found"))
    return found


def main() -> None:
    no_options(__doc__)
    docs = read_corpus(corpus_path(1_000_000), 60_000)
    log: list[tuple[str, str, int, bool]] = []  # (phase, kind, status, JSON body)
    acknowledged: set[str] = set()
    refused: set[str] = set()  # the documents of batches answered otherwise than 200, none of them to be stored
    may_stay: set[str] = set()  # of those, the ones a 503 says may be written (an undo that failed)
    unknown: set[str] = set()  # the documents of batches no answer (or none in JSON) came for: written or not
    phase = [PHASES[0][0]]
    stop = threading.Event()
    with esnode.temporary_cluster(
        Settings.from_env().home, 9295, "3g", nodes=3, prefix="neardup-node-loss-"
    ) as cluster:
        info = cluster.start()
        client = Elasticsearch(info.urls, request_timeout=120)
        client.indices.create(index=INDEX, settings={"number_of_shards": 3, "number_of_replicas": 1})
        setup_index(client, INDEX)
        client.cluster.health(index=INDEX, wait_for_status="green", timeout="120s")
        with serve(",".join(info.urls)) as served:

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
                    elif answer is None or "error" not in answer:
                        unknown.update(d.id for d in batch)
                    else:
                        refused.update(d.id for d in batch)
                        detail = ((answer or {}).get("error") or {}).get("detail") or {}
                        may_stay.update(detail.get("written", []) if isinstance(detail, dict) else [])

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
            for name, seconds, change in PHASES:
                phase[0] = name
                if change is not None:
                    action, number = change
                    master = f" (the master then: {_master(client)})" if action == "stop" else ""
                    t0 = time.perf_counter()
                    state = esnode.control(cluster.data, number, action)
                    events.append(f"node-{number} {state} in {time.perf_counter() - t0:.1f}s{master}")
                time.sleep(seconds)
            stop.set()
            for t in threads:
                t.join()
        health = client.cluster.health(index=INDEX, wait_for_status="green", timeout="300s")
        client.indices.refresh(index=INDEX)
        found = _found(client, acknowledged)
        stayed = _found(client, refused - may_stay)
        client.close()

    counts = Counter((p, kind, status) for p, kind, status, _ in log)
    not_json = sum(1 for _, _, status, is_json in log if status != 200 and not is_json)
    lines = [
        "# Losing a node while ingesting and looking up",
        "",
        f"Machine: {describe()}",
        f"Elasticsearch: embedded {esnode.ES_VERSION}, 3 nodes in one JVM (3 GB heap in all); index of 3 shards, "
        "1 replica; `neardup serve` (2 workers, its default Python write path) given every node's URL (its client "
        "takes them round-robin); node-2 stopped and started again, then node-0.",
        "Command: `python -m bench.node_loss`",
        "",
        "| phase | seconds | ingest requests (status: count) | lookups (status: count) |",
        "|---|---|---|---|",
    ]
    for name, seconds, _ in PHASES:
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
        f"Documents of batches answered with an error: {len(refused):,} ({len(may_stay):,} of them named as possibly "
        f"written); of the others, found afterwards: {stayed:,}. Documents of batches no answer came for: "
        f"{len(unknown):,}.",
    ]
    write_results(OUT, lines)


if __name__ == "__main__":
    main()

"""The largest requests the service accepts, through a real ``neardup serve`` (gunicorn, 2 workers):
time and the peak resident memory of the worker processes, sampled while each request runs.

Shapes, each at the default limits (16 MiB body, 5,000 documents, 2,000,000 characters of text):
- very similar documents (one article with a few characters changed in each), as many of the 5,000 as fit the
  body limit: the in-batch matching's worst case, all documents share their blocks;
- 5,000 different real news paragraphs;
- one document of 1,990,000 characters.

Run: ``python -m bench.largest_request`` (writes bench/results/largest_request.md).
"""

from __future__ import annotations

import json
import random
import time
import urllib.request

import psutil

from bench.harness import WRITTEN, PeakRss, elasticsearch, serve
from bench.machine import RESULTS, describe, no_options, write_results
from neardup.config import Settings
from neardup.evaluation.corpus import load_peoples_daily

OUT = RESULTS / "largest_request.md"
LIMITS = Settings()


def _alike(n: int, size: int) -> list[dict[str, str]]:
    base = "".join(a.text for a in load_peoples_daily()[:60])[:size]
    rng = random.Random(3)
    docs = []
    for k in range(n):
        chars = list(base)
        for _ in range(12):
            chars[rng.randrange(len(chars))] = rng.choice("的了是在和有我们他这中大为上个国")
        docs.append({"id": f"alike-{k}", "text": "".join(chars)})
    return docs


def _different(n: int) -> list[dict[str, str]]:
    paragraphs = [p for a in load_peoples_daily() for p in a.text.split("\n") if len(p) > 80]
    return [{"id": f"news-{k}", "text": paragraphs[k % len(paragraphs)] + f"（{k}）"} for k in range(n)]


def _fit(docs: list[dict[str, str]]) -> list[dict[str, str]]:
    """As many of ``docs`` as fit the body limit."""
    while len(json.dumps(docs, ensure_ascii=False).encode()) > LIMITS.max_body_bytes - 1024:
        docs = docs[: int(len(docs) * 0.95)]
    return docs


def main() -> None:
    no_options(__doc__)
    rows = []
    with elasticsearch(9351, "1g") as (es_url, label), serve(es_url) as served:
        workers = served.workers
        shapes = {
            "very similar documents": _fit(_alike(LIMITS.max_documents_per_request, 3000)),
            "different news paragraphs": _fit(_different(LIMITS.max_documents_per_request)),
            "one long document": [{"id": "long", "text": ("国务院召开常务会议，部署经济工作。" * 120_000)[:1_990_000]}],
        }
        for name, docs in shapes.items():
            body = json.dumps(docs, ensure_ascii=False).encode()
            index = "bench-largest-" + name.split()[0]
            baseline = max(psutil.Process(p).memory_info().rss for p in workers)
            req = urllib.request.Request(
                f"{served.url}/v1/indices/{index}/documents", data=body, headers={"Content-Type": "application/json"}
            )
            with PeakRss(workers) as rss:
                start = time.perf_counter()
                with urllib.request.urlopen(req, timeout=600) as resp:
                    answer = json.load(resp)
                seconds = time.perf_counter() - start
            written = sum(1 for i in answer["items"] if i["status"] in WRITTEN)
            clusters = len({i["cluster"] for i in answer["items"]})
            rows.append(
                f"| {name} | {len(docs):,} | {len(body) / 2**20:.1f} MiB | {seconds:.1f} | {written:,} | "
                f"{clusters:,} | {baseline / 2**20:.0f} | {rss.peak / 2**20:.0f} |"
            )
            print(rows[-1], flush=True)
    write_results(
        OUT,
        [
            "# The largest accepted requests through `neardup serve` (2 gunicorn workers)",
            "",
            f"Machine: {describe()}; Elasticsearch: {label}",
            "",
            "Command: `python -m bench.largest_request`. Limits: "
            f"{LIMITS.max_body_bytes / 2**20:.0f} MiB body, {LIMITS.max_documents_per_request:,} documents, "
            f"{LIMITS.max_text_chars:,} characters of text. RSS: the larger worker, before the request and "
            "its peak while it ran (sampled every 50 ms).",
            "",
            "| request | documents | body | seconds | written | clusters | worker RSS before (MiB) | peak (MiB) |",
            "|---|---|---|---|---|---|---|---|",
            *rows,
        ],
    )


if __name__ == "__main__":
    main()

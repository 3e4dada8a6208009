"""What indexing each ``neardup.*`` field costs Elasticsearch: CPU per document, field group by field group.

The same documents of the bench corpus, with their neardup fields computed beforehand in Python (not timed), are
bulk-written (request bodies serialised beforehand and sent as they are by two client threads, so the client's
own work is out of the figures) into a fresh index whose mapping holds the text and a variant of the neardup
fields: none, the shipped ones, the shipped ones without one group, or the block fields alone. The figure is the
CPU time the Elasticsearch node spent (``_nodes/stats`` process CPU) from the first request until the index is
refreshed and its merges have finished, per document; the wall rate is reported beside it. Variants take turns,
``--rounds`` rounds after an untimed round of every variant (code compiled, as on a running node), every other
round in the reverse order (so no variant always follows the same one); the median round is reported.

Peers, not shipped, tell the costs apart. The same block fields whose tokens have few distinct values (the last
three hex digits cut off: 16 values per seed instead of 65,536) show what the tokens' cardinality costs; the blocks
as four whitespace-analysed ``text`` fields (one string each) show what parsing 64 array values costs. The shipped
fields with one field mapped as Elasticsearch's defaults would have it show what the shipped mapping saves: block
fields without norms (a keyword with neither doc values nor norms adds the field's name to ``_field_names`` for
each value), fingerprints indexed as points besides their doc values.

Run: ``python -m bench.field_cost [--docs 48000] [--rounds 5]`` (embedded Elasticsearch, or ``NEARDUP_ES_URL``)
→ bench/results/field_cost.md
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any

from elasticsearch import Elasticsearch

from bench.corpus import GENERATOR, corpus_path, read_corpus
from bench.harness import elasticsearch, send_bodies, wait_for_merges
from bench.machine import RESULTS, describe, write_results
from neardup.ingest.fingerprint import Fingerprinter
from neardup.mappings import neardup_fields
from neardup.mappings.schema import BLOCKS, FINGERPRINT, MINHASH, ROOT, record_fields

OUT = RESULTS / "field_cost.md"
INDEX = "bench-field-cost"
CHUNK = 500

#: a variant: its mapping of the neardup fields (None: no neardup object) and what it writes of a document's fields
Variant = tuple[dict[str, Any] | None, Callable[[dict[str, Any]], dict[str, Any] | None]]


def _without(*names: str) -> Variant:
    shipped = neardup_fields()
    return (
        {k: v for k, v in shipped.items() if k not in names},
        lambda fields: {k: v for k, v in fields.items() if k not in names},
    )


def _shipped_but(changed: Mapping[str, dict[str, Any]]) -> Variant:
    """The shipped fields, some of them mapped as ``changed`` says."""
    return neardup_fields() | dict(changed), lambda fields: fields


def _blocks_only(convert: Callable[[list[str]], Any], mapping: dict[str, Any] | None = None) -> Variant:
    shipped = neardup_fields()
    return (
        {b: mapping or shipped[b] for b in BLOCKS},
        lambda fields: {b: convert(fields[b]) for b in BLOCKS},
    )


VARIANTS: dict[str, Variant] = {
    "text only (no neardup fields)": (None, lambda fields: None),
    "the shipped neardup fields": _without(),
    "shipped without the 4 block fields": _without(*BLOCKS),
    "shipped without the sketch (`minhash`)": _without(MINHASH),
    "shipped without the 16 fingerprints (`fingerprint`)": _without(FINGERPRINT),
    "shipped, but the block fields without norms (peer: each block value adds the field's name to `_field_names`)": (
        _shipped_but({b: {"type": "keyword", "doc_values": False} for b in BLOCKS})
    ),
    "shipped, but the fingerprints indexed as points too (peer)": _shipped_but({FINGERPRINT: {"type": "long"}}),
    "the 4 block fields alone": _blocks_only(list),
    "the 4 block fields alone, few distinct tokens (peer)": _blocks_only(lambda tokens: [t[:-3] for t in tokens]),
    "the 4 block fields alone as whitespace `text`, one string each (peer)": _blocks_only(
        " ".join, {"type": "text", "analyzer": "whitespace", "index_options": "docs", "norms": True}
    ),
}


def _bodies(texts: list[tuple[str, str]], fields: list[dict[str, Any]], variant: Variant) -> list[bytes]:
    _, convert = variant
    out = []
    for start in range(0, len(texts), CHUNK):
        lines = []
        for (doc_id, text), f in zip(texts[start : start + CHUNK], fields[start : start + CHUNK], strict=True):
            source: dict[str, Any] = {"text": text}
            nd = convert(f)
            if nd is not None:
                source[ROOT] = nd
            lines += [json.dumps({"index": {"_index": INDEX, "_id": doc_id}}), json.dumps(source, ensure_ascii=False)]
        out.append(("\n".join(lines) + "\n").encode())
    return out


def _node_cpu_ms(client: Elasticsearch) -> int:
    stats = client.nodes.stats(metric="process")["nodes"]
    return sum(int(n["process"]["cpu"]["total_in_millis"]) for n in stats.values())


def _write(client: Elasticsearch, variant: Variant, bodies: list[bytes]) -> tuple[float, float]:
    """(wall seconds to write and refresh, node CPU seconds until refreshed and merged) for one fresh index."""
    mapping, _ = variant
    client.indices.delete(index=INDEX, ignore_unavailable=True)
    wait_for_merges(client, poll=0.2)
    properties: dict[str, Any] = {"text": {"type": "text"}}
    if mapping is not None:
        properties[ROOT] = {"dynamic": "strict", "properties": mapping}
    client.indices.create(
        index=INDEX,
        mappings={"properties": properties},
        settings={"number_of_shards": 1, "number_of_replicas": 0},
    )

    cpu0, start = _node_cpu_ms(client), time.perf_counter()
    send_bodies(client, bodies, INDEX)
    client.indices.refresh(index=INDEX)
    wall = time.perf_counter() - start
    wait_for_merges(client, poll=0.2)
    return wall, (_node_cpu_ms(client) - cpu0) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=48_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--port", type=int, default=9253)
    args = parser.parse_args()
    docs = read_corpus(corpus_path(args.docs), args.docs)
    records = Fingerprinter.default().fingerprint_many([(d.text, None) for d in docs])
    fields = [record_fields(r) for r in records]
    texts = [(d.id, d.text) for d in docs]
    bodies = {name: _bodies(texts, fields, variant) for name, variant in VARIANTS.items()}
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in VARIANTS}
    with elasticsearch(args.port, "4g") as (url, label):
        client = Elasticsearch(url, request_timeout=600)
        for name, variant in VARIANTS.items():  # untimed
            _write(client, variant, bodies[name])
        for r in range(args.rounds):
            for name, variant in list(VARIANTS.items())[:: -1 if r % 2 else 1]:
                runs[name].append(_write(client, variant, bodies[name]))
                print(name, runs[name][-1], flush=True)
        client.indices.delete(index=INDEX, ignore_unavailable=True)
    n = len(docs)
    base = statistics.median(cpu for _, cpu in runs["text only (no neardup fields)"])
    lines = [
        "# What indexing each neardup field costs Elasticsearch",
        "",
        f"Machine: {describe()}",
        f"Elasticsearch: {label}, 1 shard, no replica, refresh every second. Command: "
        f"`python -m bench.field_cost --docs {args.docs} --rounds {args.rounds}`. {n:,} documents of the bench corpus "
        f"(generator {GENERATOR}), neardup fields computed beforehand; CPU is the node's from the first request until "
        "refreshed and merged, median of the rounds.",
        "",
        "| what is indexed besides the text | node CPU ms/document | × text only | documents/s (wall) "
        "| CPU s per round |",
        "|---|---|---|---|---|",
    ]
    for name, rounds in runs.items():
        cpu = statistics.median(c for _, c in rounds)
        wall = statistics.median(w for w, _ in rounds)
        spread = ", ".join(f"{c:.1f}" for _, c in rounds)
        lines.append(f"| {name} | {1000 * cpu / n:.3f} | {cpu / base:.2f} | {n / wall:,.0f} | {spread} |")
    write_results(OUT, lines)


if __name__ == "__main__":
    main()

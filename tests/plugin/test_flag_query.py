"""The flagging processor's candidate search is the Python service's: the body Java builds with Elasticsearch's
``QueryBuilders`` (``io.neardup.plugin.CandidateSearch``) equals, after Elasticsearch's own defaults are dropped,
the body of :func:`neardup.es.lookup.candidate_search` with :func:`~neardup.es.lookup.verify_params` (the
plugin's ``neardup_blocks`` query with its check, doc values, the document's id excluded), for ``ok`` and
too-short documents and several ``min_shared``; and Elasticsearch parses both queries to the same Lucene query
(``_validate/query``)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from neardup.es.client import setup_index
from neardup.es.lookup import candidate_search, verify_params
from neardup.evaluation.corpus import load_peoples_daily
from neardup.ingest.fingerprint import Fingerprinter, Record
from neardup.ingest.verify import VerifyConfig
from neardup.mappings import schema
from neardup.node.plugin_build import PluginBuild

from .java import run_main

MAIN = "io.neardup.plugin.QueryParity"


def _python_body(doc_id: str, record: Record, max_candidates: int, min_shared: int) -> dict[str, Any]:
    """What ``search_candidates`` sends for one record with the in-Elasticsearch prefilter (a cluster with the
    plugin: its block query), reading doc values."""
    check = verify_params(record, VerifyConfig())
    return candidate_search(record, max_candidates, [doc_id], min_shared, check, doc_values=True, native=True)


def _plain(node: Any) -> Any:
    """Elasticsearch's ``toXContent`` less its defaults: ``boost`` 1, ``adjust_pure_negative``, a term's ``value``
    object, one-element clause lists written as objects, a ``docvalue_fields`` entry without a format as its name."""
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if (key == "boost" and value == 1.0) or (key == "adjust_pure_negative" and value is True):
            continue
        if key == "bool":
            value = {k: [v] if isinstance(v, dict) else v for k, v in value.items()}
        if key == "track_total_hits" and value == -1:
            value = False  # Elasticsearch writes "disabled" as -1
        out[key] = _plain(value)
    if set(out) == {"value"}:
        return out["value"]
    if set(out) == {"field"} and isinstance(out["field"], str):
        return out["field"]
    if "minimum_should_match" in out:
        out["minimum_should_match"] = int(out["minimum_should_match"])
    return out


def _cases(fp: Fingerprinter) -> list[tuple[str, Record, int, int]]:
    articles = load_peoples_daily()[:3]
    records = [fp.fingerprint(a.text, a.title) for a in articles]
    short = fp.fingerprint("好的")
    assert short.status == "too_short"
    return [
        ("a", records[0], 500, 1),
        ("b", records[1], 500, 3),
        ("c", records[2], 50, 64),
        ("d", records[0], 10_000, 2),
        ("s", short, 500, 1),
        ("x", replace(records[1], exact=""), 500, 1),  # read without its exact hash: the block match alone
    ]


def _java_bodies(plugin: PluginBuild, cases: list[tuple[str, Record, int, int]]) -> list[dict[str, Any]]:
    """The bodies Java builds, as Elasticsearch's ``toXContent`` writes them."""
    lines = [
        json.dumps({"id": i, "fields": schema.record_fields(r), "max_candidates": n, "min_shared": m})
        for i, r, n, m in cases
    ]
    return run_main(plugin, MAIN, lines)


def test_the_java_search_body_equals_pythons(plugin: PluginBuild, fp: Fingerprinter) -> None:
    cases = _cases(fp)
    java = _java_bodies(plugin, cases)
    for (doc_id, record, size, shared), body in zip(cases, java, strict=True):
        got = _plain(body)
        want = _python_body(doc_id, record, size, shared)
        assert got == want, (doc_id, json.dumps(got)[:600], json.dumps(want)[:600])
    print(f"compared {len(cases)} candidate search bodies: ok and too short; min_shared 1, 2, 3, 64")


@pytest.mark.es
def test_elasticsearch_reads_both_as_the_same_query(
    es: Elasticsearch, plugin: PluginBuild, fp: Fingerprinter, index_name: str
) -> None:
    setup_index(es, index_name)
    cases = _cases(fp)
    java = _java_bodies(plugin, cases)
    for (doc_id, record, size, shared), body in zip(cases, java, strict=True):
        want = _python_body(doc_id, record, size, shared)
        explained = [
            es.indices.validate_query(index=index_name, query=q, explain=True)["explanations"][0]["explanation"]
            for q in (body["query"], want["query"])
        ]
        assert explained[0] == explained[1]
        assert "verify" in explained[0] or record.status != "ok"

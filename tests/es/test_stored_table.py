"""The columns a reconcile clusters (:mod:`neardup.es.stored_table`): rows read back as stored, in document
order, and the same clusters as the list of :class:`~neardup.mappings.schema.Stored` documents they replace."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from neardup.es.stored_table import StoredTable, TableBuilder
from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.variants import make_variant
from neardup.ingest.cluster import cluster_records
from neardup.ingest.fingerprint import Fingerprinter
from neardup.ingest.metadata import meta_signature
from neardup.ingest.verify import Match, VerifyConfig
from neardup.mappings import schema


@pytest.fixture(scope="module")
def hits() -> list[dict[str, Any]]:
    """Articles, reprint variants of some of them, too-short texts, an empty one, records with metadata
    sets; times out of list order, many shared (ties go by id); every third document already assigned."""
    fp = Fingerprinter.default()
    rng = random.Random(7)
    articles = [a.text for a in load_peoples_daily()[:40]]
    texts = articles + ["\n".join(make_variant(articles[k].split("\n"), rng)[0]) for k in range(0, 40, 3)]
    texts += ["好", "好", "不好", "", "好"]  # too short (paired by exact hash only), and empty (never paired)
    records = fp.fingerprint_many([(t, None) for t in texts])
    for k in (0, 3, 40):
        records[k] = replace(records[k], meta=meta_signature({"tags": ["经济", "政策", str(k % 2)]}))
    out = []
    for k, rec in enumerate(records):
        fields = schema.record_fields(rec) | {
            schema.INDEXED_AT: schema.timestamp(1_700_000_000 * 10**9 + rng.randrange(9))
        }
        if k % 3 == 1:
            fields |= schema.assignment_fields(f"d{k - 1:03d}", f"d{k - 1:03d}", Match(1, 0.8125))
        seen = {"_seq_no": 100 + k, "_primary_term": 1 + k % 2}
        out.append({"_id": f"d{k:03d}", "_source": {schema.ROOT: fields}, **seen})
    rng.shuffle(out)  # as slices of a scan return them
    return out


def _table(hits: list[dict[str, Any]]) -> StoredTable:
    builder = TableBuilder()
    for h in hits:
        builder.add(h)
    table = builder.build()
    assert len(builder) == 0  # it keeps nothing the table does not need
    return table


def _stored_in_order(hits: list[dict[str, Any]]) -> list[schema.Stored]:
    return sorted((schema.Stored.from_hit(h) for h in hits), key=lambda s: s.order)


def test_rows_are_the_stored_documents_in_document_order(hits: list[dict[str, Any]]) -> None:
    table = _table(hits)
    stored = _stored_in_order(hits)
    assert len(table) == len(stored) == len(hits)
    assert len({s.indexed_at for s in stored}) < len(stored)  # ties on time, broken by id
    for row, s in zip(table, stored, strict=True):
        assert (row.id, row.fingerprints, row.fingerprint) == (s.id, s.fingerprints, s.fingerprint)
        assert (row.exact, row.status, row.version) == (s.exact, s.status, s.version)
        assert row.sketch.dtype == np.uint32 and row.sketch.tolist() == s.sketch.tolist()
        assert (row.meta is None) == (s.meta is None) and (row.meta is None or (row.meta == s.meta).all())
    assert {r.status for r in table} == {"ok", "too_short", "empty"}
    assert sum(r.meta is not None for r in table) == 3
    assert table[-1].id == stored[-1].id
    assert [r.id for r in table[1:4]] == [s.id for s in stored[1:4]]  # a Sequence: slices are rows too
    assert [r.id for r in reversed(table)] == [s.id for s in reversed(stored)]
    with pytest.raises(IndexError):
        table[len(table)]


@pytest.mark.parametrize(
    "config", [VerifyConfig(), VerifyConfig(use_sketch=False), VerifyConfig(mu=0.5)], ids=["sketch", "hamming", "meta"]
)
def test_the_table_clusters_as_the_stored_documents_do(hits: list[dict[str, Any]], config: VerifyConfig) -> None:
    table = _table(hits)
    a = cluster_records(table, lambda r: r.fingerprints, config)
    b = cluster_records(_stored_in_order(hits), lambda r: r.fingerprints, config)
    assert a.cluster.tolist() == b.cluster.tolist() and a.duplicate_of.tolist() == b.duplicate_of.tolist()
    assert a.distance.tolist() == b.distance.tolist() and a.similarity.tolist() == b.similarity.tolist()
    assert (a.duplicate_of >= 0).sum() >= 5  # some variants, and the repeated short text, are found


def test_unchanged_compares_the_assignment_each_document_carried(hits: list[dict[str, Any]]) -> None:
    table = _table(hits)
    by_id = {h["_id"]: h["_source"] for h in hits}
    for k, row in enumerate(table):
        source = by_id[row.id]
        assert table.unchanged(k, source)
        carried = schema.assignment_of(source)
        other = schema.assignment_fields("elsewhere", carried[1], Match(carried[2] or 0, carried[3] or 0.0))
        assert not table.unchanged(k, {schema.ROOT: other})
    assigned = next(k for k, row in enumerate(table) if by_id[row.id][schema.ROOT].get(schema.CLUSTER))
    source = by_id[table[assigned].id][schema.ROOT]
    moved = schema.assignment_fields(source[schema.CLUSTER], source[schema.DUPLICATE_OF], Match(2, 0.8125))
    assert not table.unchanged(assigned, {schema.ROOT: moved})


def test_each_row_keeps_where_its_document_stood_when_read(hits: list[dict[str, Any]]) -> None:
    table = _table(hits)
    by_id = {h["_id"]: h for h in hits}
    assert [table.seen(k) for k in range(len(table))] == [
        (by_id[row.id]["_seq_no"], by_id[row.id]["_primary_term"]) for row in table
    ]
    assert [r.id for r in table] != [h["_id"] for h in hits]  # the rows moved: their sequence numbers with them
    for k, row in enumerate(table):  # read again unchanged, or with the fields a clustering reads changed
        source = by_id[row.id]["_source"]
        assert table.still_as_read(k, source)
        for field, value in (
            (schema.INDEXED_AT, "2020-01-01T00:00:00Z"),
            (schema.EXACT, "other"),
            (schema.FINGERPRINT, [12345]),
        ):
            assert not table.still_as_read(k, {schema.ROOT: source[schema.ROOT] | {field: value}}), field
    unread = _table([{k: v for k, v in h.items() if k not in ("_seq_no", "_primary_term")} for h in hits])
    with pytest.raises(ValueError, match="seq_no_primary_term"):
        unread.seen(0)


def test_an_index_without_documents_of_the_version_gives_an_empty_table() -> None:
    table = TableBuilder().build()
    assert len(table) == 0 and list(table) == []
    assert cluster_records(table, lambda r: r.fingerprints, VerifyConfig()).cluster.size == 0

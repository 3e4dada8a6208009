"""The Java port of flagging's duplicate rules (``io.neardup.flag``) assigns every document exactly as Python's
offline clustering does (:func:`neardup.ingest.cluster.cluster_records`, which ingest-time flagging reproduces):
same candidates, same cluster, same ``duplicate_of``, same distance and the same stored similarity.

Python fingerprints a corpus and sends each document's stored fields (as :func:`schema.record_fields` writes them,
plus id and ``indexed_at``) in document order; Java (``io.neardup.parity.FlagParity``) proposes candidates by the
candidate rule, hands them to the assigner as a perfect search would return them (read from doc values, seed 0
only, with the clusters Java assigned before) and assigns each document in turn. The sets: news with planted
reprints, two editions of Tang poems, too-short texts, exact duplicates, and chains (A~B, B~C, A!~C) that the drift
guard must stop; under the default rule and under other thresholds (``min_shared``, Hamming only, metadata).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from neardup.evaluation.corpus import Article, load_peoples_daily, load_tang_editions
from neardup.evaluation.sets import news_set, poem_set
from neardup.ingest.cluster import DEFAULT_MIN_SHARED, cluster_records, record_candidate_pairs
from neardup.ingest.fingerprint import Fingerprinter, Record
from neardup.ingest.records import RecordConfig
from neardup.ingest.verify import Match, VerifyConfig
from neardup.mappings import schema
from neardup.mappings.schema import Stored
from neardup.node.plugin_build import PluginBuild

from .java import CACHE, run_main

MAIN = "io.neardup.parity.FlagParity"
#: ``indexed_at`` of the first document; each later one is a nanosecond later (document order = time order)
_T0 = 1_700_000_000_000_000_000

#: what one document's assignment is compared on: (cluster, duplicate_of, distance, similarity as stored)
Row = tuple[str, str | None, int | None, float | None]


def _fields(records: Sequence[Record], prefix: str) -> list[dict[str, Any]]:
    """The stored fields of ``records`` in document order, with ids and increasing ``indexed_at``."""
    return [
        schema.record_fields(r) | {"id": f"{prefix}{k:05d}", schema.INDEXED_AT: schema.timestamp(_T0 + k)}
        for k, r in enumerate(records)
    ]


def _stored(fields: Sequence[dict[str, Any]]) -> list[Stored]:
    return [Stored.from_hit({"_id": f["id"], "_source": {schema.ROOT: f}}) for f in fields]


def _seeds(doc: Any) -> Sequence[int]:
    return doc.fingerprints  # type: ignore[no-any-return]


def _python_rows(docs: Sequence[Stored], config: VerifyConfig, min_shared: int, guard: bool = True) -> list[Row]:
    """Python's assignment, turned into fields as ``neardup.es.batch.reconcile`` does."""
    a = cluster_records(docs, _seeds, config, guard=guard, min_shared=min_shared)
    rows: list[Row] = []
    for k in range(len(docs)):
        dup = int(a.duplicate_of[k])
        match = Match(int(a.distance[k]), float(a.similarity[k])) if dup >= 0 else None
        f = schema.assignment_fields(docs[int(a.cluster[k])].id, docs[dup].id if dup >= 0 else None, match)
        rows.append((f[schema.CLUSTER], f[schema.DUPLICATE_OF], f[schema.DISTANCE], f[schema.SIMILARITY]))
    return rows


def _python_candidates(docs: Sequence[Stored], min_shared: int) -> list[list[int]]:
    i, j = record_candidate_pairs(docs, _seeds, min_shared=min_shared)
    out: list[list[int]] = [[] for _ in docs]
    for a, b in zip(i.tolist(), j.tolist(), strict=True):
        out[b].append(a)
    return [sorted(c) for c in out]


def _args(config: VerifyConfig, min_shared: int) -> list[str]:
    return [
        f"max_distance={config.max_distance}",
        f"min_jaccard={config.min_jaccard!r}",
        f"near_jaccard={config.near_jaccard!r}",
        f"use_sketch={str(config.use_sketch).lower()}",
        f"mu={config.mu!r}",
        f"min_combined={config.min_combined!r}",
        f"min_shared={min_shared}",
    ]


def compare(
    plugin: PluginBuild,
    records: Sequence[Record],
    what: str,
    config: VerifyConfig | None = None,
    min_shared: int = DEFAULT_MIN_SHARED,
) -> list[Row]:
    """Flag ``records`` in Java and cluster them in Python; assert identical candidates and assignments.
    Returns Python's rows (for checks of what the set exercises)."""
    cfg = config or VerifyConfig()
    fields = _fields(records, what[:4] + "-")
    docs = _stored(fields)
    got = run_main(plugin, MAIN, [json.dumps(f) for f in fields], *_args(cfg, min_shared))
    want = _python_rows(docs, cfg, min_shared)
    candidates = _python_candidates(docs, min_shared)
    bad_candidates = [
        (k, sorted(set(g["candidates"]) - set(w)), sorted(set(w) - set(g["candidates"])))
        for k, (g, w) in enumerate(zip(got, candidates, strict=True))
        if g["candidates"] != w
    ]
    assert not bad_candidates, (
        f"{what}: {len(bad_candidates)} documents with other candidates (#, only Java's, only Python's): "
        f"{[(k, j[:8], p[:8]) for k, j, p in bad_candidates[:5]]}"
    )
    java_rows = [(g["cluster"], g["duplicate_of"], g["distance"], g["similarity"]) for g in got]
    bad = [(k, docs[k].id, j, p) for k, (j, p) in enumerate(zip(java_rows, want, strict=True)) if j != p]
    duplicates = sum(r[1] is not None for r in want)
    pairs = sum(len(c) for c in candidates)
    print(
        f"{what}: compared {len(docs)} documents ({pairs} candidate pairs, {duplicates} duplicates, "
        f"{len(set(r[0] for r in want))} clusters): {len(docs) - len(bad)} identical"
    )
    assert not bad, f"{what}: {len(bad)} of {len(docs)} differ (#, id, java, python): {bad[:5]}"
    return want


@pytest.fixture(scope="module")
def fp() -> Fingerprinter:
    return Fingerprinter.default()


@pytest.fixture(scope="module")
def articles() -> list[Article]:
    return load_peoples_daily()


def test_news_with_planted_reprints(plugin: PluginBuild, fp: Fingerprinter, articles: list[Article]) -> None:
    docs = news_set(articles, seed=11, groups=150, singles=300)
    records = fp.fingerprint_many([(d.text, d.title) for d in docs])
    rows = compare(plugin, records, "news")
    assert sum(r[1] is not None for r in rows) > 300  # the reprints were found


def test_poems_of_two_editions(plugin: PluginBuild, fp: Fingerprinter) -> None:
    first, second = load_tang_editions(CACHE / "npm")
    docs = poem_set(first, second, seed=11, pairs=300, singles=300)
    records = fp.fingerprint_many([(d.text, d.title or None) for d in docs])
    rows = compare(plugin, records, "poems")
    assert sum(r[1] is not None for r in rows) > 200


def _short_and_exact(articles: Sequence[Article]) -> list[tuple[str, str | None]]:
    """Too-short texts (repeated, matched by exact hash only) and texts without letters or digits (never matched;
    title-only items among them) among exact duplicates of articles, under the same title, under none and under
    another, in a fixed shuffled order. (The title moves the fingerprints of the same text, often past every block:
    the copies pair by exact hash.)"""
    rng = random.Random(5)
    shorts = ["好的", "收到", "好的", "嗯", "收到", "谢谢", "好的", "", "，，。", "", "OK", "ok", "谢谢！", "谢谢"]
    docs: list[tuple[str, str | None]] = [(t, None) for t in shorts] + [("", "图片"), ("", "图片"), ("…", "国务院")]
    docs += [
        ("（图片）", "北京"),
        ("图片", "上海"),
        ("图片", "北京"),
        ("图片", None),
    ]  # short bodies go with their titles
    for a in articles[:40]:
        docs += [(a.text, a.title), (a.text, a.title), (a.text, None), (a.text, "转载：" + a.title)]
    rng.shuffle(docs)
    return docs


def test_too_short_texts_and_exact_duplicates(plugin: PluginBuild, fp: Fingerprinter, articles: list[Article]) -> None:
    records = fp.fingerprint_many(_short_and_exact(articles))
    assert (sum(r.status == "too_short" for r in records), sum(r.status == "empty" for r in records)) == (15, 6)
    rows = compare(plugin, records, "short-exact")
    assert sum(r[1] is not None and r[3] == 1.0 for r in rows) >= 40 * 3 + 7  # every copy, every repeated short text
    assert all(row[1] is None for row, r in zip(rows, records, strict=True) if r.status == "empty")


def _chains(articles: Sequence[Article], count: int) -> list[str]:
    """Triples of overlapping sentence windows A = s0..s9, B = s4..s13, C = s8..s17: A~B and B~C, but C has
    drifted from A. Every third triple comes in the order B, A, C or C, B, A instead of A, B, C."""
    out: list[str] = []
    for k, a in enumerate(articles):
        s = [x + "。" for x in re.split("。", a.text) if x.strip()]
        if len(s) < 18:
            continue
        triple = ["".join(s[0:10]), "".join(s[4:14]), "".join(s[8:18])]
        order = [(0, 1, 2), (1, 0, 2), (2, 1, 0)][k % 3] if k % 3 else (0, 1, 2)
        out += [triple[o] for o in order]
        if len(out) >= 3 * count:
            break
    return out


def test_chains_stopped_by_the_drift_guard(plugin: PluginBuild, fp: Fingerprinter, articles: list[Article]) -> None:
    records = fp.fingerprint_many([(t, None) for t in _chains(articles, 150)])
    rows = compare(plugin, records, "chains")
    docs = _stored(_fields(records, "chai-"))
    unguarded = _python_rows(docs, VerifyConfig(), DEFAULT_MIN_SHARED, guard=False)
    stopped = sum(g[0] != u[0] for g, u in zip(rows, unguarded, strict=True))
    print(f"chains: the drift guard changes the cluster of {stopped} documents")
    assert stopped >= 20


def _flood(articles: Sequence[Article], copies: int) -> list[str]:
    """``copies`` look-alikes of two articles (a few characters edited in each) among other articles: buckets
    of far more than 256 members, runs longer than the 64-document window, more than 64 candidates each."""
    rng = random.Random(9)
    out = [a.text for a in articles[500:560]]
    for k in range(copies):
        base = list(articles[600 + k % 2].text)
        for _ in range(3):
            base[rng.randrange(len(base))] = rng.choice("的一是在不了有和人这中大为上个国")
        out.insert(rng.randrange(len(out) + 1), "".join(base))
    return out


def test_a_flood_of_look_alikes(plugin: PluginBuild, fp: Fingerprinter, articles: list[Article]) -> None:
    records = fp.fingerprint_many([(t, None) for t in _flood(articles, 700)])
    fps = np.array([r.fingerprints for r in records if r.status == "ok"], dtype=np.uint64)
    biggest = max(
        int(np.unique((fps[:, s] >> np.uint64(16 * b)) & np.uint64(0xFFFF), return_counts=True)[1].max())
        for s in range(fps.shape[1])
        for b in range(4)
    )
    assert biggest > 256  # the bucket split is exercised
    docs = _stored(_fields(records, "floo-"))
    assert max(len(c) for c in _python_candidates(docs, 1)) == 64  # and the cap
    compare(plugin, records, "flood")
    compare(plugin, records, "flood, min_shared=8", min_shared=8)


@pytest.mark.parametrize(
    ("name", "config", "min_shared"),
    [
        ("min_shared=3", VerifyConfig(), 3),
        ("hamming only", VerifyConfig(use_sketch=False, max_distance=6), 1),
        ("strict sketches", VerifyConfig(min_jaccard=0.6, near_jaccard=0.45, max_distance=8), 2),
    ],
)
def test_other_thresholds(
    plugin: PluginBuild, fp: Fingerprinter, articles: list[Article], name: str, config: VerifyConfig, min_shared: int
) -> None:
    docs = news_set(articles, seed=12, groups=80, singles=120)
    texts: list[tuple[str, str | None]] = [(d.text, d.title) for d in docs]
    texts += [(t, None) for t in _chains(articles, 40)]
    texts += _short_and_exact(articles[200:])
    rng = random.Random(7)
    rng.shuffle(texts)
    compare(plugin, fp.fingerprint_many(texts), name, config, min_shared)


def test_records_with_metadata(plugin: PluginBuild, fp: Fingerprinter, articles: list[Article]) -> None:
    """Records with set fields: the combined score decides, and near-identical text with other tags is no
    duplicate."""
    cfg = RecordConfig.parse({"fields": {"body": {"mode": "text"}, "tags": {"mode": "set"}}})
    rng = random.Random(3)
    vocab = ["环保", "交通", "教育", "医疗", "住房", "就业"]
    rows: list[dict[str, Any]] = []
    for a in articles[300:420]:
        tags = rng.sample(vocab, 2)
        rows.append({"body": a.text, "tags": tags})
        retagged = tags if rng.random() < 0.5 else rng.sample(vocab, 2)
        rows.append({"body": a.text.replace("。", "！", 2), "tags": retagged})
        if rng.random() < 0.3:
            rows.append({"body": a.text})  # no tags: metadata on one side only
    rng.shuffle(rows)
    records = [fp.fingerprint_record(r, cfg) for r in rows]
    assert sum(r.meta is not None for r in records) > 200
    compare(plugin, records, "metadata", cfg.verify_config(VerifyConfig()))

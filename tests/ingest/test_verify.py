"""The second check (:mod:`neardup.ingest.verify`): the vectorised forms give exactly :func:`verify`'s answers."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.variants import make_variant
from neardup.ingest.fingerprint import Fingerprinter, Record
from neardup.ingest.metadata import meta_signature
from neardup.ingest.verify import Match, VerifyConfig, close_to_canonical, verify, verify_many, verify_pairs


@pytest.fixture(scope="module")
def records(fp: Fingerprinter) -> list[Record]:
    """Articles, reprint variants of them (near and far), too-short and empty texts, some with metadata."""
    rng = random.Random(5)
    articles = load_peoples_daily()[:40]
    texts = []
    for a in articles:
        texts.append(a.text)
        texts += ["\n".join(make_variant(list(a.paragraphs), rng)[0]) for _ in range(2)]
    texts += ["好", "好", "新年好", "", "  "]
    recs = fp.fingerprint_many([(t, None) for t in texts])
    tags = [frozenset(rng.sample("abcdefgh", 3)) for _ in recs]
    return [replace(r, meta=meta_signature({"tags": tags[k]})) if k % 3 == 0 else r for k, r in enumerate(recs)]


@pytest.mark.parametrize(
    "config",
    [
        VerifyConfig(),
        VerifyConfig(use_sketch=False),
        VerifyConfig(mu=0.6),
        VerifyConfig(min_jaccard=0.6, max_distance=5),
    ],
    ids=["default", "hamming-only", "with-metadata", "strict"],
)
def test_verify_pairs_equals_verify_pair_by_pair(records: list[Record], config: VerifyConfig) -> None:
    n = len(records)
    i = np.repeat(np.arange(n), n)
    j = np.tile(np.arange(n), n)
    expected = [verify(records[a], records[b], config) for a, b in zip(i.tolist(), j.tolist(), strict=True)]
    assert verify_pairs(records, i, j, config) == expected
    accepted = sum(m is not None for m in expected)
    assert n < accepted < n * n // 4  # the set holds both matches and non-matches
    a = records[3]
    assert verify_many(a, records, config) == [verify(a, c, config) for c in records]


def test_too_short_texts_with_metadata_need_the_combined_score(fp: Fingerprinter) -> None:
    """Too short for fingerprints, the same text agrees fully (1.0); with tags on both and mu < 1 the combined score
    of that agreement decides, as it does for longer texts (near-identical text with other tags is no duplicate)."""
    short = fp.fingerprint("好的")
    assert short.status == "too_short"
    a, b, c = (replace(short, meta=meta_signature({"tags": t})) for t in ({"x", "y"}, {"x", "y"}, {"p", "q"}))
    low = VerifyConfig(mu=0.3, min_combined=0.6, near_jaccard=0.5)
    assert verify(a, b, low) == Match(0, 1.0) and close_to_canonical(a, b, low)
    assert verify(a, c, low) is None and not close_to_canonical(a, c, low)  # 0.3 · 1 + 0.7 · 0
    assert verify(a, c, VerifyConfig(mu=0.3, min_combined=0.3)) == Match(0, 0.3)
    assert verify(a, c, VerifyConfig()) == Match(0, 1.0) and close_to_canonical(a, c, VerifyConfig())  # mu 1
    assert verify(a, short, low) == Match(0, 1.0)  # metadata on one side only: the exact hash alone
    assert verify_pairs([a, b, c], [0, 0], [1, 2], low) == [Match(0, 1.0), None]

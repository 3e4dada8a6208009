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
from neardup.ingest.verify import VerifyConfig, verify, verify_many, verify_pairs


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

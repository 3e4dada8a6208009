"""SimHash bits are exact: the vectorised sum equals a plain integer sum of the quantised weights, on both of
its paths (float64 products up to 2**16 features, int64 above)."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.ingest.simhash import feature_hashes, quantize, reseed, simhash


def _reference(weights: dict[str, float], seed: int) -> int:
    """Bit j set iff the integer sum of ±units over features is above 0, one feature at a time."""
    words = list(weights)
    hashes = reseed(feature_hashes(words), seed).tolist()
    units = [int(u) for u in quantize(np.array([weights[w] for w in words], dtype=np.float64)).tolist()]
    out = 0
    for bit in range(64):
        total = sum(u if (h >> bit) & 1 else -u for h, u in zip(hashes, units, strict=True))
        if total > 0:
            out |= 1 << bit
    return out


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=4), st.sampled_from([0.2, 0.5, 1.0, 1.5, 2.0, 3.25]), max_size=12))
def test_ties_and_small_documents_match_the_integer_sum(weights: dict[str, float]) -> None:
    assert simhash(weights, (0, 3)) == [_reference(weights, 0), _reference(weights, 3)]


def test_more_features_than_the_float_bound_take_the_integer_path() -> None:
    rng = random.Random(5)
    weights = {f"w{i}": rng.choice([0.2, 0.5, 1.0, 2.0]) for i in range(70_000)}  # above 2**16 features
    assert simhash(weights, (0,)) == [_reference(weights, 0)]

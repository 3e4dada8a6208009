"""Weighted SimHash, vectorised: xxh3_64 feature hashes → ±weight per bit → sign → 64 bits.

Several fingerprints per document (one per seed) give independent chances to share a block;
seed 0 is the document's main fingerprint. Each feature is hashed once with
xxh3_64; the hash for seed s > 0 is that value remixed by splitmix64 with a seed constant, which is
vectorised (numpy) and so costs almost nothing per extra seed.

>>> fp = simhash({"北京": 3.0, "天气": 1.0}, seeds=(0,))
>>> fp[0] == simhash({"天气": 1.0, "北京": 3.0}, seeds=(0,))[0]
True
>>> simhash({}, seeds=(0, 1))
[0, 0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import xxhash

from .bits import splitmix64

__all__ = ["feature_hashes", "reseed", "simhash"]

_BIT_VALUES = np.uint64(1) << np.arange(64, dtype=np.uint64)


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def feature_hashes(features: Sequence[str]) -> np.ndarray:
    """xxh3_64 (seed 0) of each feature's UTF-8 bytes, as uint64 (never Python's ``hash()``)."""
    h = xxhash.xxh3_64_intdigest
    return np.fromiter((h(f.encode("utf-8")) for f in features), dtype=np.uint64, count=len(features))


def reseed(hashes: np.ndarray, seed: int) -> np.ndarray:
    """The feature hashes for ``seed``: seed 0 is the xxh3 value itself, others a splitmix64 remix."""
    if seed == 0:
        return hashes
    with np.errstate(over="ignore"):
        return splitmix64(hashes ^ (np.uint64(seed) * _GOLDEN))


def _reseed_all(hashes: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
    """:func:`reseed` for every seed at once, as columns (one vectorised splitmix64 call)."""
    salts = np.asarray(seeds, dtype=np.uint64) * _GOLDEN
    with np.errstate(over="ignore"):
        out = splitmix64(hashes[:, None] ^ salts[None, :])
    zero = np.asarray(seeds) == 0
    out[:, zero] = hashes[:, None]
    return out


def simhash(weights: Mapping[str, float], seeds: Sequence[int] = (0,)) -> list[int]:
    """One unsigned 64-bit SimHash of the weighted features per seed.

    Bit j is 1 iff the sum over features of (+w if the feature hash has bit j set else −w) is > 0.
    All seeds are computed in one matrix product.
    """
    if not weights:
        return [0 for _ in seeds]
    n = len(weights)
    w = np.fromiter(weights.values(), dtype=np.float32, count=n)
    base = feature_hashes(list(weights))
    hashes = _reseed_all(base, seeds)  # (n, seeds)
    # bit b of seed s sits in column s*64 + b (little-endian bytes, little bit order)
    bits = np.unpackbits(hashes.view(np.uint8).reshape(n, -1), axis=1, bitorder="little")
    # sum of (+w for 1, -w for 0) = 2 * (sum of w over set bits) - sum of w
    totals = 2.0 * (w @ bits.astype(np.float32)) - float(w.sum())
    positive = (totals > 0).reshape(len(seeds), 64)
    return [int(v) for v in np.where(positive, _BIT_VALUES, np.uint64(0)).sum(axis=1, dtype=np.uint64)]

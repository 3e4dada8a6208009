"""Weighted SimHash, vectorised: xxh3_64 feature hashes → ±weight per bit → sign → 64 bits.

The sums are exact. Each weight is first rounded to a whole number of 2⁻¹⁶ units (:func:`quantize`), and
every partial sum of such integers is exactly representable in a float64, so the matrix product gives the
same totals in any summation order: on any BLAS, any CPU, and in the Java port. A float sum would not:
its rounding depends on the order, and a total near zero could flip a bit.

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

__all__ = ["WEIGHT_UNIT_BITS", "feature_hashes", "quantize", "reseed", "simhash"]

_BIT_VALUES = np.uint64(1) << np.arange(64, dtype=np.uint64)

#: weights are counted in units of 2**-16
WEIGHT_UNIT_BITS = 16
#: no weight counts for more than 2**36 units (2**20 as a weight), so 2**16 features sum below 2**52
_MAX_UNITS = float(1 << 36)
_EXACT_FEATURES = 1 << 16


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


def quantize(weights: np.ndarray) -> np.ndarray:
    """Weights as whole numbers of 2⁻¹⁶ units (round half to even, as Java's ``Math.rint``), capped at 2³⁶
    units, as float64 values that are integers.

    >>> quantize(np.array([1.0, 0.5 ** 17, 3 * 0.5 ** 17, 1e9])).tolist()
    [65536.0, 0.0, 2.0, 68719476736.0]
    """
    return np.clip(np.rint(weights * float(1 << WEIGHT_UNIT_BITS)), -_MAX_UNITS, _MAX_UNITS)


def simhash(weights: Mapping[str, float], seeds: Sequence[int] = (0,)) -> list[int]:
    """One unsigned 64-bit SimHash of the weighted features per seed.

    Bit j is 1 iff the sum over features of (+w if the feature hash has bit j set else −w) is > 0, with
    each w quantised by :func:`quantize` so the sum is exact. All seeds are computed in one matrix product.
    """
    if not weights:
        return [0 for _ in seeds]
    n = len(weights)
    w = quantize(np.fromiter(weights.values(), dtype=np.float64, count=n))
    base = feature_hashes(list(weights))
    hashes = _reseed_all(base, seeds)  # (n, seeds)
    # bit b of seed s sits in column s*64 + b (little-endian bytes, little bit order)
    bits = np.unpackbits(hashes.view(np.uint8).reshape(n, -1), axis=1, bitorder="little")
    if n <= _EXACT_FEATURES:  # every partial sum is an integer below 2**53: exact in float64, in any order
        positive = 2.0 * (w @ bits.astype(np.float64)) - float(w.sum()) > 0
    else:  # more features than that bound covers: integer arithmetic (slower, as exact)
        units = w.astype(np.int64)
        positive = 2 * (units @ bits.astype(np.int64)) - int(units.sum()) > 0
    positive = positive.reshape(len(seeds), 64)
    return [int(v) for v in np.where(positive, _BIT_VALUES, np.uint64(0)).sum(axis=1, dtype=np.uint64)]

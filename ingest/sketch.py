"""Character-shingle sketches for the second check: a bottom-k MinHash of character 3-grams.

The fingerprint proposes candidates; this sketch decides. It is computed with numpy alone (no Python
loop over shingles): code points → 3-gram integers → splitmix64 mixing → the k smallest distinct
values. Two sketches estimate the Jaccard similarity of the two documents' shingle sets.

>>> a = shingle_sketch("今天北京天气晴朗，适合出门散步")
>>> b = shingle_sketch("今天北京天气晴朗，适合出门跑步")
>>> round(jaccard(a, b), 2), jaccard(a, a)
(0.73, 1.0)
>>> jaccard(shingle_sketch(""), a)
0.0
"""

from __future__ import annotations

import base64

import numpy as np
import numpy.typing as npt

from .bits import splitmix64

__all__ = ["SHINGLE", "SKETCH_SIZE", "decode_sketch", "encode_sketch", "jaccard", "shingle_sketch"]

SHINGLE = 3
SKETCH_SIZE = 128
_U64 = np.uint64


def shingle_sketch(chars: str, k: int = SKETCH_SIZE, shingle: int = SHINGLE) -> npt.NDArray[np.uint32]:
    """Bottom-k sketch (sorted, distinct, upper 32 bits of a 64-bit mix) of ``chars``' shingles.

    Texts shorter than one shingle are sketched as a single shingle of the whole text.
    """
    if not chars:
        return np.zeros(0, dtype=np.uint32)
    codes = np.frombuffer(chars.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    if codes.size < shingle:
        codes = np.concatenate([codes, np.zeros(shingle - codes.size, dtype=np.uint64)])
    n = codes.size - shingle + 1
    grams = np.zeros(n, dtype=np.uint64)
    for i in range(shingle):  # code points are < 2**21: three of them fit one uint64
        grams |= codes[i : i + n] << _U64(21 * (shingle - 1 - i))
    with np.errstate(over="ignore"):
        mixed = (splitmix64(grams) >> _U64(32)).astype(np.uint32)
    distinct = np.unique(mixed)  # sorted
    return distinct[:k]


def jaccard(a: npt.NDArray[np.uint32], b: npt.NDArray[np.uint32], k: int = SKETCH_SIZE) -> float:
    """Estimated Jaccard similarity of two bottom-k sketches."""
    if a.size == 0 or b.size == 0:
        return 0.0
    union = np.union1d(a, b)[:k]
    both = np.isin(union, a, assume_unique=True) & np.isin(union, b, assume_unique=True)
    return float(both.sum()) / float(union.size)


def encode_sketch(sketch: npt.NDArray[np.uint32]) -> str:
    """Base64 of the little-endian uint32 values (the ``neardup.minhash`` binary field).

    >>> decode_sketch(encode_sketch(np.array([1, 2**32 - 1], dtype=np.uint32))).tolist()
    [1, 4294967295]
    """
    return base64.b64encode(sketch.astype("<u4").tobytes()).decode("ascii")


def decode_sketch(text: str) -> npt.NDArray[np.uint32]:
    return np.frombuffer(base64.b64decode(text), dtype="<u4").astype(np.uint32)

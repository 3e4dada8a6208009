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
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .bits import splitmix64

__all__ = [
    "SHINGLE",
    "SKETCH_SIZE",
    "decode_sketch",
    "encode_sketch",
    "jaccard",
    "jaccard_bounds",
    "jaccard_rows",
    "pack_sketches",
    "shingle_sketch",
    "sketch_bitmaps",
]

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


def pack_sketches(
    sketches: Sequence[npt.NDArray[np.uint32]], k: int = SKETCH_SIZE
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    """Sketches as one (n, k) matrix, each row left-aligned, and their lengths."""
    lengths = np.fromiter((min(s.size, k) for s in sketches), dtype=np.int64, count=len(sketches))
    out = np.zeros((len(sketches), k), dtype=np.uint32)
    for row, (s, n) in enumerate(zip(sketches, lengths.tolist(), strict=True)):
        out[row, :n] = s[:n]
    return out, lengths


def jaccard_rows(
    a: npt.NDArray[np.uint32],
    a_len: npt.NDArray[np.int64],
    b: npt.NDArray[np.uint32],
    b_len: npt.NDArray[np.int64],
    k: int = SKETCH_SIZE,
) -> npt.NDArray[np.float64]:
    """:func:`jaccard` of row ``r`` of ``a`` with row ``r`` of ``b`` for every row at once (matrices of
    :func:`pack_sketches`; ``a`` may be one row, broadcast against all of ``b``), the same values.

    Each row pair is merged by one sort; a value in both sketches shows as two equal neighbours. Padding
    slots get distinct values above every 32-bit value, so they sort last and never pair.

    >>> x, y, z = shingle_sketch("今天北京天气晴朗"), shingle_sketch("今天北京天气不错"), shingle_sketch("")
    >>> a, la = pack_sketches([x])
    >>> b, lb = pack_sketches([y, x, z])
    >>> jaccard_rows(a, la, b, lb).tolist() == [jaccard(x, y), 1.0, 0.0]
    True
    """
    rows = max(a.shape[0], b.shape[0])
    col = np.arange(k, dtype=np.uint64)
    wide_a = np.where(col < a_len[:, None].astype(np.uint64), a.astype(np.uint64), _U64(1 << 32) + col)
    wide_b = np.where(col < b_len[:, None].astype(np.uint64), b.astype(np.uint64), _U64(1 << 33) + col)
    merged = np.sort(np.concatenate([np.broadcast_to(wide_a, (rows, k)), wide_b], axis=1), axis=1)
    same = merged[:, 1:] == merged[:, :-1]
    distinct_so_far = np.cumsum(np.concatenate([np.ones((rows, 1), bool), ~same], axis=1), axis=1)
    both = np.count_nonzero(same & (distinct_so_far[:, 1:] <= k), axis=1)
    union = np.minimum(k, a_len + b_len - np.count_nonzero(same, axis=1))
    nonempty = (a_len > 0) & (b_len > 0)
    return np.where(nonempty, both / np.maximum(union, 1), 0.0)


#: bits of a :func:`sketch_bitmaps` row: 16 words (128 MB for a million sketches); a chance pair of 128-value
#: sketches still counts only about an eighth of its values as shared
BITMAP_BITS = 1024
_BITMAP_ROWS = 16_384


def sketch_bitmaps(
    sketches: npt.NDArray[np.uint32], lengths: npt.NDArray[np.int64], rows: npt.NDArray[np.int64] | None = None
) -> npt.NDArray[np.uint64]:
    """Per row of :func:`pack_sketches`' matrix (or per row named in ``rows``), the set of its values' low 10
    bits, as 16 words. Built :data:`_BITMAP_ROWS` rows at a time: the temporaries of a million rows at once would
    take gigabytes."""
    chosen = np.arange(sketches.shape[0]) if rows is None else rows
    out = np.zeros((chosen.size, BITMAP_BITS // 64), dtype=np.uint64)
    for start in range(0, chosen.size, _BITMAP_ROWS):
        at = chosen[start : start + _BITMAP_ROWS]
        low = sketches[at] & np.uint32(BITMAP_BITS - 1)
        valid = np.arange(sketches.shape[1]) < lengths[at, None]
        bit = np.where(valid, np.left_shift(np.uint64(1), (low & np.uint32(63)).astype(np.uint64)), np.uint64(0))
        word = low >> np.uint32(6)
        for w in range(out.shape[1]):
            out[start : start + at.size, w] = np.bitwise_or.reduce(np.where(word == w, bit, np.uint64(0)), axis=1)
    return out


def jaccard_bounds(
    a_bitmaps: npt.NDArray[np.uint64],
    a_len: npt.NDArray[np.int64],
    b: npt.NDArray[np.uint32],
    b_len: npt.NDArray[np.int64],
    k: int = SKETCH_SIZE,
) -> npt.NDArray[np.float64]:
    """Per row, a value at least :func:`jaccard_rows` of the same rows (``a`` given as :func:`sketch_bitmaps`),
    far cheaper: a candidate pair that shares no text is refused without merging its sketches.

    Why it bounds: the estimate counts the values in both sketches among the first ``min(k, |A ∪ B|)`` of their
    union, so it is at most ``shared / min(k, max(|A|, |B|))``; a value of ``b`` whose low bits are set in ``a``'s
    bitmap is counted as shared, which counts every shared value and perhaps others, never fewer.

    >>> x, y, z = shingle_sketch("今天北京天气晴朗"), shingle_sketch("今天北京天气不错"), shingle_sketch("明年上海多雨")
    >>> a, la = pack_sketches([x, x, x])
    >>> b, lb = pack_sketches([y, x, z])
    >>> bool((jaccard_bounds(sketch_bitmaps(a, la), la, b, lb) >= jaccard_rows(a, la, b, lb)).all())
    True
    """
    low = b & np.uint32(BITMAP_BITS - 1)
    words = np.take_along_axis(a_bitmaps, (low >> np.uint32(6)).astype(np.intp), axis=1)
    held = (words >> (low & np.uint32(63)).astype(np.uint64)) & np.uint64(1)
    shared = np.count_nonzero(held.astype(bool) & (np.arange(b.shape[1]) < b_len[:, None]), axis=1)
    denominator = np.minimum(k, np.maximum(a_len, b_len))
    nonempty = (a_len > 0) & (b_len > 0)
    return np.where(nonempty, shared / np.maximum(denominator, 1), 0.0)


def encode_sketch(sketch: npt.NDArray[np.uint32]) -> str:
    """Base64 of the little-endian uint32 values (the ``neardup.minhash`` binary field).

    >>> decode_sketch(encode_sketch(np.array([1, 2**32 - 1], dtype=np.uint32))).tolist()
    [1, 4294967295]
    """
    return base64.b64encode(sketch.astype("<u4").tobytes()).decode("ascii")


def decode_sketch(text: str) -> npt.NDArray[np.uint32]:
    return np.frombuffer(base64.b64decode(text), dtype="<u4").astype(np.uint32)

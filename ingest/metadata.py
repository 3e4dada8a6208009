"""Metadata similarity: a MinHash signature of a document's
set-valued fields (tags, keywords, references), computed with datasketch, and the combined score
``μ · content + (1 − μ) · metadata`` that verification uses when records carry metadata.

Set elements are namespaced by field (``tags=体育``) so equal strings in different fields differ.

>>> a = meta_signature({"tags": ["体育", "足球"], "refs": ["r1"]})
>>> b = meta_signature({"tags": ["体育", "足球"], "refs": ["r2"]})
>>> round(meta_jaccard(a, b), 1), meta_jaccard(a, a)
(0.5, 1.0)
>>> meta_signature({"tags": []}) is None
True
>>> meta_signature({"tags": ["a", "b"]})[:3].tolist()  # a golden value: the stored signatures depend on it
[1593823774, 354853499, 448189348]
>>> combined(0.6, 1.0, mu=0.85)
0.66
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt
import xxhash

__all__ = ["META_PERM", "combined", "decode_meta", "encode_meta", "meta_jaccard", "meta_signature"]

META_PERM = 128
_SEED = 1
#: datasketch's permutation scheme (its default from 2.0; 1.x had only "legacy", whose values differ)
_SCHEME = "affine32"


def _hash32(data: bytes) -> int:
    return xxhash.xxh32_intdigest(data)


def meta_signature(sets: Mapping[str, Iterable[str]], num_perm: int = META_PERM) -> npt.NDArray[np.uint32] | None:
    """MinHash hash values of the union of ``field=element`` over every set; None when all are empty."""
    elements = {f"{name}={e}".encode() for name, values in sets.items() for e in values if str(e).strip()}
    if not elements:
        return None
    from datasketch import MinHash  # imported here: datasketch pulls in scipy, which every CLI start would pay

    # the scheme named: stored signatures must match later ones, whatever datasketch's default becomes
    m = MinHash(num_perm=num_perm, seed=_SEED, hashfunc=_hash32, scheme=_SCHEME)
    m.update_batch(sorted(elements))
    values: npt.NDArray[np.uint32] = np.asarray(m.hashvalues, dtype=np.uint32)
    return values


def meta_jaccard(a: npt.NDArray[np.uint32] | None, b: npt.NDArray[np.uint32] | None) -> float:
    """Estimated Jaccard similarity of two signatures (0 when either document has no metadata)."""
    if a is None or b is None or a.size != b.size or a.size == 0:
        return 0.0
    return float(np.count_nonzero(a == b)) / float(a.size)


def combined(content: float, metadata: float, mu: float) -> float:
    """``μ · content + (1 − μ) · metadata``, rounded to 4 places."""
    return round(mu * content + (1.0 - mu) * metadata, 4)


def encode_meta(sig: npt.NDArray[np.uint32]) -> str:
    """Base64 of little-endian uint32 values (the ``neardup.meta_minhash`` binary field)."""
    return base64.b64encode(sig.astype("<u4").tobytes()).decode("ascii")


def decode_meta(text: str | None) -> npt.NDArray[np.uint32] | None:
    if not text:
        return None
    return np.frombuffer(base64.b64decode(text), dtype="<u4").astype(np.uint32)

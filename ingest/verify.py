"""The second check: does a candidate pair really match, and how close is it?

Candidates come from shared blocks (any seed). A pair is accepted when the shingle sketches agree
strongly (``min_jaccard``), or when the main fingerprints are within ``max_distance`` bits and the
sketches agree at least weakly (``near_jaccard``). Too-short documents match only by exact hash.

>>> from neardup.ingest.fingerprint import Fingerprinter
>>> fp = Fingerprinter.default()
>>> text = "国务院总理今天主持召开国务院常务会议，部署进一步扩大内需、稳定经济增长的政策措施。"
>>> a, b = fp.fingerprint(text), fp.fingerprint(text.replace("今天", "昨天"))
>>> m = verify(a, b, VerifyConfig())
>>> m is not None and m.similarity > 0.8
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from .bits import hamming
from .metadata import combined, meta_jaccard
from .sketch import jaccard

__all__ = ["Comparable", "Match", "VerifyConfig", "close_to_canonical", "verify"]


class Comparable(Protocol):
    @property
    def fingerprint(self) -> int: ...
    @property
    def sketch(self) -> npt.NDArray[np.uint32]: ...
    @property
    def exact(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def meta(self) -> npt.NDArray[np.uint32] | None: ...


@dataclass(frozen=True)
class VerifyConfig:
    max_distance: int = 3
    min_jaccard: float = 0.35
    near_jaccard: float = 0.2
    use_sketch: bool = True
    #: weight of content against metadata sets in the combined score (1: content only)
    mu: float = 1.0
    #: the combined score a pair needs when either record carries metadata and ``mu`` < 1
    min_combined: float = 0.55

    def describe(self) -> str:
        return (
            f"d<={self.max_distance},j>={self.min_jaccard},near_j>={self.near_jaccard},sketch={self.use_sketch},"
            f"mu={self.mu},combined>={self.min_combined}"
        )


def _combined(a: Comparable, b: Comparable, content: float, config: VerifyConfig) -> float | None:
    """The combined score when it applies (``mu`` < 1 and some metadata), else None."""
    if config.mu >= 1.0 or (a.meta is None and b.meta is None):
        return None
    return combined(content, meta_jaccard(a.meta, b.meta), config.mu)


@dataclass(frozen=True)
class Match:
    distance: int
    similarity: float


def verify(a: Comparable, b: Comparable, config: VerifyConfig) -> Match | None:
    """The match of ``a`` and ``b`` if they are near-duplicates under ``config``, else None.

    With metadata (``mu`` < 1) the decision is the combined score alone: near-identical text with
    different tags is not a duplicate, whatever the Hamming distance.
    """
    if a.status == "empty" or b.status == "empty":
        return None
    if a.status != "ok" or b.status != "ok":
        return Match(0, 1.0) if a.exact == b.exact and a.status == b.status else None
    distance = hamming(a.fingerprint, b.fingerprint)
    if not config.use_sketch:
        return Match(distance, 1.0 - distance / 64) if distance <= config.max_distance else None
    similarity = jaccard(a.sketch, b.sketch)
    score = _combined(a, b, similarity, config)
    if score is not None:
        return Match(distance, score) if score >= config.min_combined else None
    if similarity >= config.min_jaccard or (distance <= config.max_distance and similarity >= config.near_jaccard):
        return Match(distance, similarity)
    return None


def close_to_canonical(doc: Comparable, canonical: Comparable, config: VerifyConfig) -> bool:
    """The drift guard: may ``doc`` (matched to some member) join the cluster of ``canonical``?

    It must still resemble the canonical weakly: sketches at ``near_jaccard`` or fingerprints within
    ``max_distance`` (twice that without sketches). Too-short documents need the same exact hash.
    """
    if doc.status != "ok" or canonical.status != "ok":
        return doc.exact == canonical.exact and "empty" not in (doc.status, canonical.status)
    distance = hamming(doc.fingerprint, canonical.fingerprint)
    if not config.use_sketch:
        return distance <= 2 * config.max_distance
    score = _combined(doc, canonical, jaccard(doc.sketch, canonical.sketch), config)
    if score is not None:
        return score >= config.near_jaccard
    return distance <= config.max_distance or jaccard(doc.sketch, canonical.sketch) >= config.near_jaccard

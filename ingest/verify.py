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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from .bits import hamming
from .metadata import combined, meta_jaccard
from .sketch import jaccard, jaccard_bounds, jaccard_rows, pack_sketches, sketch_bitmaps

__all__ = [
    "Comparable",
    "Match",
    "VerifyConfig",
    "accepted_pairs",
    "close_to_canonical",
    "verify",
    "verify_many",
    "verify_pairs",
]


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
    #: the combined score a pair needs when both records carry metadata and ``mu`` < 1
    min_combined: float = 0.55

    def describe(self) -> str:
        return (
            f"d<={self.max_distance},j>={self.min_jaccard},near_j>={self.near_jaccard},sketch={self.use_sketch},"
            f"mu={self.mu},combined>={self.min_combined}"
        )


def _combined(a: Comparable, b: Comparable, content: float, config: VerifyConfig) -> float | None:
    """The combined score when it applies (``mu`` < 1, and metadata on both), else None. Metadata on one side only
    says nothing of the pair (a row whose tags are missing), so the content decides, as it does without any."""
    if config.mu >= 1.0 or a.meta is None or b.meta is None:
        return None
    return combined(content, meta_jaccard(a.meta, b.meta), config.mu)


@dataclass(frozen=True)
class Match:
    distance: int
    similarity: float


def verify(a: Comparable, b: Comparable, config: VerifyConfig) -> Match | None:
    """The match of ``a`` and ``b`` if they are near-duplicates under ``config``, else None.

    With metadata on both (``mu`` < 1) the decision is the combined score alone: near-identical text with
    different tags is not a duplicate, whatever the Hamming distance. Documents not ``ok`` (too short for
    fingerprints) match by the same exact hash and status alone, metadata or not: the candidate rule pairs each with
    the first of its hash only (:func:`~neardup.ingest.cluster.record_candidate_pairs`), which finds every such pair
    only while all of them agree.
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


def verify_many(a: Comparable, candidates: Sequence[Comparable], config: VerifyConfig) -> list[Match | None]:
    """``[verify(a, c, config) for c in candidates]``, computed as :func:`verify_pairs` does.

    >>> from neardup.ingest.fingerprint import Fingerprinter
    >>> fp = Fingerprinter.default()
    >>> text = "国务院总理今天主持召开国务院常务会议，部署进一步扩大内需、稳定经济增长的政策措施。"
    >>> others = [fp.fingerprint(t) for t in (text.replace("今天", "昨天"), "今天天气很好", "好")]
    >>> a = fp.fingerprint(text)
    >>> verify_many(a, others, VerifyConfig()) == [verify(a, c, VerifyConfig()) for c in others]
    True
    """
    n = len(candidates)
    return verify_pairs([a, *candidates], np.zeros(n, np.int64), np.arange(1, n + 1), config)


#: pairs per vectorised step (two (chunk, 2 * sketch size) uint64 matrices at a time)
_CHUNK = 16_384


def verify_pairs(
    records: Sequence[Comparable], i: npt.ArrayLike, j: npt.ArrayLike, config: VerifyConfig
) -> list[Match | None]:
    """``[verify(records[a], records[b], config) for a, b in zip(i, j)]``, with the sketch similarity
    and Hamming distance of all fingerprinted pairs computed as array operations, so checking hundreds
    of candidates of a lookup or millions of pairs of a batch does not loop in Python per pair.
    Pairs that need the exact hash or the metadata score go through :func:`verify` itself."""
    out: list[Match | None] = [None] * np.asarray(i).size
    for k, match in zip(*accepted_pairs(records, i, j, config), strict=True):
        out[k] = match
    return out


def accepted_pairs(
    records: Sequence[Comparable], i: npt.ArrayLike, j: npt.ArrayLike, config: VerifyConfig
) -> tuple[list[int], list[Match]]:
    """The positions in ``i``/``j`` of the pairs :func:`verify` accepts, ascending, and their matches (what
    :func:`verify_pairs` computes, without a list entry per refused pair: a batch refuses most of its
    millions of candidates)."""
    left = np.asarray(i, dtype=np.int64)
    right = np.asarray(j, dtype=np.int64)
    if left.size == 0:
        return [], []
    found: dict[int, Match] = {}
    # a record the array path can compare: fingerprinted, sketched, and no metadata score to combine
    fast = np.fromiter((r.status == "ok" for r in records), dtype=bool, count=len(records)) & config.use_sketch
    if config.mu < 1.0:
        fast &= np.fromiter((r.meta is None for r in records), dtype=bool, count=len(records))
    # the array path's inputs, once: every record it can compare, and the bound's bitmaps of the left ends only
    # (a lookup builds one, for its own document)
    rows = np.flatnonzero(fast)
    row = np.zeros(len(records), dtype=np.int64)
    row[rows] = np.arange(rows.size)
    sketches, lengths = pack_sketches([records[int(u)].sketch for u in rows])
    fps = np.fromiter((records[int(u)].fingerprint for u in rows), dtype=np.uint64, count=rows.size)
    on_left = np.zeros(len(records), dtype=bool)
    on_left[left] = True
    lefts = row[np.flatnonzero(on_left & fast)]
    bitmap_of = np.zeros(rows.size, dtype=np.int64)
    bitmap_of[lefts] = np.arange(lefts.size)
    bitmaps = sketch_bitmaps(sketches, lengths, lefts)
    # every acceptance needs at least the lower threshold; a pair whose bound is below it needs no estimate
    least = min(config.min_jaccard, config.near_jaccard)
    # by chunks of pairs: a batch verifies tens of millions of them, and an array per pair would double what the
    # pairs themselves take
    for start in range(0, left.size, _CHUNK):
        i_part, j_part = left[start : start + _CHUNK], right[start : start + _CHUNK]
        plain = fast[i_part] & fast[j_part]
        for k in np.flatnonzero(~plain).tolist():
            match = verify(records[int(i_part[k])], records[int(j_part[k])], config)
            if match is not None:
                found[start + k] = match
        part = start + np.flatnonzero(plain)
        a, b = row[i_part[plain]], row[j_part[plain]]
        if least > 0:
            live = jaccard_bounds(bitmaps[bitmap_of[a]], lengths[a], sketches[b], lengths[b]) >= least
            part, a, b = part[live], a[live], b[live]
        similarity = jaccard_rows(sketches[a], lengths[a], sketches[b], lengths[b])
        distance = np.bitwise_count(fps[a] ^ fps[b])
        accept = (similarity >= config.min_jaccard) | (
            (distance <= config.max_distance) & (similarity >= config.near_jaccard)
        )
        for k in np.flatnonzero(accept).tolist():
            found[int(part[k])] = Match(int(distance[k]), float(similarity[k]))
    positions = sorted(found)
    return positions, [found[k] for k in positions]


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

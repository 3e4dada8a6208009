"""Offline batch clustering: block grouping by sort → verification → assignment without chaining.

The same algorithm serves ``neardup cluster`` (a file), ``neardup dedupe`` (an existing index) and
``neardup reconcile`` (stored fingerprints), so all three give the clusters a sequential ingest gives.

1. **Candidates**: for every seed and each of the 4 blocks, sort the 16-bit block values and pair
   documents with equal values. An oversized bucket (more than ``max_bucket`` members) is split again
   by 12-bit sub-blocks of the other 48 bits. Within a bucket a document is paired with at most
   ``window`` earlier members (the nearest before it), and of all its pairs it keeps the
   ``max_candidates`` sharing the most (seed, block) tokens, as the lookup in Elasticsearch ranks
   them; so the work grows linearly with the number of documents even when thousands of them are
   alike (boilerplate, a flood of copies).
2. **Verify**: each candidate pair is checked (Hamming only, or Hamming + shingle sketch).
3. **Assign** in document order, as ingest does (:func:`choose`, the one assignment rule): a document
   joins the cluster of its nearest verified earlier match, provided it is still close to that
   cluster's first document (the canonical; the drift guard); otherwise the next-nearest match is
   tried, and with none it starts its own cluster. Links are verified pairs only, and the guard stops
   chains from drifting away from the canonical.

Ingest-time flagging (``neardup.es.indexing``) calls the same :func:`record_candidate_pairs`,
:func:`verified_pairs` and :func:`choose`; it only supplies candidates from Elasticsearch and the
assignments stored there.

>>> fps = np.array([0b1111, 0b1110, 1 << 63, 0b1111], dtype=np.uint64)
>>> a = cluster_fingerprints(fps, max_distance=1)
>>> a.cluster.tolist(), a.duplicate_of.tolist(), a.distance.tolist()
([0, 0, 2, 0], [-1, 0, -1, 0], [0, 1, 0, 0])
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from .bits import BLOCK_BITS, BLOCKS, SUB_BITS, SUB_BLOCKS, hamming, split_blocks, sub_blocks
from .pairs import top_pairs
from .verify import Comparable, Match, VerifyConfig, accepted_pairs, close_to_canonical

__all__ = [
    "DEFAULT_MIN_SHARED",
    "Assignment",
    "Option",
    "assign",
    "candidate_pairs",
    "choose",
    "cluster_fingerprints",
    "cluster_records",
    "exact_candidate_pairs",
    "iter_candidate_pairs",
    "match_rank",
    "preference",
    "record_candidate_pairs",
    "unique_pairs",
    "verified_pairs",
]

I64 = npt.NDArray[np.int64]
#: the most members a (seed, block) bucket is paired whole in; a larger one is split by sub-blocks. Chance
#: alone puts n / 65,536 documents in a bucket (15 at a million, 153 at ten million); paired whole, each of
#: ten million documents would pair with 64 others in each of the 64 tables, 4·10^10 pairs in all
DEFAULT_MAX_BUCKET = 64
#: how many earlier members of one bucket a document is paired with
DEFAULT_WINDOW = 64
#: how many candidates a document keeps (those sharing the most block tokens)
DEFAULT_MAX_CANDIDATES = 64
#: how many (seed, block) tokens a candidate pair must share
DEFAULT_MIN_SHARED = 1
K = TypeVar("K", bound=Hashable)
#: the records a clustering compares, and what its ``seeds_of`` is given
R = TypeVar("R", bound=Comparable)


@dataclass(frozen=True)
class Assignment:
    """Per document (by position): cluster = position of its canonical document; duplicate_of =
    position of its nearest verified match (−1 for canonicals); distance and similarity to it."""

    cluster: I64
    duplicate_of: I64
    distance: npt.NDArray[np.int16]
    similarity: npt.NDArray[np.float32]


def _pairs_in_runs(positions: I64, sorted_keys: npt.NDArray[np.uint64], window: int | None = None) -> tuple[I64, I64]:
    """All pairs of ``positions`` whose (already sorted) keys are equal; with ``window``, each position
    only with the ``window`` positions before it in its run."""
    out_a: list[I64] = []
    out_b: list[I64] = []
    d = 1
    while d < sorted_keys.size and (window is None or d <= window):
        idx = np.flatnonzero(sorted_keys[d:] == sorted_keys[:-d])
        if idx.size == 0:
            break
        out_a.append(positions[idx])
        out_b.append(positions[idx + d])
        d += 1
    if not out_a:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(out_a), np.concatenate(out_b)


def _bucket_pairs(
    keys: npt.NDArray[np.uint64], members: I64, rest: npt.NDArray[np.uint64], max_bucket: int, window: int
) -> tuple[I64, I64]:
    """Pairs among ``members`` (ascending) with equal ``keys``, each member with at most ``window`` earlier
    ones. A bucket over ``max_bucket`` is split by the 12-bit sub-blocks of ``rest`` (the other 48 bits):
    its pairs need an equal sub-block too."""
    if members.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    # (key, position) packed in one word and sorted: the order of a stable sort by key, and the keys in
    # that order, without gathering them (at ten million documents a random gather costs about a sort)
    bits = np.uint64(max(1, int(members[-1]).bit_length()))
    packed = np.sort((keys[members] << bits) | members.astype(np.uint64))
    order = (packed & ((np.uint64(1) << bits) - np.uint64(1))).astype(np.int64)
    k = packed >> bits
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    sizes = np.diff(np.r_[starts, k.size])
    big = np.repeat(sizes > max_bucket, sizes)
    everything = bool(big.all())  # at ten million documents: no mask, no copy
    outs = [] if everything else [_pairs_in_runs(order[~big], k[~big], window)]
    if big.any():
        big_order, big_keys = (order, k) if everything else (order[big], k[big])
        big_keys = big_keys << np.uint64(SUB_BITS)
        big_rest = rest[big_order]
        for j in range(SUB_BLOCKS):
            combined = big_keys | sub_blocks(big_rest, j)
            o = np.argsort(combined, kind="stable")
            outs.append(_pairs_in_runs(big_order[o], combined[o], window))
    return np.concatenate([p[0] for p in outs]), np.concatenate([p[1] for p in outs])


def iter_candidate_pairs(
    fingerprints: npt.NDArray[np.uint64],
    valid: npt.NDArray[np.bool_] | None = None,
    max_bucket: int = DEFAULT_MAX_BUCKET,
    window: int = DEFAULT_WINDOW,
) -> Iterator[tuple[I64, I64]]:
    """Candidate pairs of rows of ``fingerprints`` (shape (n, seeds), uint64) sharing a block under the
    same seed, one (seed, block) table at a time and not deduplicated across tables, so a caller can
    filter each chunk before keeping it. Rows where ``valid`` is False take no part."""
    fps = fingerprints.reshape(fingerprints.shape[0], -1)
    members = np.arange(fps.shape[0], dtype=np.int64) if valid is None else np.flatnonzero(valid).astype(np.int64)
    for s in range(fps.shape[1]):
        col = fps[:, s]
        for blk in range(BLOCKS):
            keys, rest = split_blocks(col, blk)
            yield _bucket_pairs(keys, members, rest, max_bucket, window)


def unique_pairs(a: I64, b: I64, n: int) -> tuple[I64, I64]:
    """Pairs as (low, high) positions, each once.

    >>> [x.tolist() for x in unique_pairs(np.array([2, 0, 1]), np.array([0, 2, 3]), 4)]
    [[0, 1], [2, 3]]
    """
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    packed = np.sort(lo * np.int64(n) + hi)
    packed = packed[np.r_[True, packed[1:] != packed[:-1]]] if packed.size else packed
    return packed // n, packed % n


def candidate_pairs(
    fingerprints: npt.NDArray[np.uint64],
    valid: npt.NDArray[np.bool_] | None = None,
    max_bucket: int = DEFAULT_MAX_BUCKET,
    window: int = DEFAULT_WINDOW,
    max_candidates: int = DEFAULT_MAX_CANDIDATES,
    min_shared: int = DEFAULT_MIN_SHARED,
) -> tuple[I64, I64]:
    """Unique candidate pairs (i < j) of :func:`iter_candidate_pairs` sharing at least ``min_shared``
    tables; each later document ``j`` keeps the ``max_candidates`` earlier ones sharing the most tables
    (ties: the nearer one), sorted by (i, j). Memory stays bounded (:func:`~neardup.ingest.pairs.top_pairs`)."""
    tables = fingerprints.reshape(fingerprints.shape[0], -1).shape[1] * BLOCKS
    return top_pairs(
        iter_candidate_pairs(fingerprints, valid, max_bucket, window),
        fingerprints.shape[0],
        max_candidates,
        min_shared,
        max_pairs_per_doc=tables * 4 * window,  # an oversized bucket pairs by 4 sub-block tables
    )


@dataclass(frozen=True)
class Option(Generic[K]):
    """A verified match of the document being assigned with an earlier document ``target``, whose
    cluster's canonical is ``cluster``; ``order`` is the target's place in document order."""

    target: K
    cluster: K
    match: Match
    order: Any


def match_rank(match: Match, order: Any) -> tuple[float, int, Any]:
    """The ranking of verified matches, as a sort key: higher similarity, then smaller Hamming distance,
    then the earlier document (``order``, its place in document order).

    >>> sorted([(Match(2, 0.9), 1), (Match(1, 0.9), 2), (Match(0, 1.0), 3)], key=lambda m: match_rank(*m))[0][1]
    3
    """
    return (-match.similarity, match.distance, order)


def preference(option: Option[Any]) -> tuple[float, int, Any]:
    """:func:`match_rank` of an option."""
    return match_rank(option.match, option.order)


def choose(
    options: Iterable[Option[K]], may_join: Callable[[Option[K]], bool], own: K | None = None, before: Any = None
) -> Option[K] | None:
    """The assignment rule: the most preferred option whose cluster the document may join, or None
    (the document starts its own cluster). A target that is its own cluster's canonical is always
    joinable; otherwise ``may_join`` is the drift guard against the cluster's canonical. The document
    joins the target's cluster, never the target itself, so clusters do not chain.

    ``own`` is the document's own key where it may name a cluster already: a document written again. When it
    matches a member of the cluster it names, it stays that cluster's canonical (None), where joining the cluster
    as a duplicate of its own member would leave the cluster named by a duplicate, and the two naming each other;
    so it does even when a match in another cluster is preferred: joining that one would leave its members in a
    cluster named by a duplicate all the same. Two such clusters are one for ``reconcile`` to join.

    ``before`` is the document's own place in document order where options may come after it (ingest offers every
    match it finds: a document written again keeps its place, and another process's clock may run ahead): only an
    earlier target is taken, as the offline clustering offers only those; a later one still counts for ``own``.

    >>> m = Match(1, 0.9)
    >>> choose([Option("b", "a", Match(2, 0.9), 1), Option("c", "c", m, 2)], lambda o: False).target
    'c'
    >>> choose([Option("b", "a", m, 1)], lambda o: False) is None
    True
    >>> choose([Option("b", "a", m, 1), Option("c", "c", Match(1, 0.5), 2)], lambda o: True, own="a") is None
    True
    >>> choose([Option("b", "a", m, 3), Option("c", "c", Match(1, 0.5), 1)], lambda o: True, before=2).target
    'c'
    """
    options = list(options)
    if own is not None and any(option.cluster == own for option in options):
        return None
    if before is not None:
        options = [option for option in options if option.order < before]
    for option in sorted(options, key=preference):
        if option.cluster == option.target or may_join(option):
            return option
    return None


def assign(
    n: int,
    i: I64,
    j: I64,
    distance: npt.ArrayLike,
    similarity: npt.ArrayLike,
    guard: Callable[[int, int], bool] | None = None,
) -> Assignment:
    """Sequential assignment from verified pairs (i < j) by :func:`choose`, in document order.

    ``guard(doc, canonical)`` says whether ``doc`` may join the cluster whose canonical is given;
    None accepts the nearest match always.
    """
    cluster = np.arange(n, dtype=np.int64)
    duplicate_of = np.full(n, -1, dtype=np.int64)
    dist_out = np.zeros(n, dtype=np.int16)
    sim_out = np.zeros(n, dtype=np.float32)
    if len(i) == 0:
        return Assignment(cluster, duplicate_of, dist_out, sim_out)
    dist = np.asarray(distance, dtype=np.int16)
    sim = np.asarray(similarity, dtype=np.float32)
    order = np.argsort(j, kind="stable")
    i, j, dist, sim = i[order].tolist(), j[order], dist[order].tolist(), sim[order].tolist()
    starts = np.flatnonzero(np.r_[True, j[1:] != j[:-1]])
    ends = np.r_[starts[1:], j.size]
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        doc = int(j[s])
        options = (Option(i[k], int(cluster[i[k]]), Match(dist[k], sim[k]), i[k]) for k in range(s, e))

        def may_join(option: Option[int], doc: int = doc) -> bool:
            return guard is None or guard(doc, option.cluster)

        chosen = choose(options, may_join)
        if chosen is not None:
            cluster[doc] = chosen.cluster
            duplicate_of[doc] = chosen.target
            dist_out[doc] = chosen.match.distance
            sim_out[doc] = chosen.match.similarity
    return Assignment(cluster, duplicate_of, dist_out, sim_out)


def exact_candidate_pairs(fingerprints: npt.NDArray[np.uint64]) -> Iterator[tuple[I64, I64]]:
    """Candidate pairs for Hamming distance <= 3 with no false negatives and few false positives:
    16 tables keyed by one 16-bit block plus one 12-bit sub-block of the other 48 bits (with one
    block equal and <= 3 differences left, one of its 4 sub-blocks is equal too). Each table is one
    ``np.sort`` of ``key << idx_bits | position``; pairs come from runs of equal keys.

    >>> fps = np.array([0x1234_5678_9ABC_DEF0, 0x1234_5678_9ABC_DEF7, 0xEDCB_A987_6543_210F], dtype=np.uint64)
    >>> sorted({(int(a), int(b)) for x, y in exact_candidate_pairs(fps) for a, b in zip(x, y)})
    [(0, 1)]
    """
    fps = np.ascontiguousarray(fingerprints, dtype=np.uint64).reshape(-1)
    n = fps.size
    idx_bits = max(1, (n - 1).bit_length())
    if idx_bits + BLOCK_BITS + SUB_BITS > 64:
        raise ValueError(f"too many fingerprints for one batch: {n}")
    positions = np.arange(n, dtype=np.uint64)
    idx_mask = np.uint64((1 << idx_bits) - 1)
    for blk in range(BLOCKS):
        block, rest = split_blocks(fps, blk)
        for sub in range(SUB_BLOCKS):
            sub_val = sub_blocks(rest, sub)
            packed = np.sort((((block << np.uint64(SUB_BITS)) | sub_val) << np.uint64(idx_bits)) | positions)
            yield _pairs_in_runs((packed & idx_mask).astype(np.int64), packed >> np.uint64(idx_bits))


def cluster_fingerprints(
    fingerprints: npt.NDArray[np.uint64],
    max_distance: int = 3,
    max_bucket: int = DEFAULT_MAX_BUCKET,
) -> Assignment:
    """Cluster bare 64-bit fingerprints: candidates by blocks (and sub-blocks, which are exact for
    ``max_distance`` <= 3), verified by Hamming distance alone; a member stays within
    ``2 * max_distance`` bits of its canonical. Beyond 3 bits the 4 blocks no longer guarantee recall."""
    fps = np.ascontiguousarray(fingerprints, dtype=np.uint64).reshape(-1)
    tables = (
        exact_candidate_pairs(fps)
        if max_distance <= 3
        else iter_candidate_pairs(fps.reshape(-1, 1), max_bucket=max_bucket)
    )
    kept_a: list[I64] = [np.zeros(0, np.int64)]
    kept_b: list[I64] = [np.zeros(0, np.int64)]
    for a, b in tables:
        close = np.bitwise_count(fps[a] ^ fps[b]) <= max_distance  # verify before deduplicating
        kept_a.append(a[close])
        kept_b.append(b[close])
    i, j = unique_pairs(np.concatenate(kept_a), np.concatenate(kept_b), fps.size)
    dist = np.bitwise_count(fps[i] ^ fps[j]).astype(np.int16)

    def near_canonical(doc: int, canonical: int) -> bool:
        return hamming(int(fps[doc]), int(fps[canonical])) <= 2 * max_distance

    return assign(fps.size, i, j, dist, 1.0 - dist / 64.0, guard=near_canonical)


def record_candidate_pairs(
    records: Sequence[R],
    seeds_of: Callable[[R], Sequence[int]],
    max_bucket: int = DEFAULT_MAX_BUCKET,
    min_shared: int = DEFAULT_MIN_SHARED,
) -> tuple[I64, I64]:
    """The candidate rule over records, as unique pairs (i < j), sorted: records of status ``ok`` sharing
    ``min_shared`` (seed, block) tokens; and records of the same status with the same exact hash, each paired with
    the first of them. For too-short records that is their only rule; for ``ok`` ones it finds the copies whose
    content characters are the same but whose fingerprints moved apart: a title given to one copy only, or another
    title (its words weigh more), or a text spaced out character by character (its words cut otherwise), can move
    the fingerprint by a dozen bits or more, past every block."""
    n = len(records)
    valid = np.fromiter((r.status == "ok" for r in records), dtype=bool, count=n)
    empty = np.zeros(0, np.int64)
    ci, cj = empty, empty
    if valid.sum() > 1:
        width = max(len(seeds_of(r)) for r in records if r.status == "ok")
        fps = np.zeros((n, width), dtype=np.uint64)
        for row, r in enumerate(records):
            if r.status == "ok":
                seeds = seeds_of(r)
                fps[row, : len(seeds)] = seeds
        shared = max(1, min(min_shared, BLOCKS * width))
        ci, cj = candidate_pairs(fps, valid, max_bucket, min_shared=shared)
    first_exact: dict[tuple[str, str], int] = {}
    extra_i: list[int] = []
    extra_j: list[int] = []
    for row, r in enumerate(records):
        if r.status in ("ok", "too_short") and r.exact:  # a stored document read without it has ""
            first = first_exact.setdefault((r.status, r.exact), row)
            if first != row:
                extra_i.append(first)
                extra_j.append(row)
    if not extra_i:
        return ci, cj
    return unique_pairs(
        np.concatenate([ci, np.asarray(extra_i, dtype=np.int64)]),
        np.concatenate([cj, np.asarray(extra_j, dtype=np.int64)]),
        n,
    )


def verified_pairs(
    records: Sequence[R],
    seeds_of: Callable[[R], Sequence[int]],
    config: VerifyConfig,
    max_bucket: int = DEFAULT_MAX_BUCKET,
    min_shared: int = DEFAULT_MIN_SHARED,
) -> tuple[list[int], list[int], list[Match]]:
    """The candidate pairs (i < j) of :func:`record_candidate_pairs` that
    :func:`~neardup.ingest.verify.verify` accepts, with their matches."""
    ci, cj = record_candidate_pairs(records, seeds_of, max_bucket, min_shared)
    positions, matches = accepted_pairs(records, ci, cj, config)
    kept = np.asarray(positions, dtype=np.int64)
    return ci[kept].tolist(), cj[kept].tolist(), matches


def cluster_records(
    records: Sequence[R],
    seeds_of: Callable[[R], Sequence[int]],
    config: VerifyConfig,
    max_bucket: int = DEFAULT_MAX_BUCKET,
    guard: bool = True,
    min_shared: int = DEFAULT_MIN_SHARED,
) -> Assignment:
    """Cluster fingerprint records: :func:`verified_pairs`, then :func:`assign` with the drift guard
    :func:`~neardup.ingest.verify.close_to_canonical`."""
    keep_i, keep_j, matches = verified_pairs(records, seeds_of, config, max_bucket, min_shared)

    def near_canonical(doc: int, canonical: int) -> bool:
        return close_to_canonical(records[doc], records[canonical], config)

    return assign(
        len(records),
        np.asarray(keep_i, np.int64),
        np.asarray(keep_j, np.int64),
        [m.distance for m in matches],
        [m.similarity for m in matches],
        near_canonical if guard else None,
    )

"""Offline clustering (:mod:`neardup.ingest.cluster`): candidate pairs and planted near-duplicates."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.evaluation.corpus import load_peoples_daily
from neardup.ingest import bits
from neardup.ingest.cluster import (
    Option,
    candidate_pairs,
    choose,
    cluster_fingerprints,
    cluster_records,
    exact_candidate_pairs,
    record_candidate_pairs,
    verified_pairs,
)
from neardup.ingest.fingerprint import Fingerprinter
from neardup.ingest.verify import Match, VerifyConfig

u64 = st.integers(min_value=0, max_value=2**64 - 1)


def test_a_bucket_of_more_than_64_is_split_so_ten_million_documents_stay_tractable() -> None:
    # documents sharing their first block, random elsewhere: 64 of them are paired whole (each with every earlier
    # one); a 65th splits the bucket, and of its pairs only those sharing a 12-bit sub-block of the other 48 bits
    # stay. Chance alone puts 153 documents in a bucket at ten million: paired whole, 64 tables × 64 pairs each.
    rng = np.random.default_rng(5)
    fps = [0xABCD << 48 | int(r) for r in rng.integers(0, 2**48, size=65, dtype=np.uint64)]

    def part(x: int, shift: int, mask: int) -> int:
        return (x >> shift) & mask

    pairs = [(a, b) for b in range(65) for a in range(b)]
    elsewhere = {
        (a, b) for a, b in pairs if any(part(fps[a], s, 0xFFFF) == part(fps[b], s, 0xFFFF) for s in (0, 16, 32))
    }
    sub_block = {
        (a, b) for a, b in pairs if any(part(fps[a], s, 0xFFF) == part(fps[b], s, 0xFFF) for s in (0, 12, 24, 36))
    }
    whole_i, _ = candidate_pairs(np.array(fps[:64], dtype=np.uint64).reshape(-1, 1))
    split_i, split_j = candidate_pairs(np.array(fps, dtype=np.uint64).reshape(-1, 1))
    assert whole_i.size == 64 * 63 // 2
    assert set(zip(split_i.tolist(), split_j.tolist(), strict=True)) == sub_block | elsewhere
    assert len(sub_block | elsewhere) < 20


@settings(max_examples=25, deadline=None)
@given(st.lists(u64, min_size=2, max_size=40), st.data())
def test_candidate_pairs_contain_every_pair_within_three_bits(values: list[int], data: st.DataObject) -> None:
    # plant a neighbour of the first value
    flips = data.draw(st.lists(st.integers(0, 63), max_size=3, unique=True))
    planted = values[0]
    for f in flips:
        planted ^= 1 << f
    fps = np.array([*values, planted], dtype=np.uint64)
    i, j = candidate_pairs(fps.reshape(-1, 1), max_bucket=2)  # tiny buckets: sub-blocks must still find them
    pairs = set(zip(i.tolist(), j.tolist(), strict=True))
    exact = {
        (min(a, b), max(a, b))
        for x, y in exact_candidate_pairs(fps)
        for a, b in zip(x.tolist(), y.tolist(), strict=True)
    }
    n = fps.size
    for a in range(n):
        for b in range(a + 1, n):
            if bits.hamming(int(fps[a]), int(fps[b])) <= 3:
                assert (a, b) in pairs
                assert (a, b) in exact


def test_cluster_finds_all_planted_near_duplicates() -> None:
    rng = np.random.default_rng(3)
    base = rng.integers(0, 2**63, size=2000, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    planted = base[:200].copy()
    for k in range(200):
        for f in rng.choice(64, size=int(rng.integers(0, 4)), replace=False):
            planted[k] ^= np.uint64(1) << np.uint64(int(f))
    fps = np.concatenate([base, planted])
    a = cluster_fingerprints(fps, max_distance=3)
    for k in range(200):
        assert a.cluster[2000 + k] == a.cluster[k]
    assert len(set(a.cluster.tolist())) == 2000


def _opt(target: str, cluster: str, similarity: float, distance: int, order: int) -> Option[str]:
    return Option(target, cluster, Match(distance, similarity), order)


def test_choose_prefers_similarity_then_distance_then_the_earlier_document() -> None:
    options = [
        _opt("late", "late", 0.8, 1, 9),
        _opt("close", "close", 0.8, 0, 5),
        _opt("early", "early", 0.8, 0, 2),
        _opt("similar", "similar", 0.9, 7, 7),
    ]
    assert [o.target for o in sorted(options, key=lambda o: (-o.match.similarity, o.match.distance, o.order))] == [
        "similar",
        "early",
        "close",
        "late",
    ]
    chosen = choose(options, lambda o: True)
    assert chosen is not None and chosen.target == "similar"
    chosen = choose(options[:3], lambda o: True)
    assert chosen is not None and chosen.target == "early"


def test_the_drift_guard_falls_through_to_the_next_match_and_never_chains() -> None:
    # the best match is a member of cluster "c" whose canonical the document no longer resembles
    member = _opt("m", "c", 0.95, 0, 1)
    other = _opt("x", "x", 0.5, 3, 2)
    asked: list[str] = []

    def guard(o: Option[str]) -> bool:
        asked.append(o.cluster)
        return False

    chosen = choose([member, other], guard)
    assert chosen is other and asked == ["c"]  # a canonical target is never asked about
    assert choose([member], guard) is None  # no joinable match: a cluster of its own
    joined = choose([member], lambda o: True)
    assert joined is not None and joined.cluster == "c"  # joins the cluster, not the member's own id


def test_too_short_records_pair_only_by_their_exact_hash() -> None:
    fp = Fingerprinter.default()
    records = [fp.fingerprint(t) for t in ["好", "好", "不好", "好"]]
    assert {r.status for r in records} == {"too_short"}
    i, j = record_candidate_pairs(records, lambda r: r.fingerprints)
    assert sorted(zip(i.tolist(), j.tolist(), strict=True)) == [(0, 1), (0, 3)]


def test_texts_without_letters_or_digits_are_each_a_cluster_of_their_own() -> None:
    """Title-only items, captions and punctuation share the exact hash of nothing: none pairs with another."""
    fp = Fingerprinter.default()
    records = fp.fingerprint_many(
        [("", "国务院常务会议"), ("", "图片"), ("……", None), ("", "图片"), ("好", None), ("好", None)]
    )
    assert [r.status for r in records] == ["empty"] * 4 + ["too_short"] * 2
    i, j = record_candidate_pairs(records, lambda r: r.fingerprints)
    assert list(zip(i.tolist(), j.tolist(), strict=True)) == [(4, 5)]
    assert cluster_records(records, lambda r: r.fingerprints, VerifyConfig()).cluster.tolist() == [0, 1, 2, 3, 4, 4]


def test_a_too_short_body_is_matched_with_its_title() -> None:
    """The same short body under another title is another item (two photos, two notices); under the same title, or
    with no title on either, a copy."""
    fp = Fingerprinter.default()
    docs = [
        ("图片", "北京暴雨"),
        ("（图片）", "上海台风"),
        ("图片。", "北京暴雨"),
        ("图片", None),
        ("图片", ""),
        ("图片", "　"),
    ]
    records = fp.fingerprint_many(docs)
    assert {r.status for r in records} == {"too_short"}
    assignment = cluster_records(records, lambda r: r.fingerprints, VerifyConfig())
    assert assignment.cluster.tolist() == [0, 1, 0, 3, 3, 3]


def test_copies_of_one_text_cluster_whatever_their_titles_or_spacing() -> None:
    """A title on one copy only, another title, or the text spaced out character by character moves the fingerprint
    past every block of many articles; the copies have the same content characters, and pair by that exact hash."""
    fp = Fingerprinter.default()
    articles = [a for a in load_peoples_daily()[:60] if a.title]
    copies: list[tuple[str, str | None]] = []
    for a in articles:
        copies += [(a.text, a.title), (a.text, None), (a.text, "编者按：" + a.title[::-1]), (" ".join(a.text), None)]
    records = fp.fingerprint_many(copies)
    # what the blocks alone miss: copies sharing no (seed, block) token with the first
    tokens = [{t for block in r.block_tokens() for t in block} for r in records]
    apart = sum(not tokens[k] & tokens[k - k % 4] for k in range(len(records)) if k % 4)
    assert apart > 10
    assignment = cluster_records(records, lambda r: r.fingerprints, VerifyConfig())
    groups = assignment.cluster.reshape(len(articles), 4)
    assert (groups == groups[:, :1]).all(), groups[(groups != groups[:, :1]).any(axis=1)][:5]
    assert len(set(assignment.cluster.tolist())) == len(articles)
    print(f"{len(articles)} articles, 4 copies each: {apart} copies shared no block with the first, all clustered")


def test_verified_pairs_are_the_candidates_verify_accepts_and_cluster_records_assigns_them() -> None:
    fp = Fingerprinter.default()
    articles = load_peoples_daily()[:30]
    texts = [a.text for a in articles] + ["来源：新华社\n" + articles[3].text, articles[7].text + "（完）"]
    records = fp.fingerprint_many([(t, None) for t in texts])
    i, j, matches = verified_pairs(records, lambda r: r.fingerprints, VerifyConfig())
    assert (3, 30) in zip(i, j, strict=True) and (7, 31) in zip(i, j, strict=True)
    assert all(a < b for a, b in zip(i, j, strict=True))
    assignment = cluster_records(records, lambda r: r.fingerprints, VerifyConfig())
    assert assignment.cluster[30] == 3 and assignment.cluster[31] == 7
    assert assignment.duplicate_of[30] == 3
    k = list(zip(i, j, strict=True)).index((3, 30))
    assert assignment.distance[30] == matches[k].distance
    assert np.isclose(assignment.similarity[30], matches[k].similarity)

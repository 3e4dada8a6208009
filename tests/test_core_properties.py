"""Property tests of the pure core (hypothesis)."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.ingest import bits
from neardup.ingest.cluster import candidate_pairs, cluster_fingerprints, exact_candidate_pairs
from neardup.ingest.fingerprint import Fingerprinter
from neardup.ingest.sketch import jaccard, shingle_sketch

u64 = st.integers(min_value=0, max_value=2**64 - 1)


@given(u64, u64)
def test_hamming_symmetric_and_bounded(a: int, b: int) -> None:
    d = bits.hamming(a, b)
    assert d == bits.hamming(b, a)
    assert 0 <= d <= 64
    assert (d == 0) == (a == b)
    assert bits.hamming(bits.to_signed(a), b) == d


@given(u64)
def test_blocks_reassemble_the_fingerprint(value: int) -> None:
    b0, b1, b2, b3 = bits.blocks(value)
    assert (b0 << 48) | (b1 << 32) | (b2 << 16) | b3 == value
    assert bits.to_unsigned(bits.to_signed(value)) == value
    assert int(bits.to_hex(value), 16) == value


@given(u64, st.lists(st.integers(0, 63), min_size=0, max_size=3, unique=True))
def test_pigeonhole_within_three_bits_shares_a_block_and_a_sub_block(value: int, flips: list[int]) -> None:
    other = value
    for f in flips:
        other ^= 1 << f
    shared = [i for i, (x, y) in enumerate(zip(bits.blocks(value), bits.blocks(other), strict=True)) if x == y]
    assert shared
    i = shared[0]
    assert any(x == y for x, y in zip(_sub_blocks(value, i), _sub_blocks(other, i), strict=True))


def _sub_blocks(value: int, block: int) -> list[int]:
    """The four 12-bit sub-blocks of the 48 bits outside ``block`` (what exact_candidate_pairs keys on)."""
    shift = 16 * (3 - block)
    rest = ((value >> (shift + 16)) << shift) | (value & ((1 << shift) - 1))
    return [(rest >> (12 * (3 - j))) & 0xFFF for j in range(4)]


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


def test_one_character_edit_of_a_long_text_moves_few_bits() -> None:
    fp = Fingerprinter.default()
    base = (
        "新华社北京电 国家统计局今天发布数据，今年前三季度国内生产总值同比增长百分之五点二，"
        "其中第三季度增长百分之四点九。消费对经济增长的贡献率继续提高，服务业保持较快增长，"
        "高技术制造业投资增长明显。专家认为，国民经济持续恢复向好，高质量发展扎实推进，"
        "但是外部环境依然复杂严峻，国内需求仍显不足，需要继续加大宏观政策调控力度。"
    ) * 3
    rng = random.Random(7)
    a = fp.fingerprint(base)
    worst = 0
    for _ in range(20):
        k = rng.randrange(len(base))
        edited = base[:k] + "的" + base[k + 1 :]
        worst = max(worst, bits.hamming(a.fingerprint, fp.fingerprint(edited).fingerprint))
    assert worst <= 6


@given(st.text(alphabet="天地玄黄宇宙洪荒日月盈昃辰宿列张", min_size=3, max_size=60))
def test_sketch_jaccard_is_one_on_itself(text: str) -> None:
    s = shingle_sketch(text)
    assert jaccard(s, s) == 1.0


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

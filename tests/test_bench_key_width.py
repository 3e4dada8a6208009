"""``bench.key_width``'s keyings: the shipped one is the product's block tokens, those it calls exact within 3 bits
are, and the chance matches count each key by its own width."""

from __future__ import annotations

import doctest

from hypothesis import given
from hypothesis import strategies as st

from bench import key_width, late_peers
from neardup.ingest.bits import block_fields

KEYINGS = {k.key: k for k in key_width.KEYINGS}

fingerprint = st.integers(min_value=0, max_value=2**64 - 1)
seeds = st.lists(fingerprint, min_size=16, max_size=16)


def _flip(value: int, bits: list[int]) -> int:
    for b in bits:
        value ^= 1 << b
    return value


@given(seeds, seeds)
def test_the_shipped_keying_meets_when_the_documents_share_a_block_token(a: list[int], b: list[int]) -> None:
    shared = any(set(x) & set(y) for x, y in zip(block_fields(a), block_fields(b), strict=True))
    assert KEYINGS["shipped"].meet(a, b) == shared


@given(seeds, st.lists(st.integers(0, 63), max_size=3), st.integers(0, 15))
def test_the_exact_keyings_meet_every_pair_within_3_bits(a: list[int], bits: list[int], seed: int) -> None:
    b = [x if k != seed else _flip(x, bits) for k, x in enumerate(a)]
    b = [x if k == seed else x ^ 0x5555_5555_5555_5555 for k, x in enumerate(b)]  # the other seeds all far apart
    for key in key_width.EXACT:
        assert KEYINGS[key].meet(a, b), key


def test_pairs_of_16_bit_blocks_miss_3_bits_in_3_blocks() -> None:
    a = [0] * 16
    b = [1 << 0 | 1 << 16 | 1 << 32] + [2**64 - 1] * 15
    assert KEYINGS["shipped"].meet(a, b)
    assert not KEYINGS["pairs"].meet(a, b)


def test_min_shared_2_counts_shared_tokens_across_seeds() -> None:
    one = [0x0123_4567_89AB_CDEF] + [0] * 15
    two = [0x0123_FFFF_FFFF_FFFF] + [0xFFFF_FFFF_FFFF_0000] + [2**64 - 1] * 14  # one token in seed 0, one in seed 1
    assert KEYINGS["min_shared_2"].meet(one, two)
    assert not KEYINGS["min_shared_2"].meet(one, [0x0123_FFFF_FFFF_FFFF] + [2**64 - 1] * 15)


def test_chance_matches_count_each_key_by_its_width() -> None:
    n = 2**26
    assert KEYINGS["shipped"].chance(n) == 16 * 4 * 2**10
    # five blocks of 13, 13, 13, 13, 12 bits: 6 pairs of 26 bits and 4 of 25
    assert KEYINGS["five"].chance(n) == 16 * (6 * 1 + 4 * 2)
    assert KEYINGS["five"].keys == 160
    # six blocks of 11 × 4 and 10 × 2: triples of 33 (4), 32 (12) and 31 bits (4)
    assert KEYINGS["six"].chance(2**33) == 16 * (4 * 1 + 12 * 2 + 4 * 4)


def test_the_doctests_of_key_width_and_late_peers() -> None:
    assert doctest.testmod(key_width).failed == 0
    assert doctest.testmod(late_peers).failed == 0

"""``bench.key_width``'s keyings: the shipped one is the product's block tokens, and those it calls exact within
3 bits are."""

from __future__ import annotations

import doctest

from hypothesis import given
from hypothesis import strategies as st

from bench import key_width, late_peers
from neardup.ingest.bits import block_fields

KEYINGS = {k.name: k for k in key_width.KEYINGS}
SHIPPED = key_width.KEYINGS[0]
EXACT = [k for k in key_width.KEYINGS if k.bits in (26, 33, 28)]

fingerprint = st.integers(min_value=0, max_value=2**64 - 1)
seeds = st.lists(fingerprint, min_size=16, max_size=16)


def _flip(value: int, bits: list[int]) -> int:
    for b in bits:
        value ^= 1 << b
    return value


@given(seeds, seeds)
def test_the_shipped_keying_meets_when_the_documents_share_a_block_token(a: list[int], b: list[int]) -> None:
    shared = any(set(x) & set(y) for x, y in zip(block_fields(a), block_fields(b), strict=True))
    assert SHIPPED.meet(a, b) == shared


@given(seeds, st.lists(st.integers(0, 63), max_size=3), st.integers(0, 15))
def test_the_exact_keyings_meet_every_pair_within_3_bits(a: list[int], bits: list[int], seed: int) -> None:
    b = [x if k != seed else _flip(x, bits) for k, x in enumerate(a)]
    b = [x if k == seed else x ^ 0x5555_5555_5555_5555 for k, x in enumerate(b)]  # the other seeds all far apart
    assert len(EXACT) == 3
    for keying in EXACT:
        assert keying.meet(a, b), keying.name


def test_pairs_of_16_bit_blocks_miss_3_bits_in_3_blocks() -> None:
    a = [0] * 16
    b = [1 << 0 | 1 << 16 | 1 << 32] + [2**64 - 1] * 15
    assert SHIPPED.meet(a, b)
    assert not KEYINGS["pairs of 16-bit blocks (32-bit keys)"].meet(a, b)


def test_chance_matches_are_keys_times_documents_over_the_key_space() -> None:
    assert SHIPPED.chance(65_536) == 64
    assert KEYINGS["pairs of 16-bit blocks (32-bit keys)"].chance(2**32) == 96


def test_the_doctests_of_key_width_and_late_peers() -> None:
    assert doctest.testmod(key_width).failed == 0
    assert doctest.testmod(late_peers).failed == 0

"""64-bit fingerprint arithmetic (:mod:`neardup.ingest.bits`): property tests."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from neardup.ingest import bits

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

"""64-bit fingerprint arithmetic: Hamming distance, blocks, sub-blocks, signed/unsigned, hex.

Elasticsearch ``long`` is signed, so fingerprints are stored as two's complement and converted
back here. Pigeonhole: two fingerprints within 3 bits agree on at least one of 4 blocks of 16 bits;
with one block equal and at most 3 differences in the other 48 bits, one of 4 sub-blocks of 12 bits
is equal too.

>>> hamming(0b1011, 0b0001)
2
>>> blocks(0x0123456789ABCDEF)
(291, 17767, 35243, 52719)
>>> [hex(b) for b in blocks(0x0123456789ABCDEF)]
['0x123', '0x4567', '0x89ab', '0xcdef']
>>> to_signed(0xFFFFFFFFFFFFFFFF), to_unsigned(-1)
(-1, 18446744073709551615)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = [
    "BLOCKS",
    "BLOCK_BITS",
    "SUB_BITS",
    "block_fields",
    "block_tokens",
    "blocks",
    "hamming",
    "splitmix64",
    "to_hex",
    "to_signed",
    "to_unsigned",
]

BLOCKS = 4
BLOCK_BITS = 16
SUB_BITS = 12
_MASK64 = (1 << 64) - 1


def hamming(a: int, b: int) -> int:
    """Number of differing bits of two 64-bit values (signed or unsigned)."""
    return ((a ^ b) & _MASK64).bit_count()


def splitmix64(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """The splitmix64 mixer, vectorised: a fixed, well-spread bijection of 64-bit values.

    >>> splitmix64(np.array([0, 1], dtype=np.uint64)).tolist()
    [16294208416658607535, 10451216379200822465]
    """
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def to_signed(value: int) -> int:
    value &= _MASK64
    return value - (1 << 64) if value >> 63 else value


def to_unsigned(value: int) -> int:
    return value & _MASK64


def to_hex(value: int) -> str:
    """Sixteen lowercase hex digits.

    >>> to_hex(-1)
    'ffffffffffffffff'
    """
    return f"{to_unsigned(value):016x}"


def blocks(value: int) -> tuple[int, int, int, int]:
    """The four 16-bit blocks, most significant first."""
    v = to_unsigned(value)
    return (v >> 48 & 0xFFFF, v >> 32 & 0xFFFF, v >> 16 & 0xFFFF, v & 0xFFFF)


def block_tokens(value: int, seed_index: int) -> list[str]:
    """Keyword values for fields b0..b3: the block in hex, prefixed by the fingerprint's seed index.

    >>> block_tokens(0x0123456789ABCDEF, 0)
    ['0:0123', '0:4567', '0:89ab', '0:cdef']
    """
    return [f"{seed_index}:{b:04x}" for b in blocks(value)]


def block_fields(fingerprints: Sequence[int]) -> list[list[str]]:
    """Values of fields b0..b3 for a document's fingerprints (seed i at index i): per block position,
    one token per seed.

    >>> block_fields([0x0123456789ABCDEF, 0])[1]
    ['0:4567', '1:0000']
    """
    # one hex string per fingerprint, sliced four ways: a third of the time of formatting each block (this
    # runs for every document written or looked up); the same tokens as :func:`block_tokens`
    hexes = [(f"{i}:", f"{v & _MASK64:016x}") for i, v in enumerate(fingerprints)]
    return [
        [seed + h[0:4] for seed, h in hexes],
        [seed + h[4:8] for seed, h in hexes],
        [seed + h[8:12] for seed, h in hexes],
        [seed + h[12:16] for seed, h in hexes],
    ]

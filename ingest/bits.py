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
    "SUB_BLOCKS",
    "block_fields",
    "blocks",
    "document_block_fields",
    "hamming",
    "split_blocks",
    "splitmix64",
    "sub_blocks",
    "to_hex",
    "to_signed",
    "to_unsigned",
]

#: blocks of a fingerprint, and their width in bits
BLOCKS = 4
BLOCK_BITS = 16
#: sub-blocks of the bits outside one block, and their width in bits
SUB_BLOCKS = 4
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


def split_blocks(
    fingerprints: npt.NDArray[np.uint64], block: int
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """Block ``block`` (0 the most significant) of each fingerprint, and the other 48 bits in their order,
    packed into the low bits: what :func:`sub_blocks` splits.

    >>> keys, rest = split_blocks(np.array([0x0123456789ABCDEF], dtype=np.uint64), 1)
    >>> hex(int(keys[0])), hex(int(rest[0]))
    ('0x4567', '0x12389abcdef')
    """
    shift = np.uint64(BLOCK_BITS * (BLOCKS - 1 - block))
    keys = (fingerprints >> shift) & np.uint64((1 << BLOCK_BITS) - 1)
    low = fingerprints & ((np.uint64(1) << shift) - np.uint64(1))
    # the most significant block has no bits above it
    rest = ((fingerprints >> (shift + np.uint64(BLOCK_BITS))) << shift) | low if block else low
    return keys, rest


def sub_blocks(rest: npt.NDArray[np.uint64], sub: int) -> npt.NDArray[np.uint64]:
    """Sub-block ``sub`` (0 the most significant) of the 48 bits ``rest`` (:func:`split_blocks`).

    >>> [hex(int(sub_blocks(np.array([0x0123_4567_89AB], dtype=np.uint64), j)[0])) for j in range(SUB_BLOCKS)]
    ['0x12', '0x345', '0x678', '0x9ab']
    """
    return (rest >> np.uint64(SUB_BITS * (SUB_BLOCKS - 1 - sub))) & np.uint64((1 << SUB_BITS) - 1)


def block_fields(fingerprints: Sequence[int]) -> list[list[str]]:
    """Values of fields b0..b3 for a document's fingerprints (seed i at index i): per block position,
    one token per seed, the block in hex prefixed by the fingerprint's seed index.

    >>> block_fields([0x0123456789ABCDEF, 0])
    [['0:0123', '1:0000'], ['0:4567', '1:0000'], ['0:89ab', '1:0000'], ['0:cdef', '1:0000']]
    """
    # one hex string per fingerprint, sliced four ways: a third of the time of formatting each block (this
    # runs for every document written or looked up)
    hexes = [(f"{i}:", f"{v & _MASK64:016x}") for i, v in enumerate(fingerprints)]
    return [
        [seed + h[0:4] for seed, h in hexes],
        [seed + h[4:8] for seed, h in hexes],
        [seed + h[8:12] for seed, h in hexes],
        [seed + h[12:16] for seed, h in hexes],
    ]


def document_block_fields(fingerprints: Sequence[int], fingerprinted: bool) -> list[list[str]]:
    """:func:`block_fields` of a document's fingerprints when it is ``fingerprinted`` (its status is ``ok``);
    otherwise (too short) no tokens, an empty list per block position.

    >>> document_block_fields([0x0123456789ABCDEF], False)
    [[], [], [], []]
    """
    return block_fields(fingerprints) if fingerprinted else [[] for _ in range(BLOCKS)]

"""Longer block keys against chance matches: what each keying of the 16 fingerprints would still find.

A lookup reads the postings of its 64 (seed, 16-bit block) tokens, and in an index of N documents about
N · 64 / 65,536 of them are chance matches, each a postings entry to read and a candidate to check: that is why
flagging slows as the index grows (``late_peers.md``). Longer keys meet almost no chance matches, but a pair of
near-duplicates must then agree on more bits of one fingerprint to meet at all. This bench counts, for pairs known
to be near-duplicates that the second check accepts (``verify``), how many each keying would still bring together,
with the keys it indexes per document and the chance matches it would meet per lookup at 1,000,000 documents
(the expectation for uniform fingerprints: N / 2^b for each key of b bits):

- 16-bit blocks, one shared token (shipped);
- 16-bit blocks, two shared tokens anywhere (``NEARDUP_MIN_SHARED=2``: it reads the same postings, and checks only
  the documents holding two);
- pairs of 16-bit blocks of one fingerprint (32-bit keys, 6 per seed);
- pairs of five 13/12-bit blocks (25- and 26-bit keys, 10 per seed: two of five blocks are equal whenever the
  fingerprints are within 3 bits);
- triples of six 11/10-bit blocks (31- to 33-bit keys, 20 per seed: three of six equal within 3 bits);
- a 16-bit block with one 12-bit quarter of the other 48 bits (28-bit keys, 16 per seed: the tables of
  ``neardup cluster``'s exact candidate stage, :func:`~neardup.ingest.cluster.exact_candidate_pairs`).

Pairs: ``lookup_latency_real.md``'s 500 reprint-style variants of real texts with their sources (the same draw), and
the bench corpus's last 50,000 documents with the earlier members of their generator group (a document counts as
found when one accepted earlier member shares a key).

    python -m bench.key_width
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from bench.corpus import GENERATOR, corpus_path, corpus_records, read_corpus
from bench.lookup_real import draw, texts
from bench.machine import RESULTS, describe, no_options, write_results
from neardup.ingest.bits import hamming, to_unsigned
from neardup.ingest.cluster import exact_candidate_pairs
from neardup.ingest.fingerprint import Record
from neardup.ingest.pool import FingerprintPool
from neardup.ingest.verify import VerifyConfig, verify

OUT = RESULTS / "key_width.md"
#: documents of the bench corpus; its last LATE are paired with the earlier members of their groups
CORPUS = 1_000_000
LATE = 50_000
#: the index size the chance matches are given for
AT = 1_000_000
#: fingerprints per document
SEEDS = 16


def split(value: int, widths: Sequence[int]) -> list[int]:
    """A 64-bit fingerprint cut into blocks of ``widths`` bits, most significant first.

    >>> [hex(b) for b in split(0x0123456789ABCDEF, (16, 16, 16, 16))]
    ['0x123', '0x4567', '0x89ab', '0xcdef']
    >>> split(-1, (13, 13, 13, 13, 12)) == [8191] * 4 + [4095]
    True
    """
    v = to_unsigned(value)
    out, shift = [], 64
    for w in widths:
        shift -= w
        out.append(v >> shift & (1 << w) - 1)
    return out


def equal_blocks(a: int, b: int, widths: Sequence[int]) -> int:
    """How many of the blocks of ``widths`` bits two fingerprints hold equal.

    >>> equal_blocks(0x0123456789ABCDEF, 0x0123456789ABCDEE, (16, 16, 16, 16))
    3
    """
    return sum(x == y for x, y in zip(split(a, widths), split(b, widths), strict=True))


def _block_and_quarter(a: int, b: int) -> bool:
    """One of the 16 tables of :func:`~neardup.ingest.cluster.exact_candidate_pairs` (a 16-bit block and a 12-bit
    quarter of the other 48 bits) pairs the two fingerprints.

    >>> _block_and_quarter(0x0123456789ABCDEF, 0x0123456789ABC000)
    True
    >>> _block_and_quarter(0x0123456789ABCDEF, 0x0123F00F00F00F00)
    False
    """
    fps = np.array([to_unsigned(a), to_unsigned(b)], dtype=np.uint64)
    return any(len(first) for first, _second in exact_candidate_pairs(fps))


Seeds = Sequence[int]


@dataclass(frozen=True)
class Keying:
    """A way to key the 16 fingerprints: ``key_bits`` the width of each key one fingerprint gives, ``meet`` whether
    two documents' fingerprints share a key."""

    key: str
    name: str
    key_bits: tuple[int, ...]
    meet: Callable[[Seeds, Seeds], bool]

    @property
    def keys(self) -> int:
        """Keys per document (16 fingerprints)."""
        return SEEDS * len(self.key_bits)

    def chance(self, n: int) -> float:
        """Chance matches a lookup meets among ``n`` documents of uniform fingerprints: each key of b bits meets
        n / 2^b.

        >>> KEYINGS[0].chance(65_536)
        64.0
        """
        return SEEDS * sum(n / 2**b for b in self.key_bits)


def _in_one_seed(widths: Sequence[int], least: int) -> Callable[[Seeds, Seeds], bool]:
    return lambda a, b: any(equal_blocks(x, y, widths) >= least for x, y in zip(a, b, strict=True))


def _combined(widths: Sequence[int], size: int) -> tuple[int, ...]:
    """The widths of the keys made of ``size`` of the blocks.

    >>> _combined((13, 13, 13, 13, 12), 2)
    (26, 26, 26, 25, 26, 26, 25, 26, 25, 25)
    """
    return tuple(sum(c) for c in combinations(widths, size))


FIVE = (13, 13, 13, 13, 12)
SIX = (11, 11, 11, 11, 10, 10)
KEYINGS = (
    Keying("shipped", "16-bit blocks, one shared token (shipped)", (16,) * 4, _in_one_seed((16,) * 4, 1)),
    Keying(
        "min_shared_2",
        "16-bit blocks, two shared tokens anywhere (min_shared 2)",
        (16,) * 4,
        lambda a, b: sum(equal_blocks(x, y, (16,) * 4) for x, y in zip(a, b, strict=True)) >= 2,
    ),
    Keying("pairs", "pairs of 16-bit blocks (32-bit keys)", _combined((16,) * 4, 2), _in_one_seed((16,) * 4, 2)),
    Keying("five", "pairs of five 13/12-bit blocks (25/26-bit keys)", _combined(FIVE, 2), _in_one_seed(FIVE, 2)),
    Keying("six", "triples of six 11/10-bit blocks (31–33-bit keys)", _combined(SIX, 3), _in_one_seed(SIX, 3)),
    Keying(
        "quarter",
        "a 16-bit block and a 12-bit quarter of the rest (28-bit keys)",
        (28,) * 16,
        lambda a, b: any(_block_and_quarter(x, y) for x, y in zip(a, b, strict=True)),
    ),
)
#: the keyings that pair every two fingerprints within 3 bits (pigeonhole)
EXACT = ("five", "six", "quarter")


def _tally(pairs: Sequence[tuple[Record, Sequence[Record]]]) -> tuple[int, int, int, int, dict[str, int]]:
    """(documents, those too short for fingerprints (matched by exact hash alone: no keying concerns them, and
    they count as without an accepted partner), those with an accepted partner, those with an accepted partner
    within 3 bits in some seed, per keying those with an accepted partner sharing a key)."""
    config = VerifyConfig()
    accepted = close = 0
    found: dict[str, int] = defaultdict(int)
    for doc, partners in pairs:
        matched = [p for p in partners if doc.status == p.status == "ok" and verify(doc, p, config) is not None]
        accepted += bool(matched)
        close += any(hamming(x, y) <= 3 for p in matched for x, y in zip(doc.fingerprints, p.fingerprints, strict=True))
        for keying in KEYINGS:
            found[keying.key] += any(keying.meet(doc.fingerprints, p.fingerprints) for p in matched)
    short = sum(doc.status != "ok" for doc, _partners in pairs)
    return len(pairs), short, accepted, close, found


def _real() -> list[tuple[Record, Sequence[Record]]]:
    indexed, spare, _ = texts()
    sources, variants, _others = draw(indexed, spare)
    with FingerprintPool(2) as pool:
        originals = pool.fingerprint([(indexed[s], None) for s in sources])
        varied = pool.fingerprint([(t, None) for t in variants])
    return [(v, [o]) for v, o in zip(varied, originals, strict=True)]


def _corpus() -> list[tuple[Record, Sequence[Record]]]:
    docs = read_corpus(corpus_path(CORPUS))
    records = corpus_records(docs)
    members: dict[str, list[int]] = defaultdict(list)
    for k, d in enumerate(docs):
        members[d.group].append(k)
    out: list[tuple[Record, Sequence[Record]]] = []
    for k in range(CORPUS - LATE, CORPUS):
        earlier = [records[j] for j in members[docs[k].group] if j < k]
        if earlier:
            out.append((records[k], earlier))
    return out


def main() -> None:
    no_options(__doc__)
    t0 = time.perf_counter()
    sets = {
        "variants of `lookup_latency_real.md` (500, each with its source)": _tally(_real()),
        f"the bench corpus's last {LATE:,} documents with an earlier member of their group (of {CORPUS:,}, "
        f"generator {GENERATOR})": _tally(_corpus()),
    }
    lines = [
        "# Longer block keys against chance matches: what each keying would still find",
        "",
        f"Machine: {describe()}",
        "Command: `python -m bench.key_width`",
        "",
        "Found: documents with a partner that the second check accepts and that shares a key with it. Chance "
        f"matches: N / 2^b for each key of b bits, at N = {AT:,} (uniform fingerprints). "
        f"Computed in {time.perf_counter() - t0:.0f}s, no Elasticsearch.",
    ]
    for title, (total, short, accepted, close, found) in sets.items():
        shipped = found[KEYINGS[0].key]
        lines += [
            "",
            f"## {title}",
            "",
            f"{total:,} documents ({short:,} too short for fingerprints, matched by exact hash alone), {accepted:,} "
            f"with a partner the second check accepts, {close:,} with one within 3 bits in some seed.",
            "",
            "| keying | keys per document | chance matches per lookup | found | × shipped |",
            "|---|---|---|---|---|",
        ]
        for keying in KEYINGS:
            lines.append(
                f"| {keying.name} | {keying.keys} | {keying.chance(AT):,.2f} | {found[keying.key]:,} "
                f"| {found[keying.key] / shipped:.3f} |"
            )
    lines += [
        "",
        "min_shared 2 still reads the postings of every chance match; it spares only their second check. The "
        "keyings exact within 3 bits find every pair that close, and miss some of those further apart, which the "
        "shipped keying meets by a shared 16-bit block.",
    ]
    write_results(OUT, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()

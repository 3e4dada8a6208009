"""The hashing stages of the Java port equal the Python core's: XXH3-64 over every length class of the
algorithm, the shingle sketch, and the exact-sum SimHash (including weights that tie and that quantise)."""

from __future__ import annotations

import random

import numpy as np
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.ingest import bits
from neardup.ingest.simhash import simhash
from neardup.ingest.sketch import encode_sketch, shingle_sketch
from neardup.node.plugin_build import PluginBuild

from .java import run_main

MAIN = "io.neardup.parity.HashParity"


def _texts(seed: int) -> list[str]:
    rng = random.Random(seed)
    alphabet = "abc新闻報道😀é\u0301\x00 ，"
    # every XXH3 length class: 0, 1-3, 4-8, 9-16, 17-128, 129-240, longer (several stripes and blocks)
    lengths = list(range(0, 260)) + [rng.randrange(260, 5000) for _ in range(200)]
    return ["".join(rng.choice(alphabet) for _ in range(n)) for n in lengths]


def test_xxh3_matches_python_xxhash(plugin: PluginBuild) -> None:
    texts = _texts(1)
    got = run_main(plugin, MAIN, texts, "xxh3")
    want = [xxhash.xxh3_64_hexdigest(t.encode("utf-8")) for t in texts]
    bad = [(t[:20], g, w) for t, g, w in zip(texts, got, want, strict=True) if g != w]
    print(f"compared {len(texts)} xxh3 digests")
    assert not bad, bad[:5]


def test_sketch_matches_python(plugin: PluginBuild) -> None:
    texts = [*_texts(2), "", "a", "ab", "abc", "\U0010ffff\U0010fffe", "重复重复重复重复"]
    got = run_main(plugin, MAIN, texts, "sketch")
    want = [encode_sketch(shingle_sketch(t)) for t in texts]
    bad = [(t[:20], g, w) for t, g, w in zip(texts, got, want, strict=True) if g != w]
    print(f"compared {len(texts)} sketches")
    assert not bad, bad[:5]


def _weight_lines(weights: dict[str, float]) -> str:
    return "\n".join(f"{k}\t{v.hex()}" for k, v in weights.items())


@settings(max_examples=6, deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.text(
                alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\t\n"), min_size=1, max_size=6
            ),
            st.one_of(
                st.floats(min_value=1e-6, max_value=1e4, allow_nan=False),
                st.sampled_from([1.0, 0.5**17, 3 * 0.5**17, 2.5, 1e7]),
            ),
            max_size=40,
        ),
        min_size=50,
        max_size=100,
    )
)
def test_simhash_matches_python(plugin: PluginBuild, cases: list[dict[str, float]]) -> None:
    got = run_main(plugin, MAIN, [_weight_lines(w) for w in cases], "simhash")
    assert got == [[bits.to_hex(v) for v in simhash(w, range(16))] for w in cases]


def test_simhash_on_ties_and_many_features(plugin: PluginBuild) -> None:
    rng = np.random.default_rng(3)
    cases: list[dict[str, float]] = [{}, {"a": 1.0}, {"a": 1.0, "b": 1.0}, {"a": 2.0, "b": 1.0, "c": 1.0}]
    for size in (5, 50, 500, 3000):
        words = [f"w{i}" for i in range(size)]
        cases.append({w: float(rng.choice([0.2, 0.5, 1.0, 1.5, 3.0])) for w in words})  # many exact ties
        cases.append({w: float(v) for w, v in zip(words, rng.lognormal(0, 2, size), strict=True)})
    got = run_main(plugin, MAIN, [_weight_lines(c) for c in cases], "simhash")
    want = [[bits.to_hex(v) for v in simhash(c, range(16))] for c in cases]
    print(f"compared {len(cases)} weight sets x 16 seeds")
    assert got == want

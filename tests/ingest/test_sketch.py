"""The shingle sketch (:mod:`neardup.ingest.sketch`)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from neardup.evaluation.corpus import load_peoples_daily
from neardup.ingest.sketch import (
    jaccard,
    jaccard_bounds,
    jaccard_rows,
    pack_sketches,
    shingle_sketch,
    sketch_bitmaps,
)


@given(st.text(alphabet="天地玄黄宇宙洪荒日月盈昃辰宿列张", min_size=3, max_size=60))
def test_sketch_jaccard_is_one_on_itself(text: str) -> None:
    s = shingle_sketch(text)
    assert jaccard(s, s) == 1.0


_PIECES = ["天地玄黄", "宇宙洪荒", "日月盈昃", "辰宿列张", "寒来暑往", "秋收冬藏", "闰余成岁", "律吕调阳"]


@given(st.lists(st.lists(st.sampled_from(_PIECES + list("云腾致雨露结为霜")), max_size=80), min_size=2, max_size=30))
def test_jaccard_rows_equals_jaccard_pair_by_pair(parts: list[list[str]]) -> None:
    """Sketches of every size, from empty to more than the sketch holds, overlapping by chance."""
    sketches = [shingle_sketch("".join(p)) for p in parts]
    matrix, lengths = pack_sketches(sketches)
    i = np.repeat(np.arange(len(sketches)), len(sketches))
    j = np.tile(np.arange(len(sketches)), len(sketches))
    got = jaccard_rows(matrix[i], lengths[i], matrix[j], lengths[j]).tolist()
    assert got == [jaccard(sketches[a], sketches[b]) for a, b in zip(i.tolist(), j.tolist(), strict=True)]


@given(st.lists(st.lists(st.sampled_from(_PIECES + list("云腾致雨露结为霜")), max_size=80), min_size=2, max_size=30))
def test_the_bound_is_never_below_the_estimate(parts: list[list[str]]) -> None:
    """Every pair, the empty sketch and sketches of more than k values included: a pair refused by the bound
    would have been refused by the estimate."""
    matrix, lengths = pack_sketches([shingle_sketch("".join(p)) for p in parts])
    i = np.repeat(np.arange(len(parts)), len(parts))
    j = np.tile(np.arange(len(parts)), len(parts))
    bound = jaccard_bounds(sketch_bitmaps(matrix, lengths)[i], lengths[i], matrix[j], lengths[j])
    assert (bound >= jaccard_rows(matrix[i], lengths[i], matrix[j], lengths[j])).all()


def test_the_bound_refuses_pairs_of_unrelated_articles() -> None:
    """What it is for: of the pairs of different articles, few keep a bound at the lowest threshold (0.2)."""
    matrix, lengths = pack_sketches([shingle_sketch(a.text) for a in load_peoples_daily()[:200]])
    i, j = np.triu_indices(len(lengths), k=1)
    bound = jaccard_bounds(sketch_bitmaps(matrix, lengths)[i], lengths[i], matrix[j], lengths[j])
    estimate = jaccard_rows(matrix[i], lengths[i], matrix[j], lengths[j])
    assert (bound >= estimate).all()
    print(f"{i.size} pairs: mean bound {bound.mean():.3f}, {(bound >= 0.2).mean():.4f} at 0.2 or more")
    assert (bound >= 0.2).mean() < 0.01 and bound.mean() < 0.2

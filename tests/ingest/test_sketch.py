"""The shingle sketch (:mod:`neardup.ingest.sketch`)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from neardup.ingest.sketch import jaccard, jaccard_rows, pack_sketches, shingle_sketch


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

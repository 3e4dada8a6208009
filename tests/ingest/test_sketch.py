"""The shingle sketch (:mod:`neardup.ingest.sketch`)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from neardup.ingest.sketch import jaccard, shingle_sketch


@given(st.text(alphabet="天地玄黄宇宙洪荒日月盈昃辰宿列张", min_size=3, max_size=60))
def test_sketch_jaccard_is_one_on_itself(text: str) -> None:
    s = shingle_sketch(text)
    assert jaccard(s, s) == 1.0

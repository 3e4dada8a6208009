"""Side-by-side differences of two texts, character level, as HTML-safe segments.

>>> left, right = side_by_side("今天北京天气晴朗", "今天上海天气晴朗")
>>> [(s.kind, s.text) for s in left]
[('same', '今天'), ('removed', '北京'), ('same', '天气晴朗')]
>>> [(s.kind, s.text) for s in right]
[('same', '今天'), ('added', '上海'), ('same', '天气晴朗')]
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import NamedTuple

__all__ = ["MAX_CHARS", "Segment", "side_by_side"]

#: longer texts are compared on their first part: a character diff grows with the product of the lengths (on
#: a busy 2-core machine, 0.3-0.8 s for two 20,000-character texts, 0.02-0.05 s for two of 5,000)
MAX_CHARS = 5_000


class Segment(NamedTuple):
    kind: str  # "same", "removed" (left only) or "added" (right only)
    text: str


def side_by_side(left: str, right: str) -> tuple[list[Segment], list[Segment]]:
    """Segments of ``left`` and ``right`` with the passages that differ marked."""
    a, b = left[:MAX_CHARS], right[:MAX_CHARS]
    out_a: list[Segment] = []
    out_b: list[Segment] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out_a.append(Segment("same", a[i1:i2]))
            out_b.append(Segment("same", b[j1:j2]))
            continue
        if i2 > i1:
            out_a.append(Segment("removed", a[i1:i2]))
        if j2 > j1:
            out_b.append(Segment("added", b[j1:j2]))
    return out_a, out_b

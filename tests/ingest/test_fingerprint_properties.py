"""Fingerprints move little under small edits (:mod:`neardup.ingest.fingerprint`)."""

from __future__ import annotations

import random

from neardup.ingest import bits
from neardup.ingest.fingerprint import Fingerprinter


def test_one_character_edit_of_a_long_text_moves_few_bits() -> None:
    fp = Fingerprinter.default()
    base = (
        "新华社北京电 国家统计局今天发布数据，今年前三季度国内生产总值同比增长百分之五点二，"
        "其中第三季度增长百分之四点九。消费对经济增长的贡献率继续提高，服务业保持较快增长，"
        "高技术制造业投资增长明显。专家认为，国民经济持续恢复向好，高质量发展扎实推进，"
        "但是外部环境依然复杂严峻，国内需求仍显不足，需要继续加大宏观政策调控力度。"
    ) * 3
    rng = random.Random(7)
    a = fp.fingerprint(base)
    worst = 0
    for _ in range(20):
        k = rng.randrange(len(base))
        edited = base[:k] + "的" + base[k + 1 :]
        worst = max(worst, bits.hamming(a.fingerprint, fp.fingerprint(edited).fingerprint))
    assert worst <= 6

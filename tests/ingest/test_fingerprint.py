"""Golden vectors: any change to tokenisation, weights or hashing must change these on purpose
(and bump ``ingest.fingerprint.ALGORITHM`` so stored fingerprints are not compared across versions)."""

from __future__ import annotations

import pytest

from neardup.ingest.fingerprint import Fingerprinter
from neardup.ingest.verify import VerifyConfig, verify

GOLDEN = [
    (
        "国务院总理今天主持召开国务院常务会议，部署进一步扩大内需、稳定经济增长的政策措施。",
        "国务院常务会议",
        0xE84D64F2E54A9F46,
        "fc1bf382ea62ec5a",
    ),
    (
        "Elasticsearch 8 支持 collapse 折叠搜索结果，neardup 用它隐藏近似重复文档。",
        None,
        0xCBDE12A48656DE42,
        "eb482f3629803f67",
    ),
    ("春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。", None, 0x6AEB25A9EA77B596, "97d0476dca6edeca"),
]


def test_version_is_pinned(fp: Fingerprinter) -> None:
    assert fp.version == "nd6-cd9aaf59"


@pytest.mark.parametrize(("text", "title", "fingerprint", "exact"), GOLDEN)
def test_golden_fingerprints(fp: Fingerprinter, text: str, title: str | None, fingerprint: int, exact: str) -> None:
    rec = fp.fingerprint(text, title)
    assert rec.status == "ok"
    assert rec.fingerprint == fingerprint
    assert rec.exact == exact
    assert len(rec.fingerprints) == 16


def test_full_width_and_case_do_not_change_the_fingerprint(fp: Fingerprinter) -> None:
    a = fp.fingerprint("ＮＥＡＲＤＵＰ 支持 Elasticsearch，２０２４年发布。")
    b = fp.fingerprint("neardup 支持 elasticsearch,2024年发布。")
    assert a.fingerprints == b.fingerprints
    assert a.exact == b.exact


def test_title_words_change_weights_and_fingerprint(fp: Fingerprinter) -> None:
    text = "北京今天召开新闻发布会，介绍冬奥会筹备工作进展情况，场馆建设已经全部完成。"
    plain = fp.fingerprint(text, explain=3)
    titled = fp.fingerprint(text, title="冬奥会筹备", explain=3)
    assert titled.features[0][0] in {"冬奥会", "筹备"}
    assert plain.fingerprint != titled.fingerprint


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("", "empty"),
        ("，。！？", "empty"),
        ("   ", "empty"),
        ("😀🎉", "empty"),
        ("好", "too_short"),
        ("ab", "too_short"),
    ],
)
def test_degenerate_input_is_flagged_not_fingerprinted(fp: Fingerprinter, text: str, status: str) -> None:
    rec = fp.fingerprint(text)
    assert rec.status == status
    assert rec.fingerprints == ()
    assert rec.block_tokens() == [[], [], [], []]


def test_texts_without_letters_or_digits_are_never_duplicates(fp: Fingerprinter) -> None:
    """Title-only items and texts of punctuation alone share the exact hash of nothing; none is a copy of another."""
    config = VerifyConfig()
    a, b = fp.fingerprint("", title="国务院召开常务会议"), fp.fingerprint("……", title="图片")
    assert a.exact == b.exact and (a.status, b.status) == ("empty", "empty")
    assert verify(a, b, config) is None and verify(a, a, config) is None


def test_two_different_short_texts_do_not_share_a_constant(fp: Fingerprinter) -> None:
    a, b = fp.fingerprint("好"), fp.fingerprint("坏")
    assert a.exact != b.exact


def test_fingerprint_many_equals_one_by_one(fp: Fingerprinter) -> None:
    from neardup.evaluation.corpus import load_peoples_daily

    arts = load_peoples_daily()[:60]
    docs = [(a.text, a.title) for a in arts] + [(t, ti) for t, ti, _, _ in GOLDEN] + [("", None), ("，。", "t")]
    batch = fp.fingerprint_many(docs)
    fresh = Fingerprinter.default()  # no warm word-factor cache: the cache must not change results
    for (text, title), rec in zip(docs, batch, strict=True):
        one = fresh.fingerprint(text, title)
        assert (one.fingerprints, one.exact, one.status) == (rec.fingerprints, rec.exact, rec.status)
        assert (one.sketch == rec.sketch).all()


def test_traditional_and_simplified_scripts_fingerprint_alike(fp: Fingerprinter) -> None:
    simplified = fp.fingerprint(
        "国务院总理今天主持召开国务院常务会议，部署进一步扩大内需、稳定经济增长的政策措施。", "国务院常务会议"
    )
    traditional = fp.fingerprint(
        "國務院總理今天主持召開國務院常務會議，部署進一步擴大內需、穩定經濟增長的政策措施。", "國務院常務會議"
    )
    assert traditional.fingerprints == simplified.fingerprints and traditional.exact == simplified.exact

"""The Java pipeline gives byte-identical ``neardup.*`` fingerprint fields to the Python core: on every
People's Daily article, every poem of both Tang editions, every Song lyric and lyricist's life, and generated
strings."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup.evaluation.corpus import load_peoples_daily, load_song_ci, load_tang_editions
from neardup.ingest.fingerprint import Fingerprinter
from neardup.mappings.schema import record_fields
from neardup.node.plugin_build import PluginBuild

from .java import CACHE, run_main

MAIN = "io.neardup.parity.FingerprintParity"


def _line(text: str, title: str | None) -> str:
    return f"-:{text}" if title is None else f"{len(title)}:{title}{text}"


def _compare(plugin: PluginBuild, fp: Fingerprinter, docs: Sequence[tuple[str, str | None]], what: str) -> None:
    got = run_main(plugin, MAIN, [_line(t, h) for t, h in docs])
    want = [record_fields(r) for r in fp.fingerprint_many(docs)]
    bad = [(k, docs[k][0][:40], g, w) for k, (g, w) in enumerate(zip(got, want, strict=True)) if g != w]
    # byte identity of the JSON written, not only equal values
    same_bytes = sum(
        json.dumps(g, sort_keys=True) == json.dumps(w, sort_keys=True) for g, w in zip(got, want, strict=True)
    )
    print(f"compared {len(docs)} {what}: {len(docs) - len(bad)} identical, {same_bytes} byte-identical")
    assert not bad, _explain(bad[:3])


def _explain(bad: list[tuple[int, str, dict[str, Any], dict[str, Any]]]) -> str:
    lines = []
    for k, text, g, w in bad:
        diff = {f: (g.get(f), w.get(f)) for f in w if g.get(f) != w.get(f)}
        lines.append(f"#{k} {text!r}: {diff}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def fp() -> Fingerprinter:
    return Fingerprinter.default()


def test_peoples_daily(plugin: PluginBuild, fp: Fingerprinter) -> None:
    arts = load_peoples_daily()
    _compare(plugin, fp, [(a.text, a.title) for a in arts] + [(a.text, None) for a in arts[:200]], "articles")


def test_both_tang_editions(plugin: PluginBuild, fp: Fingerprinter) -> None:
    first, second = load_tang_editions(CACHE / "npm")
    poems = [(p.text, p.title or None) for p in first + second]
    _compare(plugin, fp, poems, "poems")


def test_song_lyrics_and_lives(plugin: PluginBuild, fp: Fingerprinter) -> None:
    """Lines kept apart by newlines, tune names as titles; long biographies mixing Latin digits and brackets."""
    lyrics, lives = load_song_ci(CACHE / "npm")
    _compare(
        plugin, fp, [(p.text, p.title or None) for p in lyrics] + [(p.text, None) for p in lives], "lyrics and lives"
    )


_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8", exclude_categories=["Cs"]),
        st.sampled_from(
            "新闻报道國務院總理会议，。！？；:\n\r\t 　ＡＢＣ１２３ａｂｃé\u0301\u0327ﬁΣİ😀👨‍👩‍👧\u200d\x00\x1c\x85"
        ),
        st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
    ),
    max_size=200,
)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.tuples(_TEXT, st.one_of(st.none(), _TEXT)), min_size=100, max_size=150))
def test_generated_strings(plugin: PluginBuild, fp: Fingerprinter, docs: list[tuple[str, str | None]]) -> None:
    _compare(plugin, fp, docs, "generated documents")


def test_long_words_and_degenerate_input(plugin: PluginBuild, fp: Fingerprinter) -> None:
    docs: list[tuple[str, str | None]] = [
        ("", None),
        ("，。！", None),
        ("", "国务院常务会议"),
        ("😀……", "图片"),
        ("（图片）", "国务院常务会议"),
        ("图片", "　"),
        ("好", "好"),
        ("a" * 5000, None),
        ("北京" * 3000, "北京"),
        ("x1" * 2000 + "新闻" * 100, None),
        ("ＮＥＡＲＤＵＰ 支持 Elasticsearch，２０２４年发布。", "ＮＥＡＲＤＵＰ"),
        ("國務院總理　主持會議，部署進一步擴大內需。" * 20, "國務院"),
    ]
    _compare(plugin, fp, docs, "edge documents")


def test_version_is_the_same(plugin: PluginBuild, fp: Fingerprinter) -> None:
    got = run_main(plugin, MAIN, [_line("国务院今天召开常务会议，部署推动经济稳定增长的措施。", None)])[0]
    assert got["version"] == fp.version

"""The Java segmenter (``io.neardup.text.PreciseCut``, ``Hmm``, ``Tags``) gives exactly the Python words and tags:
``PreciseCut.lcut`` (itself tested equal to ``jieba.lcut``), ``hmm_cut`` (= ``jieba.finalseg.cut``) and
``Segmenter.tag``, on both real corpora (raw and folded), every dictionary key and generated strings.

Generated strings go to one long-lived JVM a text at a time (``CutParity <mode> --each``), so hypothesis can
shrink a mismatch; corpora go through :func:`run_main` in one batch, the JVM working while Python computes.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import jieba
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from jieba import finalseg

from neardup.config import Settings
from neardup.evaluation.corpus import load_peoples_daily, load_tang_editions
from neardup.ingest.hmm import hmm_cut
from neardup.ingest.normalize import normalize
from neardup.ingest.precise import PreciseCut
from neardup.ingest.segment import Segmenter
from neardup.node.plugin_build import PluginBuild

from .java import JavaSession, java_session, run_main

MAIN = "io.neardup.parity.CutParity"
SEGMENTER = Segmenter.default()


@dataclass(frozen=True)
class _RecordingCut(PreciseCut):
    """PreciseCut that also keeps every run of single characters it hands the HMM, and the HMM's words."""

    runs: dict[str, list[str]] = field(default_factory=dict)

    def _singles(self, run: str, out: list[str]) -> None:
        start = len(out)
        super()._singles(run, out)
        if len(run) > 1 and self.logp.get(run, 1.0) == 1.0:  # what _singles gives to hmm_cut
            self.runs[run] = out[start:]


_PYTHON_CUT = PreciseCut.of(SEGMENTER.tokenizer)


def _recording_cut() -> _RecordingCut:
    return _RecordingCut(_PYTHON_CUT.logp, _PYTHON_CUT.unknown)


# the alphabets of tests/ingest/test_precise.py: frequent characters (dictionary words), rare ones (HMM and
# unknown-character paths), what jieba's block pattern keeps together and what it splits on
COMMON = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动"
    "同工也能下过子说产种面而方后多定行学法所民得经"
)
RARE = "".join(chr(c) for c in range(0x9FB0, 0x9FD6)) + "䶮㐀㑇鿕鿖𠀀"
LATIN = "abcxyzABZ0189+#&._%-"
OTHER = " \n\t，。！？、《》“”（）—…·①ａアㄅ"
ALPHABET = COMMON + RARE + LATIN + OTHER
# every character Python's str.isspace (and so jieba's \s) accepts
WHITESPACE = "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())
# pieces where Java and Python differ by nature: UTF-16 vs code points, \s, \d (Unicode Nd), "\r\n"
UNITS = [
    "\r\n",
    "\r\r\n",
    "\n\r",
    *WHITESPACE,
    "1.5%",
    "3.14",
    "50%",
    "a1b2.5%",
    "v1.0",
    "x.٣",
    "1.𝟘%",
    "a.",
    ".5",
    "--",
    "١٢",
    "１２",
    "😀",
    "👍🏽",
    "𠀀",
    "𪚥",
    "\U000e0001",
    "e\u0301",
    "\ufeff",
    "\u200b",
    "neardup",
    "C++",
    "T恤",
    "B超",
]
MIXED = st.lists(
    st.one_of(st.sampled_from(UNITS), st.text(alphabet=ALPHABET, max_size=6), st.text(max_size=3)),
    max_size=15,
).map("".join)


def _session(build: PluginBuild, mode: str) -> Iterator[JavaSession]:
    yield from java_session(build, MAIN, mode, "--each")


@pytest.fixture(scope="module")
def java_lcut(plugin: PluginBuild) -> Iterator[JavaSession]:
    yield from _session(plugin, "lcut")


@pytest.fixture(scope="module")
def java_hmm(plugin: PluginBuild) -> Iterator[JavaSession]:
    yield from _session(plugin, "hmm")


@pytest.fixture(scope="module")
def java_tag(plugin: PluginBuild) -> Iterator[JavaSession]:
    yield from _session(plugin, "tag")


def _compare(what: str, build: PluginBuild, mode: str, texts: Sequence[str], python: Callable[[str], Any]) -> list[Any]:
    """Java's answers to ``texts`` (one JVM, running while Python computes its own) must equal Python's."""
    start = time.perf_counter()
    with ThreadPoolExecutor(1) as pool:
        java = pool.submit(run_main, build, MAIN, texts, mode)
        expected = [python(t) for t in texts]
        answers = java.result()
    mismatched = [(t, p, j) for t, p, j in zip(texts, expected, answers, strict=True) if p != j]
    print(f"{what}: {len(texts)} texts compared, {len(mismatched)} differ ({time.perf_counter() - start:.1f} s)")
    shown = "\n".join(f"{t!r}:\n  python {p!r}\n  java   {j!r}" for t, p, j in mismatched[:5])
    assert not mismatched, f"{len(mismatched)} of {len(texts)} {what} differ, first:\n{shown}"
    return expected


def _corpus_parity(what: str, build: PluginBuild, raw: list[str]) -> None:
    """lcut of every text raw and folded, then the HMM on every run of single characters those cuts made."""
    texts = list(dict.fromkeys(raw + [normalize(t, fold=True) for t in raw]))
    recording = _recording_cut()
    _compare(f"{what} cuts (raw and folded)", build, "lcut", texts, recording.lcut)
    runs = list(recording.runs)
    _compare(f"{what} HMM runs", build, "hmm", runs, recording.runs.__getitem__)


def test_news_corpus_cut_as_python(plugin: PluginBuild) -> None:
    texts = [a.text for a in load_peoples_daily()]
    assert len(texts) > 2000
    _corpus_parity("People's Daily", plugin, texts)


def test_tang_poems_cut_as_python(plugin: PluginBuild) -> None:
    """Traditional and rare characters, long HMM runs: all 100,706 poems of both editions."""
    first, second = load_tang_editions(Settings.from_env().home / "npm")
    texts = [p.text for p in first + second]
    assert len(texts) > 100_000
    _corpus_parity("Tang poems", plugin, texts)


@settings(max_examples=800, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=60))
@example("苦苦苦")  # a tie between two routes: the longer first word wins
@example("他来到了网易杭研大厦")
def test_cuts_random_text_as_python(java_lcut: JavaSession, text: str) -> None:
    assert java_lcut.ask(text) == _PYTHON_CUT.lcut(text)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["北京大学", "学生", "今天", "网易", "杭研", "大厦", "研究生命", "结婚的和尚未结婚的", "苦"]),
        max_size=12,
    ),
    st.text(alphabet=COMMON + OTHER, max_size=8),
)
def test_cuts_dictionary_words_and_ambiguous_joins_as_python(
    java_lcut: JavaSession, words: list[str], tail: str
) -> None:
    text = "".join(words) + tail
    assert java_lcut.ask(text) == _PYTHON_CUT.lcut(text)


@settings(max_examples=800, deadline=None)
@given(MIXED)
@example("a\r\nb\r\r\n\n\r")
@example("😀中文𠀀abc")
@example("3.14%和50%")
def test_cuts_mixed_text_as_python(java_lcut: JavaSession, text: str) -> None:
    """Whitespace of every kind, "\\r\\n", characters beyond the BMP, digits with "." and "%", Latin."""
    assert java_lcut.ask(text) == _PYTHON_CUT.lcut(text)


def test_every_whitespace_cut_as_python(plugin: PluginBuild) -> None:
    texts = [f"中{ws}a{ws}\r\n{ws}{ws}1{ws}" for ws in WHITESPACE] + [f"\r{ws}\n" for ws in WHITESPACE]
    _compare("whitespace texts", plugin, "lcut", texts, _PYTHON_CUT.lcut)


@settings(max_examples=800, deadline=None)
@given(st.text(alphabet=ALPHABET, min_size=1, max_size=30))
# characters missing from some states' emission tables make states tie; found by mutating the tie-breaks
@example("凁僷遆囱")
@example("惗傋柊乑鞮")
@example("敔剓倳佌恹冸偋")
@example("韩冰说a1b2.5%测试")
def test_hmm_cuts_random_text_as_python(java_hmm: JavaSession, text: str) -> None:
    assert java_hmm.ask(text) == hmm_cut(text)


@settings(max_examples=500, deadline=None)
@given(MIXED)
def test_hmm_cuts_mixed_text_as_python(java_hmm: JavaSession, text: str) -> None:
    assert java_hmm.ask(text) == hmm_cut(text)


def test_hmm_digits_as_python(plugin: PluginBuild) -> None:
    """finalseg's re_skip has \\d, which in Python is any Unicode decimal digit (Nd): every numeric character
    (Nd, but also No, Nl and CJK numerals, which must not match) after "x1."."""
    numeric = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isnumeric()]
    texts = [f"x1.{d}{d}%y.{d}中文" for d in numeric]
    assert len(texts) > 1800
    _compare("numeric-character texts", plugin, "hmm", texts, hmm_cut)


def test_every_dictionary_key_tagged_as_python(plugin: PluginBuild) -> None:
    """Words with their jieba tag, and mere prefixes, which get a guessed one."""
    keys = sorted(_PYTHON_CUT.logp)
    assert len(keys) > 490_000
    _compare("dictionary keys' tags", plugin, "tag", keys, SEGMENTER.tag)


WORDS = st.one_of(
    st.from_regex(r"[0-9][0-9.,:%/-]*\n?", fullmatch=True),
    st.from_regex(r"[a-z][a-z0-9_.+#&'-]*\n?", fullmatch=True),
    st.text(alphabet="0189az.,:%/-_+#&'A中\n 𠀀😀", max_size=8),
    st.text(max_size=4),
    st.builds(lambda w, s: w + s, st.sampled_from(["北京大学", "学生", "网易", "苦"]), st.text(ALPHABET, max_size=2)),
)


@settings(max_examples=1000, deadline=None)
@given(WORDS)
@example("")
@example("\n")
@example("1\n")
@example("1\n\n")
@example("a\n")
@example("𠀀")
@example("😀")
@example("A1")
@example("１２")
def test_generated_words_tagged_as_python(java_tag: JavaSession, word: str) -> None:
    assert java_tag.ask(word) == SEGMENTER.tag(word)


def test_jieba_default_regexes_are_the_ported_ones() -> None:
    """The Java side hard-codes jieba's block and skip patterns: fail here if an upgrade changes them."""
    assert jieba.re_han_default.pattern == "([\u4e00-\u9fd5a-zA-Z0-9+#&\\._%\\-]+)"
    assert jieba.re_skip_default.pattern == "(\r\n|\\s)"
    assert finalseg.re_han.pattern == "([\u4e00-\u9fd5]+)"
    assert finalseg.re_skip.pattern == "([a-zA-Z0-9]+(?:\\.\\d+)?%?)"

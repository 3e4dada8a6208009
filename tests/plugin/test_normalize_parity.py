"""The Java Unicode layer (``io.neardup.text.Normalize``, ``PyChars``, ``PyCase``) must answer exactly as
``ingest/normalize.py`` and Python's ``str``/``unicodedata``/``re`` do: every code point, every corpus text,
and generated strings that go after the places where Java and Python differ by nature (Unicode versions,
``\\s``/``\\w``, full case mapping and Final_Sigma, canonical reordering and composition)."""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from neardup.config import Settings
from neardup.evaluation.corpus import load_peoples_daily, load_tang_editions
from neardup.ingest.normalize import content_chars, is_punctuation, normalize
from neardup.node.plugin_build import PluginBuild

from .java import JavaSession, java_session, run_main

TEXT_MAIN = "io.neardup.parity.NormalizeParity"
CHARS_MAIN = "io.neardup.parity.NormalizeParityChars"
BLOCK = 256
SIGMA = "\u03a3"
_SPACE_RE = re.compile(r"\s")
_WORD_RE = re.compile(r"\w")
SPACES = "".join(chr(cp) for cp in range(sys.maxunicode + 1) if chr(cp).isspace())


def python_answer(text: str) -> list[str]:
    """What ``NormalizeParity`` answers, computed by the Python side."""
    normalized = normalize(text)
    return [
        unicodedata.normalize("NFKC", text),
        text.lower(),
        normalized,
        content_chars(normalized),
        content_chars(text),
        "true" if is_punctuation(text) else "false",
    ]


def compare(texts: Sequence[str], answers: Sequence[Any], what: str) -> None:
    """Assert every answer equals Python's, naming the first few texts that differ."""
    mismatches = []
    for text, answer in zip(texts, answers, strict=True):
        expected = python_answer(text)
        if answer != expected:
            mismatches.append(f"{text[:80]!r}: java {answer!r} != python {expected!r}")
    print(f"{what}: compared {len(texts)} texts, {len(mismatches)} differ")
    assert not mismatches, f"{len(mismatches)} of {len(texts)} differ:\n" + "\n".join(mismatches[:5])


# --- every code point ---------------------------------------------------------------------------------------


def _hex(text: str) -> str:
    return ".".join(f"{ord(c):x}" for c in text)


def _key(cp: int) -> str:
    c = chr(cp)
    flags = (
        ("s" if c.isspace() else "")
        + ("S" if _SPACE_RE.fullmatch(c) else "")
        + ("a" if c.isalnum() else "")
        + ("w" if _WORD_RE.fullmatch(c) else "")
        + ("p" if is_punctuation(c) else "")
    )
    sigma = "".join(
        str(s.lower().count("\u03c2")) for s in ("a" + c + SIGMA, c + SIGMA, "a" + SIGMA + c, "a" + SIGMA + c + "a")
    )
    return f"{unicodedata.category(c)}:{flags}:{sigma}"


def python_block(number: int) -> list[str]:
    """What ``NormalizeParityChars`` answers for one block of code points, from Python's own functions."""
    records: list[str] = []
    mappings: list[str] = []
    run_start, run_key = -1, ""
    for cp in range(number * BLOCK, (number + 1) * BLOCK):
        c = chr(cp)
        key = _key(cp)
        if key != run_key:
            if run_key:
                records.append(f"r {run_start:x} {cp - 1:x} {run_key}")
            run_start, run_key = cp, key
        nfkc = unicodedata.normalize("NFKC", c)
        for kind, mapped in (("n", nfkc), ("l", c.lower()), ("k", nfkc.lower())):
            if mapped != c:
                mappings.append(f"{kind} {cp:x} {_hex(mapped)}")
    records.append(f"r {run_start:x} {(number + 1) * BLOCK - 1:x} {run_key}")
    return records + mappings


def _per_code_point(records: Sequence[str]) -> dict[str, str]:
    """Block records spread out to one entry per (code point, what), to name the code points that differ."""
    out: dict[str, str] = {}
    for record in records:
        kind, first, rest = record.split(" ", 2)
        if kind == "r":
            last, key = rest.split(" ")
            for cp in range(int(first, 16), int(last, 16) + 1):
                out[f"U+{cp:04X} category:flags:sigma"] = key
        else:
            out[f"U+{int(first, 16):04X} {kind}"] = rest
    return out


def test_every_code_point(plugin: PluginBuild) -> None:
    """Category, isspace, \\s, isalnum, \\w, is_punctuation, the Final_Sigma context (Cased and
    Case_Ignorable), NFKC, lower and NFKC-then-lower of every code point 0..0x10FFFF (lone surrogates too)."""
    blocks = (sys.maxunicode + 1) // BLOCK
    answers = run_main(plugin, CHARS_MAIN, [str(n) for n in range(blocks)])
    differences: list[str] = []
    for number, answer in enumerate(answers):
        expected = python_block(number)
        if answer != expected:
            java, python = _per_code_point(answer), _per_code_point(expected)
            for what in sorted(java.keys() | python.keys()):
                if java.get(what) != python.get(what):
                    differences.append(f"{what}: java {java.get(what)} != python {python.get(what)}")
    print(f"compared {blocks * BLOCK} code points ({blocks} blocks), {len(differences)} differences")
    assert not differences, f"{len(differences)} differences:\n" + "\n".join(differences[:20])


# --- sequences: canonical reordering and composition --------------------------------------------------------


def composition_texts() -> list[str]:
    """Every decomposable code point taken apart and put together again in odd orders: its NFD/NFKD, marks
    reversed, a mark of another combining class inserted before or after its own, a blocker in between."""
    texts: list[str] = []
    for cp in range(sys.maxunicode + 1):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        nfd, nfkd = unicodedata.normalize("NFD", c), unicodedata.normalize("NFKD", c)
        if nfd != c:
            head, tail = nfd[0], nfd[1:]
            texts += [
                nfd,
                head + tail[::-1],
                nfd + "\u0301",
                head + "\u0323" + tail,
                head + "\u0345" + tail,
                head + "\u034f" + tail,
                c + "\u0308\u0316",
                SIGMA + nfd + SIGMA + " " + nfd.upper() + SIGMA,
            ]
        if nfkd != c and nfkd != nfd:
            texts += [nfkd, nfkd[::-1], "A" + c + "\u0301" + c]
    # Hangul: every leading consonant with every vowel, and a sample of syllables with every trailing one
    for lead in range(0x1100, 0x1160):
        texts.append("".join(chr(lead) + chr(vowel) for vowel in range(0x1160, 0x11A8)))
    for syllable in range(0xAC00, 0xD7A4, 97):
        texts.append("".join(chr(syllable) + chr(trail) + "\u0301" for trail in range(0x11A7, 0x1200)))
    return texts


def test_composition(plugin: PluginBuild) -> None:
    texts = composition_texts()
    compare(texts, run_main(plugin, TEXT_MAIN, texts), "composition")


# --- corpora ------------------------------------------------------------------------------------------------


def test_peoples_daily(plugin: PluginBuild) -> None:
    texts = [article.text for article in load_peoples_daily()]
    compare(texts, run_main(plugin, TEXT_MAIN, texts), "People's Daily articles")


def test_tang_editions(plugin: PluginBuild) -> None:
    first, second = load_tang_editions(Settings.from_env().home / "npm")
    texts = [poem.text for poem in first + second] + [poem.title for poem in first + second]
    compare(texts, run_main(plugin, TEXT_MAIN, texts), "Tang poems (texts and titles, both editions)")


# --- generated strings --------------------------------------------------------------------------------------


def _chars(*ranges: tuple[int, int]) -> st.SearchStrategy[str]:
    return st.one_of(*(st.integers(first, last) for first, last in ranges)).map(chr)


CJK = _chars(
    (0x4E00, 0x9FFF),  # unified ideographs
    (0x3400, 0x4DBF),  # extension A
    (0x20000, 0x2A6DF),  # extension B
    (0x2A700, 0x2EBEF),  # extensions C..F
    (0x30000, 0x3134F),  # extension G
    (0xF900, 0xFAFF),  # compatibility ideographs (NFKC maps them to unified ones)
    (0x2F800, 0x2FA1F),  # compatibility supplement
    (0x2E80, 0x2FDF),  # radicals, Kangxi radicals
    (0x3000, 0x303F),  # CJK punctuation, ideographic space
    (0x3040, 0x30FF),  # kana, with the voicing marks
    (0x3190, 0x33FF),  # kanbun, enclosed and squared forms
    (0xFE30, 0xFE4F),  # vertical and compatibility forms
)
TRADITIONAL = st.sampled_from(list("國務院總理會議這個時間發展經濟學習們對說問題點臺灣體關聯龜鬱齣祕裏著於乾後"))
LATIN = _chars((0x41, 0x7A), (0xC0, 0x24F), (0x1E00, 0x1EFF), (0x2C60, 0x2C7F), (0xA720, 0xA7FF), (0xAB30, 0xAB6F))
WIDTH = _chars((0xFF00, 0xFFEF))
GREEK = _chars((0x370, 0x3FF), (0x1F00, 0x1FFF)) | st.sampled_from([SIGMA, SIGMA * 2, "\u03c2", "\u03c3"])
CYRILLIC_ETC = _chars((0x400, 0x52F), (0x531, 0x58F), (0x10A0, 0x10FF), (0x13A0, 0x13FF), (0x10400, 0x104FF))
MARKS = _chars(
    (0x300, 0x36F),
    (0x483, 0x489),
    (0x591, 0x5C7),
    (0x610, 0x61A),
    (0x64B, 0x65F),
    (0x93C, 0x94D),
    (0xE31, 0xE4E),
    (0xF71, 0xF84),
    (0x1AB0, 0x1AFF),
    (0x1DC0, 0x1DFF),
    (0x20D0, 0x20FF),
    (0x3099, 0x309A),
    (0xFE20, 0xFE2F),
    (0x1D165, 0x1D169),
    (0x1D16D, 0x1D172),
)
HANGUL = _chars((0x1100, 0x11FF), (0xAC00, 0xD7A3), (0x3130, 0x318F), (0xA960, 0xA97F), (0xD7B0, 0xD7FF))
SPECIAL = st.sampled_from(
    [
        "\u0130",  # İ: lowercases to i + combining dot
        "\u0131",
        "\ufb01",  # ﬁ
        "\ufb00",
        "\ufb03",
        "\ufb06",
        "\u01c5",  # ǅ, titlecase
        "\u01c8",
        "\u00df",
        "\u1e9e",
        "\u212a",  # Kelvin sign
        "\u212b",  # Angstrom sign
        "\u2126",  # Ohm sign
        "\u338f",
        "\u2460",
        "\u00bd",
        "\u2122",
        "\u210c",
        "\uff76\uff9e",  # half-width kana with a half-width voicing mark
        "\uff8a\uff9f",
        "\u0345",  # ypogegrammeni: case-ignorable and cased
        "\u0387",
        "\u1fbe",
        "\u0344",
        "\u0f73",
        "\u0f77",
        "\u2002",
        "\u3000",
        "\u00a0",
        "\u00b5",
        "\u017f",
        "\u1e9b\u0323",
        "\u0149",
        "\u01f0",
        "\u2cef",
        "\u24b6",
        "\U0001d400",  # mathematical bold capital A
        "\U0001f130",
        "_",
        "__init__",
    ]
)
EMOJI = _chars(
    (0x1F300, 0x1FAFF), (0x2600, 0x27BF), (0x1F1E6, 0x1F1FF), (0x1F3FB, 0x1F3FF), (0xE0020, 0xE007F)
) | st.sampled_from(
    [
        "\U0001f468\u200d\U0001f469\u200d\U0001f467",
        "\U0001f3f3\ufe0f\u200d\U0001f308",
        "\U0001f44d\U0001f3fd",
        "\U0001f1e8\U0001f1f3",
        "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
        "\u200d",
        "\ufe0f",
        "\ufe0e",
        "#\ufe0f\u20e3",
    ]
)
CONTROL = _chars(
    (0x0, 0x1F),
    (0x7F, 0x9F),
    (0xAD, 0xAD),
    (0x61C, 0x61C),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x2028, 0x202E),
    (0x2060, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
)
SPACE = st.sampled_from(list(SPACES))
ANY = st.integers(0, sys.maxunicode).filter(lambda cp: not 0xD800 <= cp <= 0xDFFF).map(chr)
BASE = LATIN | GREEK | CJK | HANGUL | CYRILLIC_ETC | WIDTH
CLUSTER = st.tuples(BASE, st.lists(MARKS | st.sampled_from(["\u0345", "\u034f", "\u0307"]), max_size=6)).map(
    lambda t: t[0] + "".join(t[1])
)
PIECE = st.one_of(
    CJK, TRADITIONAL, LATIN, WIDTH, GREEK, CYRILLIC_ETC, MARKS, HANGUL, SPECIAL, EMOJI, CONTROL, SPACE, ANY
)
WORD = st.lists(PIECE | CLUSTER, min_size=1, max_size=4).map("".join)
LONG_RUN = st.tuples(WORD, st.integers(50, 3000)).map(lambda t: t[0] * t[1])
TEXT = st.lists(PIECE | CLUSTER | WORD | SPACE.map(lambda s: s * 3), max_size=40).map("".join)
GENERATED = TEXT | st.tuples(TEXT, LONG_RUN, TEXT).map("".join)


@pytest.fixture(scope="module")
def java(plugin: PluginBuild) -> Iterator[JavaSession]:
    yield from java_session(plugin, TEXT_MAIN)


GENERATED_EXAMPLES = 4000
EXAMPLES = [
    "",
    SIGMA,
    "ΑΣ ΑΣΑ ΑΣ. Σ. ΑΣ\u0345 ΑΣ\u0345Α ΑΣ\u00ad ΑΣ'Α \u0345Σ ΑΣ\U0001d400",
    "\u0130STANBUL \u0130\u0307 \ufb01n ǅ ß ẞ K Å",
    "\x1c\x1d\x1e\x1fa\x85b\u2028c\u2029d\u180ee\u200bf\u3000g\xa0",
    "\ud800 a\udfff \ud83d",  # lone surrogates pass through both sides unchanged
    "a\u0323\u0307 a\u0307\u0323 \u1e0b\u0323 q\u0307\u0323 \u0f73\u0f71 \u1100\u1161\u11a8",
    "ＡＢＣ１２３　新闻\n\n报道 ｶﾞｷﾞ ㍿ ㈱ ⑩ ⅻ",
]


def test_generated(java: JavaSession) -> None:
    """Hypothesis strings, each asked of the same JVM, so a failure shrinks to a small example."""
    compared = 0

    def check(text: str) -> None:
        nonlocal compared
        compared += 1
        answer = java.ask(text)
        expected = python_answer(text)
        assert answer == expected, f"{text!r}: java {answer!r} != python {expected!r}"

    run = given(text=GENERATED)(check)
    for text in EXAMPLES:
        run = example(text=text)(run)
    settings(
        max_examples=GENERATED_EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )(run)()
    print(f"generated: compared {compared} strings ({len(EXAMPLES)} fixed ones among them)")
    assert compared >= GENERATED_EXAMPLES // 2, "hypothesis ran far fewer examples than asked"

"""Java's ``T2S`` folds Traditional to Simplified exactly as Python's ``opencc.OpenCC("t2s").convert``.

Compared on real text (every People's Daily article, every poem of both Tang editions, raw and as
``normalize`` hands them to the fold), on every code point, on every key of the exported dictionaries alone,
in random context and run together, on hand-picked edge cases (ideographic description sequences, lone
surrogates, NUL) and on hypothesis-generated mixed-script strings. Each test runs one JVM over all its texts.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import opencc
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from neardup.config import Settings
from neardup.evaluation.corpus import load_peoples_daily, load_tang_editions
from neardup.ingest.normalize import normalize
from neardup.node.plugin_build import PluginBuild

from .java import run_main

MAIN = "io.neardup.parity.T2SParity"
T2S = opencc.OpenCC("t2s")


def _python(text: str) -> str | None:
    """Python's answer; None where the binding cannot encode the text (a lone surrogate) and raises."""
    try:
        return str(T2S.convert(text))
    except UnicodeEncodeError:
        return None


def _clip(text: str | None) -> str | None:
    return text if text is None or len(text) <= 120 else text[:120] + f"…(+{len(text) - 120})"


def _assert_parity(plugin: PluginBuild, texts: list[str], what: str) -> None:
    expected = [_python(t) for t in texts]
    actual = run_main(plugin, MAIN, texts)
    mismatches = [(t, e, a) for t, e, a in zip(texts, expected, actual, strict=True) if e != a]
    print(f"t2s parity, {what}: compared {len(texts)} texts, {len(mismatches)} differ")
    shown = [(_clip(t), _clip(e), _clip(a)) for t, e, a in mismatches[:5]]
    assert not mismatches, f"{len(mismatches)} of {len(texts)} {what} differ (text, python, java): {shown}"


def _dictionaries(plugin: PluginBuild) -> dict[str, dict[str, list[str]]]:
    """The exported dictionaries the build packs, by name (the files Java loads)."""
    folder = plugin.data / "opencc"
    names = [
        name
        for line in (folder / "t2s.txt").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
        for name in line.split("\t")[1:]
    ]
    tables: dict[str, dict[str, list[str]]] = {}
    for name in names:
        rows = (folder / f"{name}.txt").read_text(encoding="utf-8").split("\n")
        tables[name] = {row.split("\t")[0]: row.split("\t")[1:] for row in rows if row}
    return tables


def _with_normalized(texts: Iterable[str]) -> list[str]:
    """Each text raw and, where that differs, as the pipeline folds it (NFKC, lowercase, whitespace
    collapsed); duplicates dropped."""
    out: dict[str, None] = {}
    for text in texts:
        out[text] = None
        out[normalize(text)] = None
    return list(out)


def test_peoples_daily_articles(plugin: PluginBuild) -> None:
    articles = [a.text for a in load_peoples_daily()]
    assert len(articles) > 2000
    _assert_parity(plugin, _with_normalized(articles), "People's Daily articles (raw and normalized)")


def test_tang_poems_of_both_editions(plugin: PluginBuild) -> None:
    first, second = load_tang_editions(Settings.from_env().home / "npm")
    poems = [p.text for p in first + second]
    assert len(poems) > 100_000
    _assert_parity(plugin, _with_normalized(poems), "Tang poems (raw and normalized)")


def test_every_code_point(plugin: PluginBuild) -> None:
    """All of Unicode but the surrogates, 64 consecutive code points a text; and every character of every key
    and value on its own."""
    points = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
    texts = ["".join(points[i : i + 64]) for i in range(0, len(points), 64)]
    alone: set[str] = set()
    for table in _dictionaries(plugin).values():
        for key, values in table.items():
            alone.update(key)
            for value in values:
                alone.update(value)
    alone.update(chr(cp) for cp in range(0x2FF0, 0x3000))
    texts += sorted(alone)
    _assert_parity(plugin, texts, "code point runs and single characters")


def test_every_dictionary_key(plugin: PluginBuild) -> None:
    """Every key alone, inside random context, and keys run together (where phrases overlap and compete)."""
    tables = _dictionaries(plugin)
    keys = sorted({key for table in tables.values() for key in table})
    values = sorted({value for table in tables.values() for vs in table.values() for value in vs})
    rng = random.Random(20240229)
    pool = list("".join(keys) + "".join(values)) + list("aZ09 ,.，。「」\n\t\x00⿰⿱⿲") + ["😀", "é", "ｅ", "\u0301"]

    def context() -> str:
        return "".join(rng.choice(pool) for _ in range(rng.randrange(4)))

    texts = list(keys)
    texts += [context() + key + context() for key in keys for _ in range(3)]
    phrases = sorted(tables["TSPhrases"])
    for _ in range(5000):
        picks = rng.sample(phrases, rng.randrange(2, 6)) + rng.sample(keys, rng.randrange(0, 3))
        rng.shuffle(picks)
        texts.append("".join(picks))
    # phrases cut short and overlapping: a key's head followed by another key's tail
    tails = list(reversed(phrases))
    texts += [a[: rng.randrange(1, len(a))] + b for a, b in zip(phrases, tails, strict=True) if len(a) > 1]
    _assert_parity(plugin, texts, "dictionary keys alone, in context and run together")


# ideographic description sequences: complete, nested, cut short, too deep, too long, operands of any kind
_IDS = [
    "⿰說話說話",
    "⿰說",
    "⿰⿱說話",
    "⿰⿱說話語",
    "⿲說話語言",
    "⿾說話",
    "⿰a b",
    "⿰\x00說",
    "⿰😀說話",
    "⿰\U00020000說",
    "⿰" * 15 + "說" * 16,
    "⿰" * 16 + "說" * 17,
    "⿰" * 17 + "說" * 18,
    "⿱" * 31 + "說" * 32 + "話",
    "⿱" * 32 + "說" * 33,
    "⿾" * 63 + "說話",
    "⿾" * 64 + "說話",
    "⿿" * 70 + "說",
    "說⿰",
    "\u31ef說話",
]


def test_edge_cases(plugin: PluginBuild) -> None:
    texts = [
        "",
        "說話",
        "憑藉 藉口 慰藉",
        "乾隆 乾燥 幹部",
        "阪神",
        "\uf900\uf901\U0002f800",
        "豈\uf900豈",
        "a\x00說\x00",
        "\r\n說\r\n",
        "\ufeff說",
        "說\u0301話\ufe00語\U000e0100",
        "\ud800",
        "說\udfff話",
        "a\ud83d",
        "\ude00說",
        "😀說\U0001f3fb話\u200d👩",
        "ｆｕｌｌ　ｗｉｄｔｈ　說話",
        "說" * 50_000,
        "憑藉" * 20_000 + "x",
        *_IDS,
    ]
    _assert_parity(plugin, texts, "edge cases")


# characters of phrases and of multi-valued or compatibility entries
_KEY_CHARS = st.sampled_from(
    sorted(set("國務院總理主持會議說話語言藉憑乾隆燥幹阪發髮後臺颱麵麪鍾鐘歷曆著隻" + "\uf900\uf91b\U0002f800"))
)
_PIECES = st.one_of(
    _KEY_CHARS,
    st.sampled_from(["憑藉", "一目瞭然", "乾元", "乾紅", "鍾繇", "想像", "⿰說話"]),  # phrases and a sequence
    st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),  # unified ideographs, both scripts
    st.characters(min_codepoint=0xF900, max_codepoint=0xFAFF),  # compatibility ideographs
    st.characters(min_codepoint=0x2F800, max_codepoint=0x2FA1F),  # compatibility supplement
    st.characters(min_codepoint=0x20000, max_codepoint=0x3134F),  # extensions B–G
    st.characters(min_codepoint=0x2FF0, max_codepoint=0x2FFF),  # description operators
    st.characters(max_codepoint=0x7F),  # ASCII: Latin, digits, punctuation, controls
    st.characters(min_codepoint=0x80, max_codepoint=0x9F),  # C1 controls
    st.characters(min_codepoint=0x300, max_codepoint=0x36F),  # combining marks
    st.characters(min_codepoint=0xFE00, max_codepoint=0xFE0F),  # variation selectors
    st.characters(min_codepoint=0xFF00, max_codepoint=0xFFEF),  # full-width and half-width forms
    st.characters(min_codepoint=0x3000, max_codepoint=0x303F),  # CJK punctuation
    st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF),  # emoji
    st.sampled_from(["\u200d", "\U0001f3fb", "\ufeff", "\u2028", "\x00"]),
    st.characters(exclude_categories=["Cs"]),  # anything else
)
_TEXTS = st.one_of(
    st.lists(_PIECES, max_size=60).map("".join),
    st.tuples(st.lists(_PIECES, min_size=1, max_size=6).map("".join), st.integers(20, 3000)).map(
        lambda run: run[0] * run[1]
    ),
)


def _generated(examples: int) -> list[str]:
    """The texts of ``examples`` hypothesis examples (a few texts each: hypothesis spends more on an example
    than on its size), gathered so that one JVM answers them all."""
    texts: list[str] = []

    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.lists(_TEXTS, min_size=1, max_size=8))
    def gather(batch: list[str]) -> None:
        texts.extend(batch)

    gather()
    return texts


def test_generated_strings(plugin: PluginBuild) -> None:
    texts = _generated(1000)
    assert len(texts) >= 1000
    _assert_parity(plugin, texts, "hypothesis-generated strings")

"""Reprint-style variants of an article, as sites that copy news produce them.

Each of :data:`TRANSFORMS` takes paragraphs and a seeded ``random.Random`` and returns new paragraphs;
:func:`make_variant` applies 1–3 of them and keeps a draw only if it holds enough of the article (:func:`kept`, the
share of its character bigrams); :func:`wrap_boilerplate` puts a site's navigation and copyright around paragraphs.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

__all__ = ["BOILERPLATES", "KEPT", "TRANSFORMS", "kept", "make_variant", "wrap_boilerplate"]

Paragraphs = list[str]

_SOURCES = [
    "来源：人民日报",
    "来源：新华网",
    "稿件来源：人民网－人民日报",
    "转载自：中国新闻网",
    "来源：央视新闻客户端",
]
_EDITORS = ["责任编辑：王磊", "（编辑：李静）", "责编：张伟　审核：陈晨", "【纠错】责任编辑：刘洋"]
_WIDE = str.maketrans("0123456789,;:!?()", "０１２３４５６７８９，；：！？（）")
_NARROW = str.maketrans("０１２３４５６７８９，；：！？（）", "0123456789,;:!?()")
_SENT_RE = re.compile(r"(?<=[。！？])")

#: navigation / copyright blocks shared by pages of one site (the hard negatives wear these)
BOILERPLATES = [
    (
        "首页｜新闻｜时政｜国际｜财经｜体育｜娱乐｜科技｜教育｜健康｜旅游｜汽车｜房产｜论坛｜博客",
        "版权所有：本网站所刊登的各种新闻、信息和各种专题专栏资料，均为本网版权所有，未经协议授权禁止下载使用。"
        "联系我们｜关于我们｜广告服务｜网站地图｜隐私政策｜免责声明",
    ),
    (
        "当前位置：首页 > 新闻中心 > 国内新闻 > 正文　字号：大 中 小　打印本页　关闭窗口",
        "相关新闻：更多精彩内容请关注本站微信公众号，扫描二维码下载客户端。"
        "本站郑重声明：所载文章、数据仅供参考，使用前请核实，风险自负。违法和不良信息举报电话",
    ),
]


def add_source_lines(p: Paragraphs, rng: random.Random) -> Paragraphs:
    out = list(p)
    out.insert(0, rng.choice(_SOURCES))
    out.append(rng.choice(_EDITORS))
    return out


def drop_paragraph(p: Paragraphs, rng: random.Random) -> Paragraphs:
    if len(p) < 3:
        return list(p)
    out = list(p)
    del out[rng.randrange(1, len(out))]
    return out


def repeat_paragraph(p: Paragraphs, rng: random.Random) -> Paragraphs:
    out = list(p)
    i = rng.randrange(len(out))
    out.insert(i + 1, out[i])
    return out


def char_edits(p: Paragraphs, rng: random.Random) -> Paragraphs:
    """Substitute, delete or insert 1–3 % of the characters."""
    text = "\n".join(p)
    chars = list(text)
    alphabet = [c for c in chars if "\u4e00" <= c <= "\u9fff"] or ["的"]
    for _ in range(max(1, int(len(chars) * rng.uniform(0.01, 0.03)))):
        i = rng.randrange(len(chars))
        if chars[i] == "\n":
            continue
        op = rng.random()
        if op < 0.5:
            chars[i] = rng.choice(alphabet)
        elif op < 0.75:
            chars[i] = ""
        else:
            chars[i] = chars[i] + rng.choice(alphabet)
    return "".join(chars).split("\n")


def punctuation_width(p: Paragraphs, rng: random.Random) -> Paragraphs:
    table = _NARROW if rng.random() < 0.5 else _WIDE
    return [x.translate(table).replace("“", '"').replace("”", '"') for x in p]


def swap_sentences(p: Paragraphs, rng: random.Random) -> Paragraphs:
    out = list(p)
    i = max(range(len(out)), key=lambda k: len(out[k]))
    sentences = [s for s in _SENT_RE.split(out[i]) if s]
    if len(sentences) >= 2:
        k = rng.randrange(len(sentences) - 1)
        sentences[k], sentences[k + 1] = sentences[k + 1], sentences[k]
        out[i] = "".join(sentences)
    return out


def truncate_tail(p: Paragraphs, rng: random.Random) -> Paragraphs:
    text = "\n".join(p)
    keep = int(len(text) * rng.uniform(0.7, 0.9))
    return text[:keep].split("\n")


TRANSFORMS: dict[str, Callable[[Paragraphs, random.Random], Paragraphs]] = {
    "source_lines": add_source_lines,
    "drop_paragraph": drop_paragraph,
    "repeat_paragraph": repeat_paragraph,
    "char_edits": char_edits,
    "punctuation_width": punctuation_width,
    "swap_sentences": swap_sentences,
    "truncate_tail": truncate_tail,
}


#: the least share of an article's character bigrams a variant keeps: a reprint copies some of its article
KEPT = 0.1
#: draws of transforms made before giving up on an article
ATTEMPTS = 100


def _bigrams(text: str) -> set[str]:
    return {text[k : k + 2] for k in range(len(text) - 1)}


def kept(article: Sequence[str], variant: Sequence[str]) -> float:
    """The share of the article's character bigrams (over its paragraphs, joined by newlines) the variant holds; 1
    for an article without any.

    >>> kept(["国务院召开会议"], ["来源：新华网", "国务院召开会议", "责任编辑：王磊"]), kept(["国务院"], ["来源"])
    (1.0, 0.0)
    """
    original = _bigrams("\n".join(article))
    return len(_bigrams("\n".join(variant)) & original) / len(original) if original else 1.0


def make_variant(paragraphs: Sequence[str], rng: random.Random, least: float = KEPT) -> tuple[Paragraphs, list[str]]:
    """Apply 1–3 distinct transforms; return the new paragraphs and the transforms' names.

    The variant keeps at least ``least`` of the article's character bigrams (:func:`kept`); a draw that keeps less
    is made again with the same ``rng``. Without it, source lines added and then the article's one paragraph dropped
    (or the tail of a one-line poem cut) leave a "reprint" of nothing but a source and an editor line, which a
    labelled set would count as a duplicate no method can find.

    >>> rng = random.Random(0)
    >>> one = ["国务院今天召开常务会议，部署进一步推动经济稳定增长的措施。"]
    >>> all(any("国务院" in line or "常务会议" in line for line in make_variant(one, rng)[0]) for _ in range(2000))
    True
    """
    for _ in range(ATTEMPTS):
        names = rng.sample(sorted(TRANSFORMS), rng.randint(1, 3))
        out = list(paragraphs)
        for name in names:
            out = TRANSFORMS[name](out, rng)
        if kept(paragraphs, out) >= least:
            return out, names
    raise ValueError(f"no variant of {list(paragraphs)!r} keeps {least:.0%} of its text in {ATTEMPTS} draws")


def wrap_boilerplate(paragraphs: Sequence[str], which: int) -> Paragraphs:
    header, footer = BOILERPLATES[which % len(BOILERPLATES)]
    return [header, *paragraphs, footer]

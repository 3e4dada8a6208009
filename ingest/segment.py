"""Segmentation with part-of-speech tags at ``jieba.lcut`` speed.

``jieba.posseg`` runs a second HMM pass and is about seven times slower than ``jieba.lcut``.
jieba's dictionary already carries a tag for every word it knows, so neardup segments exactly as
``lcut`` does (with :class:`~.precise.PreciseCut`, which is faster) and looks tags up in that
table; words only the HMM discovers get a tag from their shape.

>>> seg = Segmenter.default()
>>> seg.segment("北京大学的学生，今天发表了论文。").words
['北京大学', '学生', '今天', '发表', '论文']
>>> seg.tag("北京大学"), seg.tag("neardup")
('nt', 'eng')
>>> sorted(seg.segment("天气很好。但是我们没有出门。", signals=True).signalled)
['但是', '出门']
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources

import jieba

from .normalize import is_punctuation
from .precise import PreciseCut

__all__ = ["SENTENCE_END", "Segmented", "Segmenter", "load_word_list"]

SENTENCE_END = frozenset("。！？；!?;\n")
_LATIN_RE = re.compile(r"^[a-z][a-z0-9_.+#&'-]*$")
_NUMBER_RE = re.compile(r"^[0-9][0-9.,:%/-]*$")

jieba.setLogLevel(logging.WARNING)


@dataclass(frozen=True)
class Segmented:
    """Kept words in text order, and the kept words standing in a sentence with a signal word
    (empty unless asked for: sentence tracking costs a Python step per word)."""

    words: list[str]
    signalled: frozenset[str] = frozenset()


def load_word_list(name: str) -> frozenset[str]:
    """A word list shipped in ``ingest/data`` (one word a line)."""
    text = resources.files(__package__).joinpath("data", name).read_text(encoding="utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


@cache
def _jieba_tags(dict_path: str) -> dict[str, str]:
    tags: dict[str, str] = {}
    with open(dict_path, encoding="utf-8") as handle:
        for line in handle:
            parts = line.split()
            if len(parts) >= 3:
                tags[parts[0]] = parts[2]
    return tags


def _guess_tag(word: str) -> str:
    if _NUMBER_RE.match(word):
        return "m"
    if _LATIN_RE.match(word):
        return "eng"
    return "nz" if len(word) >= 2 else "x"


@dataclass(frozen=True)
class Segmenter:
    """jieba precise-mode segmentation → kept tokens with tags and sentence numbers.

    Whitespace, punctuation and stopwords are dropped. Input is expected normalised (lowercase).
    """

    tokenizer: jieba.Tokenizer
    tags: dict[str, str]
    stopwords: frozenset[str]
    signal_words: frozenset[str]

    @classmethod
    @cache
    def default(cls) -> Segmenter:
        """jieba's default dictionary, neardup's shipped stopword and signal-word lists."""
        dict_path = os.path.join(os.path.dirname(jieba.__file__), jieba.DEFAULT_DICT_NAME)
        tokenizer = jieba.Tokenizer()
        # jieba caches its parsed dictionary as /tmp/jieba.cache; a file another user made there cannot be
        # replaced (sticky /tmp), and jieba then prints a traceback on every start: one cache per user
        tokenizer.cache_file = f"jieba.u{os.getuid() if hasattr(os, 'getuid') else 0}.cache"
        tokenizer.initialize()
        return cls(
            tokenizer,
            _jieba_tags(dict_path),
            load_word_list("stopwords.txt"),
            load_word_list("signal_words.txt"),
        )

    @cached_property
    def _cut(self) -> PreciseCut:
        return PreciseCut.of(self.tokenizer)

    @cached_property
    def _dropped(self) -> frozenset[str]:
        return self.stopwords | SENTENCE_END | {" "}

    def words(self, text: str) -> list[str]:
        """Raw jieba precise-mode words (with punctuation and spaces), exactly ``jieba.lcut``."""
        return self._cut.lcut(text)

    def tag(self, word: str) -> str:
        """The part-of-speech tag of ``word``: jieba's dictionary tag, or one guessed from its shape."""
        tag = self.tags.get(word)
        return tag if tag is not None else _guess_tag(word)

    def segment(self, text: str, signals: bool = False) -> Segmented:
        """Kept words of normalised ``text``: no whitespace, punctuation or stopwords."""
        if not signals:
            dropped = self._dropped
            words = self._cut.lcut(text)
            return Segmented([w for w in words if w not in dropped and (w[0].isalnum() or not is_punctuation(w))])
        stop = self.stopwords
        signal_words = self.signal_words
        out: list[str] = []
        sentence_of: list[int] = []
        marked: set[int] = set()
        sentence = 0
        for word in self._cut.lcut(text):
            if word in SENTENCE_END:
                sentence += 1
                continue
            if word in signal_words:
                marked.add(sentence)
            if word in stop or word == " " or (not word[0].isalnum() and is_punctuation(word)):
                continue
            out.append(word)
            sentence_of.append(sentence)
        signalled = frozenset(w for w, k in zip(out, sentence_of, strict=True) if k in marked)
        return Segmented(out, signalled)

"""Feature weights: ``w(t) = tf · idf · w_pos · w_len · w_signal · w_title``.

Every factor can be switched off in :class:`WeightConfig`, so the evaluation can show what each buys.

>>> tags = {"北京": "ns", "发表": "v"}.__getitem__
>>> idf = IdfTable({"北京": 2.0, "发表": 4.0})
>>> sorted(weigh(["北京", "北京", "发表"], tags, idf, WeightConfig(length="off"), frozenset()).items())
[('北京', 8.0), ('发表', 4.8)]
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Literal, get_args

import jieba

__all__ = ["DEFAULT_POS_WEIGHTS", "IdfTable", "WeightConfig", "fit_idf", "jieba_idf_path", "length_weight", "weigh"]

LengthMode = Literal["minmax", "normal", "off"]

#: part-of-speech weights by the first letters of jieba's tag (longest prefix wins)
DEFAULT_POS_WEIGHTS: Mapping[str, float] = {
    "nr": 2.0,  # person names
    "ns": 2.0,  # places
    "nt": 2.0,  # organisations
    "nz": 1.8,  # other proper nouns (also words only the HMM found)
    "n": 1.5,
    "vn": 1.4,
    "v": 1.2,
    "eng": 1.5,
    "a": 1.0,
    "i": 1.2,  # idioms
    "l": 1.2,
    "j": 1.5,  # abbreviations
    "t": 0.8,
    "m": 0.6,
    "q": 0.4,
    "d": 0.5,
    "r": 0.3,
    "p": 0.3,
    "c": 0.3,
    "u": 0.2,
    "y": 0.2,
    "e": 0.2,
    "o": 0.3,
    "f": 0.5,
    "x": 0.5,
}

# the length distribution of Chinese terms, fitted as N(4.51, 2.207²)
_LEN_MU = 4.51
_LEN_SIGMA = 2.207


@dataclass(frozen=True)
class WeightConfig:
    """Which weight factors apply, and their constants. Part of the fingerprint version."""

    tf: bool = True
    idf: bool = True
    pos: bool = True
    length: LengthMode = "normal"
    # off by default: ×5 on whole sentences made fingerprints fragile to sentence edits (neardup eval,
    # 3 news sets: recall 0.942 with, 0.968 without, precision unchanged); kept switchable
    signal: bool = False
    title: bool = True
    signal_factor: float = 5.0
    title_factor: float = 5.0
    pos_weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_POS_WEIGHTS))

    def __post_init__(self) -> None:
        """A misspelt length mode would quietly turn the length factor off.

        >>> WeightConfig(length="Normal")
        Traceback (most recent call last):
        ...
        ValueError: length must be one of minmax, normal, off, not 'Normal'
        """
        if self.length not in get_args(LengthMode):
            raise ValueError(f"length must be one of {', '.join(get_args(LengthMode))}, not {self.length!r}")

    def describe(self) -> str:
        """A stable text form of every setting (hashed into the fingerprint version)."""
        data = asdict(self)
        data["pos_weights"] = sorted(self.pos_weights.items())
        return repr(sorted(data.items()))


class IdfTable:
    """Word → inverse document frequency; unknown words get the median (as jieba.analyse does).

    >>> IdfTable({"a": 1.0, "b": 3.0, "c": 5.0})["zzz"]
    3.0
    """

    __slots__ = ("median", "values")

    def __init__(self, values: Mapping[str, float]) -> None:
        self.values = dict(values)
        ordered = sorted(self.values.values())
        self.median = ordered[len(ordered) // 2] if ordered else 1.0

    def __getitem__(self, word: str) -> float:
        return self.values.get(word, self.median)

    @classmethod
    def parse(cls, lines: Iterable[str]) -> IdfTable:
        """Read ``word idf`` lines (jieba's idf.txt format).

        >>> IdfTable.parse(["北京 5.5", "", "上海 6.0"]).values
        {'北京': 5.5, '上海': 6.0}
        """
        values: dict[str, float] = {}
        for line in lines:
            parts = line.split()
            if len(parts) == 2:
                values[parts[0]] = float(parts[1])
        return cls(values)

    @classmethod
    def jieba_default(cls) -> IdfTable:
        """The IDF table jieba ships (:func:`jieba_idf_path`)."""
        with open(jieba_idf_path(), encoding="utf-8") as handle:
            return cls.parse(handle)

    def dump(self) -> str:
        """jieba's idf.txt format, words sorted."""
        return "".join(f"{w} {v:.6f}\n" for w, v in sorted(self.values.items()))


def jieba_idf_path() -> str:
    """The IDF table jieba ships: ``jieba/analyse/idf.txt``."""
    return os.path.join(os.path.dirname(jieba.__file__), "analyse", "idf.txt")


def fit_idf(documents: Iterable[Sequence[str]]) -> IdfTable:
    """Learn IDF from tokenised documents, smoothed: ``1 + log((N + 1) / (df + 1))``.

    A word in every document keeps weight 1 rather than 0, so boilerplate-only text still hashes.

    >>> dict(sorted((w, round(v, 3)) for w, v in fit_idf([["a", "b"], ["a"]]).values.items()))
    {'a': 1.0, 'b': 1.405}
    """
    df: Counter[str] = Counter()
    n = 0
    for words in documents:
        n += 1
        df.update(set(words))
    return IdfTable({w: 1.0 + math.log((n + 1) / (c + 1)) for w, c in df.items()})


def length_weight(length: int, mode: LengthMode, shortest: int = 1, longest: int = 1) -> float:
    """Word-length factor.

    ``minmax``: ``1 + (len − min) / (max − min)`` over the
    document's words; ``normal``: ``1 + N(len; 4.51, 2.207)``
    scaled so its peak is 1.

    >>> length_weight(1, "minmax", 1, 5), length_weight(5, "minmax", 1, 5)
    (1.0, 2.0)
    >>> round(length_weight(4, "normal"), 3), round(length_weight(1, "normal"), 3)
    (1.974, 1.282)
    """
    if mode == "off":
        return 1.0
    if mode == "minmax":
        return 1.0 if longest <= shortest else 1.0 + (length - shortest) / (longest - shortest)
    return _normal_length_weight(length)


@lru_cache(maxsize=64)
def _normal_length_weight(length: int) -> float:
    return 1.0 + math.exp(-((length - _LEN_MU) ** 2) / (2 * _LEN_SIGMA**2))


def _pos_weight(tag: str, table: Mapping[str, float]) -> float:
    for size in (3, 2, 1):
        value = table.get(tag[:size])
        if value is not None:
            return value
    return 1.0


def weigh(
    words: Sequence[str],
    tag: Callable[[str], str],
    idf: IdfTable,
    config: WeightConfig,
    title_words: frozenset[str],
    signalled: frozenset[str] = frozenset(),
    word_factors: dict[str, float] | None = None,
) -> dict[str, float]:
    """Weight of every distinct word of one document (``words`` in text order, repeats counted).

    ``tag`` gives a word's part of speech; ``signalled`` are the words in signal-word sentences.
    ``word_factors`` caches the factors that depend on the word alone (idf · pos · normal length)
    across documents; pass the same dict only with the same ``idf``, ``config`` and ``tag``.
    """
    counts = Counter(words)
    if not counts:
        return {}
    factors = {} if word_factors is None else word_factors
    missing = [w for w in counts if w not in factors]  # (keys() - keys() would walk the whole cache)
    if missing:
        extra = {w: _word_factor(w, tag(w), idf, config) for w in missing}
        if len(factors) + len(extra) <= _MAX_CACHED_WORDS:
            factors.update(extra)
        else:  # the cache is full: this document's factors only
            factors = {w: factors[w] for w in counts if w not in extra} | extra
    tf = config.tf
    weights = {w: factors[w] * c if tf else factors[w] for w, c in counts.items()}
    if config.length == "minmax":
        lengths = [len(w) for w in weights]
        shortest, longest = min(lengths), max(lengths)
        for w in weights:
            weights[w] *= length_weight(len(w), "minmax", shortest, longest)
    if config.signal:
        for w in [t for t in signalled if t in weights]:
            weights[w] *= config.signal_factor
    if config.title:
        for w in [t for t in title_words if t in weights]:
            weights[w] *= config.title_factor
    return weights


_MAX_CACHED_WORDS = 1_000_000


def _word_factor(word: str, tag: str, idf: IdfTable, config: WeightConfig) -> float:
    """idf · pos · (normal) length: the part of a weight that depends on the word alone.

    jieba gives a word one dictionary tag, so the tag is a function of the word too.
    """
    w = idf[word] if config.idf else 1.0
    if config.pos:
        w *= _pos_weight(tag, config.pos_weights)
    if config.length == "normal":
        w *= _normal_length_weight(len(word))
    return w

"""Text normalisation: NFKC (full-width → half-width), lowercase, whitespace collapsed.

>>> normalize("ＡＢＣ１２３　新闻\\n\\n报道")
'abc123 新闻 报道'
>>> content_chars("《人民日报》, 记者 报道!")
'人民日报记者报道'
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

import opencc

__all__ = ["content_chars", "is_punctuation", "normalize"]

_SPACE_RE = re.compile(r"\s+")
# \W is everything but Unicode letters, digits (categories L*, N*) and "_"
_NOT_CONTENT_RE = re.compile(r"[\W_]+")


def normalize(text: str, fold: bool = False) -> str:
    """NFKC, lowercase and collapse runs of whitespace to one space; with ``fold``, Traditional
    characters (and variant forms) become Simplified (OpenCC ``t2s``), so both scripts match.

    >>> normalize("國務院總理　主持會議", fold=True)
    '国务院总理 主持会议'
    """
    out = _SPACE_RE.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()
    return _t2s().convert(out) if fold else out


@cache
def _t2s() -> opencc.OpenCC:
    return opencc.OpenCC("t2s")


def is_punctuation(token: str) -> bool:
    """True when every character of ``token`` is punctuation, a symbol or whitespace.

    >>> is_punctuation("，。"), is_punctuation("新闻"), is_punctuation("")
    (True, False, True)
    """
    return all(unicodedata.category(ch)[0] in "PSZC" for ch in token)


def content_chars(normalized: str) -> str:
    """The letters and digits of already-normalised text: what shingles and exact hashes see."""
    return _NOT_CONTENT_RE.sub("", normalized)

"""Text normalisation: NFKC (full-width → half-width), lowercase, whitespace collapsed.

>>> normalize("ＡＢＣ１２３　新闻\\n\\n报道")
'abc123 新闻 报道'
>>> content_chars("《人民日报》, 记者 报道!")
'人民日报记者报道'
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["content_chars", "is_punctuation", "normalize"]

_SPACE_RE = re.compile(r"\s+")
# \W is everything but Unicode letters, digits (categories L*, N*) and "_"
_NOT_CONTENT_RE = re.compile(r"[\W_]+")


def normalize(text: str) -> str:
    """NFKC, lowercase and collapse runs of whitespace to one space."""
    return _SPACE_RE.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()


def is_punctuation(token: str) -> bool:
    """True when every character of ``token`` is punctuation, a symbol or whitespace.

    >>> is_punctuation("，。"), is_punctuation("新闻"), is_punctuation("")
    (True, False, True)
    """
    return all(unicodedata.category(ch)[0] in "PSZC" for ch in token)


def content_chars(normalized: str) -> str:
    """The letters and digits of already-normalised text: what shingles and exact hashes see."""
    return _NOT_CONTENT_RE.sub("", normalized)

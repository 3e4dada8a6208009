"""Labelled sets: documents with a ``group`` label (near-duplicates share it)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from .corpus import Article, Poem
from .variants import make_variant, wrap_boilerplate

__all__ = ["Doc", "news_set", "poem_set"]


@dataclass(frozen=True)
class Doc:
    id: str
    title: str
    text: str
    group: str


def news_set(articles: Sequence[Article], seed: int, groups: int = 300, singles: int = 600) -> list[Doc]:
    """Originals with 2–4 reprint variants each, plus singletons; half of the singletons and a third
    of the variants wear a site's navigation/copyright boilerplate (hard negatives share it)."""
    rng = random.Random(seed)
    pool = list(articles)
    rng.shuffle(pool)
    if len(pool) < groups + singles:
        raise ValueError(f"need {groups + singles} articles, have {len(pool)}")
    docs: list[Doc] = []
    for g, art in enumerate(pool[:groups]):
        gid = f"s{seed}-g{g}"
        docs.append(Doc(f"{gid}-0", art.title, art.text, gid))
        for v in range(rng.randint(2, 4)):
            paragraphs, _ = make_variant(art.paragraphs, rng)
            if rng.random() < 0.33:
                paragraphs = wrap_boilerplate(paragraphs, rng.randrange(2))
            title = art.title if rng.random() < 0.7 else "转载：" + art.title
            docs.append(Doc(f"{gid}-{v + 1}", title, "\n".join(paragraphs), gid))
    for k, art in enumerate(pool[groups : groups + singles]):
        paragraphs = list(art.paragraphs)
        if k % 2 == 0:
            paragraphs = wrap_boilerplate(paragraphs, k // 2)
        docs.append(Doc(f"s{seed}-n{k}", art.title, "\n".join(paragraphs), f"s{seed}-n{k}"))
    rng.shuffle(docs)
    return docs


def poem_set(
    first: Sequence[Poem], second: Sequence[Poem], seed: int, pairs: int = 800, singles: int = 800
) -> list[Doc]:
    """The same poem in two editions is a true pair. A pair is labelled when its title occurs once in
    each edition and the two texts start with the same character and differ in length by < 20 %."""
    rng = random.Random(seed)
    count_a = Counter(p.title for p in first)
    count_b = Counter(p.title for p in second)
    by_title = {p.title: p for p in second if count_b[p.title] == 1}
    matched = [
        (p, by_title[p.title])
        for p in first
        if count_a[p.title] == 1
        and p.title in by_title
        and p.text[:1] == by_title[p.title].text[:1]
        and abs(len(p.text) - len(by_title[p.title].text)) < 0.2 * len(p.text)
    ]
    rng.shuffle(matched)
    used = {p.title for p, _ in matched[:pairs]}
    others = [p for p in first if p.title not in used and count_a[p.title] == 1 and p.title not in by_title]
    rng.shuffle(others)
    docs: list[Doc] = []
    for k, (a, b) in enumerate(matched[:pairs]):
        gid = f"s{seed}-p{k}"
        docs.append(Doc(f"{gid}-a", a.title, a.text, gid))
        docs.append(Doc(f"{gid}-b", b.title, b.text, gid))
    for k, p in enumerate(others[:singles]):
        docs.append(Doc(f"s{seed}-q{k}", p.title, p.text, f"s{seed}-q{k}"))
    rng.shuffle(docs)
    return docs

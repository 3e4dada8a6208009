"""The People's Daily reprint set of ``bench.ingest --corpus news``: every article once, the chosen ones with their
reprints in their group, the truth its P/R rows are scored against."""

import pytest

from bench.corpus import Doc, news_corpus
from neardup.evaluation.corpus import load_peoples_daily


def _bigrams(text: str) -> set[str]:
    return {text[i : i + 2] for i in range(len(text) - 1)}


def test_news_corpus_groups_every_article_with_its_reprints() -> None:
    articles = {a.text for a in load_peoples_daily()}
    docs = news_corpus(seed=1, groups=10)
    assert len({d.id for d in docs}) == len(docs)
    members: dict[str, list[Doc]] = {}
    for d in docs:
        members.setdefault(d.group, []).append(d)
    assert len(members) == len(articles)  # every article once, as an original or a singleton
    reprinted = {g: m for g, m in members.items() if len(m) > 1}
    assert len(reprinted) == 10
    for group in reprinted.values():
        assert 3 <= len(group) <= 5  # the original and 2-4 variants
        (original,) = [d for d in group if d.text in articles]
        for variant in group:
            # a reprint keeps much of its article (edits and boilerplate change the rest)
            assert len(_bigrams(original.text) & _bigrams(variant.text)) > 0.3 * len(_bigrams(original.text))


def test_news_corpus_refuses_a_share_it_cannot_draw() -> None:
    with pytest.raises(ValueError, match="groups must be between 1 and"):
        news_corpus(groups=0)
    with pytest.raises(ValueError, match="groups must be between 1 and"):
        news_corpus(groups=10**6)

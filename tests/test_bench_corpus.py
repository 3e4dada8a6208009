"""The People's Daily reprint set of ``bench.ingest --corpus news``: every article in one group, the reprinted ones
with their variants, the truth its P/R notes are scored against."""

import pytest

from bench.corpus import NEWS_GROUPS, Doc, news_corpus
from neardup.evaluation.corpus import Article, load_peoples_daily
from neardup.evaluation.variants import KEPT, kept


def _sources(doc: Doc, by_first: dict[str, list[Article]]) -> list[Article]:
    """The articles whose paragraphs ``doc`` holds whole and in order (itself, or itself in boilerplate)."""
    lines = doc.text.split("\n")
    found = []
    for at, line in enumerate(lines):
        for article in by_first.get(line, []):
            if tuple(lines[at : at + len(article.paragraphs)]) == article.paragraphs:
                found.append(article)
    return found


def test_news_corpus_puts_every_article_in_one_group_with_its_reprints() -> None:
    articles = load_peoples_daily()
    by_first: dict[str, list[Article]] = {}
    for article in articles:
        by_first.setdefault(article.paragraphs[0], []).append(article)
    docs = news_corpus()
    assert len({d.id for d in docs}) == len(docs)
    members: dict[str, list[Doc]] = {}
    for d in docs:
        members.setdefault(d.group, []).append(d)
    # the unedited copies (an original, a singleton, either in boilerplate) name each article's group
    group_of: dict[str, set[str]] = {}
    for d in docs:
        for article in _sources(d, by_first):
            group_of.setdefault(article.text, set()).add(d.group)
    assert len(group_of) == len(articles)
    assert all(len(groups) == 1 for groups in group_of.values())
    assert len(members) == len(articles)
    reprinted = {g: m for g, m in members.items() if len(m) > 1}
    assert len(reprinted) == NEWS_GROUPS
    source = {next(iter(groups)): text for text, groups in group_of.items()}
    for group, copies in reprinted.items():
        assert 3 <= len(copies) <= 5  # the original and 2-4 variants
        runs = {source[group][k : k + 8] for k in range(0, len(source[group]) - 8, 4)}
        for copy in copies:
            # a reprint keeps some of its article, never only a source and an editor line
            assert kept([source[group]], [copy.text]) >= KEPT
            assert any(run in copy.text for run in runs)


def test_news_corpus_refuses_a_share_it_cannot_draw() -> None:
    with pytest.raises(ValueError, match="groups must be between 1 and"):
        news_corpus(groups=0)
    with pytest.raises(ValueError, match="groups must be between 1 and"):
        news_corpus(groups=10**6)

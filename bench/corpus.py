"""A benchmark corpus of real Chinese text at up to millions of documents, duplicate structure known.

Sentences of People's Daily (January 1998) and lines of the chinese-poetry collections (Tang and Song
poems, Song lyrics) are the material. An *original* is a run of them drawn at random: news-like (3–6
paragraphs of 2–4 sentences) or poem-like (8–16 lines). One original in ten also carries one of 200
recurring paragraphs, as round-ups and reprints do, so some block buckets are crowded with documents
that are not duplicates. A share of the documents are *variants* of an earlier original, made by the
reprint-style transforms of :mod:`neardup.evaluation.variants`, keeping at least half of its text
(:func:`variant`); a document's ``group`` is the id of the original it came from (its own id for an
original).

The stock of material is finite, so at a million documents every sentence recurs in many originals. The
groups stay the truth only if a unit two originals share by chance is a small part of each: an original
has at least six sentences or eight lines, and a recurring paragraph is at most a quarter of the original
that carries it (:func:`_original`). Without these bounds, short originals sharing a sentence, and short
carriers of one recurring paragraph, are near-duplicates by their text while the groups count them apart
(``python -m bench.cluster_truth`` measures how far the groups hold).

The corpus is written to JSONL once (``$NEARDUP_HOME/bench/``, named by size, seed and generator) and read
back by every bench.

Beside it, :func:`news_corpus` gives the whole articles themselves with reprints of them: a few thousand real
news documents, for benches whose figures depend on what a document is like (``bench.ingest --corpus news``).

Run: ``python -m bench.corpus --docs 1000000`` (prints the path)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import random
import re
import tarfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from neardup.config import Settings
from neardup.evaluation.corpus import load_peoples_daily, load_tang_editions
from neardup.evaluation.sets import news_set
from neardup.evaluation.variants import make_variant
from neardup.ingest.fingerprint import Fingerprinter, Record
from neardup.ingest.pool import FingerprintPool

SEED = 2026
#: in the corpus file's name: what a generator change makes is another corpus
GENERATOR = 2
DUPLICATE_SHARE = 0.25
RECURRING = 200
_SENTENCE_RE = re.compile(r"(?<=[。！？；])")
_LYRICS = re.compile(r"dist/(quantangshi/poet\.song\.\d+|songci/ci\.song\.\d+)\.json$")


@dataclass(frozen=True)
class Doc:
    id: str
    text: str
    group: str

    def as_json(self) -> str:
        return json.dumps({"id": self.id, "text": self.text, "group": self.group}, ensure_ascii=False)


def _material(cache: Path) -> tuple[list[str], list[str], list[str]]:
    """(news sentences, poem lines, recurring paragraphs)."""
    articles = load_peoples_daily(min_chars=0, max_chars=10**9)
    paragraphs = [p for a in articles for p in a.paragraphs if len(p) >= 20]
    sentences = [s for p in paragraphs for s in _SENTENCE_RE.split(p) if len(s) >= 8]
    first, second = load_tang_editions(cache)
    lines = [line for poem in first + second for line in _SENTENCE_RE.split(poem.text) if len(line) >= 5]
    archive = next(cache.glob("chinese-poetry-*.tgz"))
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if not _LYRICS.search(member.name):
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            for item in json.load(handle):
                lines += [line for line in item.get("paragraphs", []) if len(line) >= 5]
    recurring = random.Random(SEED).sample([p for p in paragraphs if 60 <= len(p) <= 200], RECURRING)
    return sentences, lines, recurring


def _original(rng: random.Random, sentences: list[str], lines: list[str], recurring: list[str]) -> list[str]:
    """Paragraphs of a new original, large enough that any one unit of the stock it shares with another
    original by chance (a sentence, a line, a recurring paragraph) is a small part of both."""
    if rng.random() < 0.5:
        paras = ["".join(rng.choices(sentences, k=rng.randint(2, 4))) for _ in range(rng.randint(3, 6))]
    else:
        paras = ["".join(rng.choices(lines, k=rng.randint(8, 16)))]
    if rng.random() < 0.1:
        size = sum(map(len, paras))
        fitting = [p for p in recurring if 3 * len(p) <= size]  # at most a quarter of the whole
        if fitting:
            paras.insert(rng.randint(0, len(paras)), rng.choice(fitting))
    return paras


#: the least share of an original's character bigrams a variant of the corpus keeps
VARIANT_KEEPS = 0.5


def variant(paras: list[str], rng: random.Random) -> list[str]:
    """A reprint-style variant of an original that keeps at least half of its text (its character bigrams): a
    stricter bound than :func:`~neardup.evaluation.variants.make_variant`'s default, so that a variant is a
    duplicate by its text."""
    return make_variant(paras, rng, least=VARIANT_KEEPS)[0]


def _material_here() -> tuple[list[str], list[str], list[str]]:
    return _material(Settings.from_env().home / "npm")


def recurring_paragraphs() -> list[str]:
    """The paragraphs one original in ten carries (the same for every seed)."""
    return _material_here()[2]


def generate(n: int, seed: int = SEED) -> Iterator[Doc]:
    """``n`` documents; the same ``n`` and ``seed`` give the same documents."""
    sentences, lines, recurring = _material_here()
    rng = random.Random(seed)
    originals: list[tuple[str, list[str]]] = []
    for k in range(n):
        doc_id = f"d{k:07d}"
        if originals and rng.random() < DUPLICATE_SHARE:
            group, paras = originals[rng.randrange(len(originals))]
            yield Doc(doc_id, "\n".join(variant(paras, rng)), group)
        else:
            paras = _original(rng, sentences, lines, recurring)
            originals.append((doc_id, paras))
            yield Doc(doc_id, "\n".join(paras), doc_id)


def corpus_path(n: int, seed: int = SEED) -> Path:
    """The JSONL file of ``n`` documents, written on first use."""
    path = Settings.from_env().home / "bench" / f"corpus-{n}-s{seed}-g{GENERATOR}.jsonl"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        with open(partial, "w", encoding="utf-8") as out:
            for doc in generate(n, seed):
                out.write(doc.as_json() + "\n")
        partial.replace(path)
    return path


def read_corpus(path: Path, limit: int | None = None) -> list[Doc]:
    docs: list[Doc] = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if limit is not None and len(docs) >= limit:
                break
            obj = json.loads(line)
            docs.append(Doc(obj["id"], obj["text"], obj["group"]))
    return docs


#: the People's Daily reprint set (:func:`news_corpus`): which draw, and how many articles get reprints
NEWS_SEED = 1
NEWS_GROUPS = 1500


def news_corpus(seed: int = NEWS_SEED, groups: int = NEWS_GROUPS) -> list[Doc]:
    """Real news at full length: the People's Daily (January 1998) articles of 300 to 6,000 characters
    (:func:`~neardup.evaluation.corpus.load_peoples_daily`), each once, ``groups`` of them with 2–4 reprint variants
    (:func:`neardup.evaluation.sets.news_set`: edited copies, a third in a site's boilerplate); half of the other
    articles wear boilerplate too. Titles are left out. Unlike :func:`generate`'s, these documents are whole articles,
    and there are only a few thousand of them."""
    articles = load_peoples_daily()
    if not 0 < groups <= len(articles):
        raise ValueError(f"groups must be between 1 and {len(articles)}, the number of articles, not {groups}")
    return [Doc(d.id, d.text, d.group) for d in news_set(articles, seed, groups=groups, singles=len(articles) - groups)]


def corpus_records(docs: Sequence[Doc]) -> list[Record]:
    """Fingerprints of corpus documents, computed once (2 processes) and kept beside the corpus, by
    fingerprint version and the documents' own digest."""
    version = Fingerprinter.default().version
    digest = hashlib.blake2b(digest_size=8)
    for doc in docs:
        digest.update(doc.text.encode("utf-8") + b"\0")
    path = Settings.from_env().home / "bench" / f"records-{len(docs)}-{digest.hexdigest()}-{version}.pickle"
    if path.exists():
        with open(path, "rb") as handle:
            cached: list[Record] = pickle.load(handle)
            return cached
    with FingerprintPool(2) as pool:
        records: list[Record] = pool.fingerprint([(d.text, None) for d in docs])
    with open(path.with_suffix(".partial"), "wb") as handle:
        pickle.dump(records, handle, protocol=pickle.HIGHEST_PROTOCOL)
    path.with_suffix(".partial").replace(path)
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    print(corpus_path(args.docs, args.seed))


if __name__ == "__main__":
    main()

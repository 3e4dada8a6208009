"""jieba's dictionary and HMM tables, as the Python side computes them, for the Java port of the segmenter.

The Java ``PreciseCut`` must pick exactly the routes :class:`~neardup.ingest.precise.PreciseCut` picks, and
routes tie (``苦苦苦``): a last-bit difference in one log-probability would flip a tie. glibc's ``log`` and
Java's ``Math.log`` may differ in that bit, so Java computes no logarithm at all: every score is written here
as Python computed it (``repr``, which ``Double.parseDouble`` reads back exactly).

Files written under ``directory/jieba/`` (UTF-8, ``\\n``-terminated lines, tab-separated fields):

``dictionary.tsv``
    ``word, logp, tag`` for every key of ``PreciseCut.logp``: ``logp`` is empty for a mere prefix of a word
    (jieba's frequency 0), ``tag`` is the word's jieba dictionary tag (``Segmenter.tags``) or empty. Rows are
    sorted by (length, word), which numbers a trie breadth-first; the keys are prefix-closed (jieba adds every
    prefix), so each word's parent row comes before it. Java relies on both and checks them.
``constants.tsv``
    ``name, value``: ``unknown`` (``PreciseCut.unknown``, the score of a character jieba does not know) and
    ``min_float`` (``finalseg.MIN_FLOAT``, the HMM's score of an unseen emission or transition).
``hmm_start.tsv``, ``hmm_trans.tsv``, ``hmm_emit.tsv``
    ``finalseg.start_P`` (``state, logp``), ``trans_P`` (``from, to, logp``), ``emit_P`` (``state, char, logp``).
``force_split.txt``
    ``finalseg.Force_Split_Words``, one word a line (empty unless someone called ``add_force_split``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from jieba import finalseg

from neardup.ingest.precise import PREFIX_ONLY, PreciseCut
from neardup.ingest.segment import Segmenter

__all__ = ["export"]


def export(directory: Path) -> list[Path]:
    """Write jieba's tables under ``directory/jieba/``; return the files written."""
    target = directory / "jieba"
    target.mkdir(parents=True, exist_ok=True)
    segmenter = Segmenter.default()
    cut = PreciseCut.of(segmenter.tokenizer)
    return [
        _write(target / "dictionary.tsv", _dictionary_rows(cut.logp, segmenter.tags)),
        _write(target / "constants.tsv", [("unknown", repr(cut.unknown)), ("min_float", repr(finalseg.MIN_FLOAT))]),
        _write(target / "hmm_start.tsv", [(s, repr(p)) for s, p in sorted(finalseg.start_P.items())]),
        _write(
            target / "hmm_trans.tsv",
            [(a, b, repr(p)) for a, row in sorted(finalseg.trans_P.items()) for b, p in sorted(row.items())],
        ),
        _write(
            target / "hmm_emit.tsv",
            [(s, ch, repr(p)) for s, row in sorted(finalseg.emit_P.items()) for ch, p in sorted(row.items())],
        ),
        _write(target / "force_split.txt", [(w,) for w in sorted(finalseg.Force_Split_Words)]),
    ]


def _dictionary_rows(logp: Mapping[str, float], tags: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """One row per dictionary key, breadth-first trie order; raises on anything the Java trie cannot hold."""
    for word in tags:
        if logp.get(word, PREFIX_ONLY) == PREFIX_ONLY:
            raise ValueError(
                f"jieba tag for {word!r}, which is not a dictionary word: the Java trie keeps tags on words"
            )
    rows: list[tuple[str, str, str]] = []
    for word in sorted(logp, key=lambda w: (len(w), w)):
        if not word or any(ord(ch) > 0xFFFF for ch in word):
            # the Java trie steps by UTF-16 unit; a word beyond the BMP would need prefixes jieba never adds
            raise ValueError(f"jieba dictionary word {word!r} is empty or outside the BMP")
        if word[:-1] and word[:-1] not in logp:
            raise ValueError(f"jieba dictionary is not prefix-closed: {word!r} has no {word[:-1]!r}")
        score = logp[word]
        rows.append((word, "" if score == PREFIX_ONLY else repr(score), tags.get(word, "")))
    return rows


def _write(path: Path, rows: Iterable[tuple[str, ...]]) -> Path:
    lines: list[str] = []
    for row in rows:
        for field in row:
            if any(ch in field for ch in "\t\n\r"):
                raise ValueError(f"{path.name}: field {field!r} holds a tab or line break")
        lines.append("\t".join(row) + "\n")
    # newline="" keeps "\n" as is on every platform: Java splits on "\n" only
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.writelines(lines)
    return path

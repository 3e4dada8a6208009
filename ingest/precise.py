"""jieba's precise mode (``Tokenizer.lcut`` with HMM), word for word, in about half its time.

jieba builds a DAG of every dictionary word starting at each character, then walks it again to
pick the most probable route, taking ``log`` of each word's frequency on every visit. Here both
steps are one right-to-left pass over a table of precomputed log-probabilities, with jieba's
own tie-break (the longer word wins a tie). Runs of single characters the dictionary does not
know go to jieba's HMM exactly as jieba sends them (through :func:`~.hmm.hmm_cut`, an exact and
faster copy of ``jieba.finalseg.cut``). So the output is ``lcut``'s: tests compare the two on the
whole news corpus, a sample of both Tang-poem editions and random strings. The speed is what pays
for the weights: fingerprinting as a whole runs at about ``lcut``'s speed (bench/results/throughput.md).

>>> import jieba
>>> tokenizer = jieba.Tokenizer()
>>> cut = PreciseCut.of(tokenizer)
>>> text = "北京大学的学生，今天发表了2篇论文 neardup v1.0！"
>>> cut.lcut(text) == tokenizer.lcut(text)
True
>>> cut.lcut("他来到了网易杭研大厦")
['他', '来到', '了', '网易', '杭研', '大厦']

Both routes through 苦苦苦 score the same; jieba, and so this, takes the longer first word:

>>> cut.lcut("苦苦苦")
['苦苦', '苦']
"""

from __future__ import annotations

from dataclasses import dataclass
from math import log

import jieba

from .hmm import hmm_cut

__all__ = ["PREFIX_ONLY", "PreciseCut"]

#: the score of a prefix of some dictionary word that is not a word itself (jieba stores it with frequency 0);
#: never a log-probability, which is never positive
PREFIX_ONLY = 1.0


@dataclass(frozen=True)
class PreciseCut:
    """A tokenizer's dictionary as log-probabilities, and precise-mode cutting over it.

    ``logp`` maps every dictionary word to ``log(freq) - log(total)`` and every mere prefix to
    ``PREFIX_ONLY`` (a log-probability is never positive); ``unknown`` is what jieba scores a
    character the dictionary lacks. It is a snapshot: words added to the tokenizer later are not seen.
    """

    logp: dict[str, float]
    unknown: float

    @classmethod
    def of(cls, tokenizer: jieba.Tokenizer) -> PreciseCut:
        """The dictionary of ``tokenizer`` (initialised here if it is not yet)."""
        tokenizer.check_initialized()
        freq: dict[str, int] = tokenizer.FREQ
        logtotal = log(tokenizer.total)
        # the same float operations, in the same order, as jieba's calc(): log(f) - logtotal + next
        logp = {word: (log(f) - logtotal if f else PREFIX_ONLY) for word, f in freq.items()}
        return cls(logp, log(1) - logtotal)

    def lcut(self, text: str) -> list[str]:
        """The words of ``text``, exactly as ``tokenizer.lcut(text)`` (precise mode, HMM on)."""
        out: list[str] = []
        han, skip = jieba.re_han_default, jieba.re_skip_default
        for block in han.split(text):
            if not block:
                continue
            if han.match(block):
                self._cut_block(block, out)
                continue
            for piece in skip.split(block):
                if skip.match(piece):
                    out.append(piece)
                else:
                    out.extend(piece)
        return out

    def _route(self, block: str) -> list[int]:
        """For each position, where the best route's next word ends (inclusive)."""
        get, n = self.logp.get, len(block)
        score = [0.0] * (n + 1)
        end = list(range(n))
        for start in range(n - 1, -1, -1):
            best: float | None = None
            stop = start
            lp = get(block[start])
            while lp is not None:
                if lp != PREFIX_ONLY:
                    candidate = lp + score[stop + 1]
                    if best is None or candidate >= best:  # ties go to the longer word, as in jieba
                        best, end[start] = candidate, stop
                stop += 1
                if stop == n:
                    break
                lp = get(block[start : stop + 1])
            score[start] = self.unknown + score[start + 1] if best is None else best
        return end

    def _cut_block(self, block: str, out: list[str]) -> None:
        end = self._route(block)
        n, at, single_from = len(block), 0, -1
        while at < n:
            nxt = end[at] + 1
            if nxt - at == 1:
                if single_from < 0:
                    single_from = at
            else:
                if single_from >= 0:
                    self._singles(block[single_from:at], out)
                    single_from = -1
                out.append(block[at:nxt])
            at = nxt
        if single_from >= 0:
            self._singles(block[single_from:], out)

    def _singles(self, run: str, out: list[str]) -> None:
        """A run of one-character words: the HMM may join them unless the run is itself a word."""
        if len(run) == 1:
            out.append(run)
        elif self.logp.get(run, PREFIX_ONLY) == PREFIX_ONLY:  # not a dictionary word
            out.extend(hmm_cut(run))
        else:
            out.extend(run)

"""Pairwise precision / recall / F1 of a clustering against labelled groups.

A pair of documents is positive when both carry the same group label; predicted positive when both
land in the same cluster. Counting is by cluster sizes, so it is exact and fast.

>>> s = pairwise_scores(truth=["a", "a", "b", "c"], predicted=[0, 0, 0, 3])
>>> (s.tp, s.fp, s.fn), round(s.precision, 3), s.recall
((1, 2, 0), 0.333, 1.0)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

__all__ = ["Scores", "pairwise_scores"]


@dataclass(frozen=True)
class Scores:
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def _pairs(counts: Counter[Hashable]) -> int:
    return sum(c * (c - 1) // 2 for c in counts.values())


def pairwise_scores(truth: Sequence[Hashable], predicted: Sequence[Hashable]) -> Scores:
    if len(truth) != len(predicted):
        raise ValueError("truth and predicted differ in length")
    true_pairs = _pairs(Counter(truth))
    pred_pairs = _pairs(Counter(predicted))
    tp = _pairs(Counter(zip(truth, predicted, strict=True)))
    return Scores(tp, pred_pairs - tp, true_pairs - tp)

"""Ranking candidate pairs in bounded memory (:mod:`neardup.ingest.pairs`): the same pairs whatever the
memory budget, and the ranking rule checked against a plain count over every pair."""

from __future__ import annotations

import os
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.ingest import pairs as pairs_module
from neardup.ingest.cluster import iter_candidate_pairs
from neardup.ingest.pairs import top_pairs

Chunks = list[tuple[np.ndarray, np.ndarray]]


def _reference(chunks: Chunks, max_candidates: int, min_shared: int) -> list[tuple[int, int]]:
    """The rule spelled out: count each pair over the chunks, then per later document the most shared,
    ties to the larger (nearer) earlier document."""
    shared: Counter[tuple[int, int]] = Counter()
    for a, b in chunks:
        for x, y in zip(a.tolist(), b.tolist(), strict=True):
            shared[(min(x, y), max(x, y))] += 1
    by_later: dict[int, list[tuple[int, int]]] = {}
    for (i, j), c in shared.items():
        if c >= min_shared:
            by_later.setdefault(j, []).append((i, c))
    kept = []
    for j, options in by_later.items():
        options.sort(key=lambda o: (-o[1], -o[0]))
        kept += [(i, j) for i, _ in options[:max_candidates]]
    return sorted(kept)


def _chunks(fps: np.ndarray) -> Chunks:
    return list(iter_candidate_pairs(fps, max_bucket=8, window=6))


@settings(max_examples=30, deadline=None)
@given(
    st.integers(2, 300),
    st.integers(1, 4),
    st.integers(1, 5),
    st.integers(1, 3),
    st.integers(1, 64),
    st.integers(0, 2**32),
)
def test_top_pairs_follow_the_rule_whatever_the_budget(
    n: int, seeds: int, max_candidates: int, min_shared: int, memory_pairs: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    # few distinct block values, so buckets are crowded and pairs repeat across tables
    fps = rng.choice(np.array([0, 0xFFFF, 0x0F0F_0F0F_0F0F_0F0F, 2**64 - 1], dtype=np.uint64), size=(n, seeds))
    fps ^= rng.integers(0, 4, size=(n, seeds), dtype=np.uint64) << np.uint64(int(rng.integers(0, 62)))
    chunks = _chunks(fps)
    per_doc = int(rng.integers(1, 50))
    i, j = top_pairs(chunks, n, max_candidates, min_shared, max_pairs_per_doc=per_doc, memory_pairs=memory_pairs)
    assert list(zip(i.tolist(), j.tolist(), strict=True)) == _reference(chunks, max_candidates, min_shared)


def test_spilled_partitions_are_read_back_and_removed(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setattr(pairs_module.tempfile, "tempdir", str(tmp_path))
    rng = np.random.default_rng(5)
    fps = rng.integers(0, 2**64 - 1, size=(3000, 4), dtype=np.uint64, endpoint=True) & np.uint64(0x0003_0003_0003_0003)
    chunks = _chunks(fps)
    total = sum(a.size for a, _ in chunks)
    in_memory = top_pairs(chunks, 3000, 5, 1)
    spilled = top_pairs(chunks, 3000, 5, 1, max_pairs_per_doc=64, memory_pairs=total // 10)
    assert total > 50_000
    assert all(np.array_equal(x, y) for x, y in zip(in_memory, spilled, strict=True))
    assert in_memory[0].size > 0
    assert os.listdir(tmp_path) == []  # the temporary files are gone


def test_no_pairs() -> None:
    i, j = top_pairs([], 0, 5)
    assert i.size == j.size == 0
    i, j = top_pairs([(np.zeros(0, np.int64), np.zeros(0, np.int64))], 10, 5)
    assert i.size == j.size == 0

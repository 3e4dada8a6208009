"""`neardup cluster` as a user runs it: real People's Daily text with planted reprints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.metrics import pairwise_scores
from neardup.evaluation.sets import news_set


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "neardup", *args], capture_output=True, text=True, timeout=600, check=False
    )


@pytest.fixture(scope="module")
def news_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    docs = news_set(load_peoples_daily(), seed=11, groups=60, singles=120)
    path = tmp_path_factory.mktemp("news") / "news.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for d in docs:
            out.write(json.dumps({"id": d.id, "title": d.title, "text": d.text}, ensure_ascii=False) + "\n")
    return path, {d.id: d.group for d in docs}


def test_cluster_reaches_target_precision_and_recall(news_file: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    path, truth = news_file
    out = tmp_path / "out.jsonl"
    result = run("cluster", str(path), "-o", str(out), "--workers", "2")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == list(truth)
    assert all(set(r) >= {"id", "cluster", "fingerprint"} for r in rows)
    scores = pairwise_scores([truth[r["id"]] for r in rows], [r["cluster"] for r in rows])
    assert scores.precision >= 0.97
    assert scores.recall >= 0.9


def test_bad_line_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text('{"id": 1, "text": "第一篇文章的正文内容"}\n{"id": 2, "text": \n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    result = run("cluster", str(src), "-o", str(out))
    assert result.returncode == 2
    assert "line 2: not valid JSON" in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_skip_invalid_counts_bad_lines(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(
        '{"id": "a", "text": "第一篇文章的正文内容很长很长"}\n[1, 2]\n{"id": "b", "text": 5}\n'
        '{"id": "c", "text": "第一篇文章的正文内容很长很长"}\n',
        encoding="utf-8",
    )
    out = tmp_path / "out.jsonl"
    result = run("cluster", str(src), "-o", str(out), "--skip-invalid")
    assert result.returncode == 0, result.stderr
    assert "2 invalid lines skipped" in result.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["cluster"] for r in rows] == ["a", "a"]
    assert rows[1]["duplicate_of"] == "a"


def test_missing_input_file_is_a_clear_error(tmp_path: Path) -> None:
    result = run("cluster", str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "o.jsonl"))
    assert result.returncode == 2
    assert "cannot read" in result.stderr

"""The offline commands (:mod:`neardup.cli.offline`) as a user runs them: `neardup cluster` on real People's Daily
text with planted reprints, and on structured records with `--fields`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.metrics import pairwise_scores
from neardup.evaluation.record_sets import petition_rows
from neardup.evaluation.sets import news_set

BODY = (
    "小区门口的垃圾已经堆放了半个多月，一直无人清理，夏天气味很大，严重影响居民出行和环境卫生，希望有关部门尽快处理。"
)


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


def test_truth_field_scores_a_labelled_file_as_the_metric_does(
    news_file: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """A user's own labelled set: the labels ride in a field of each line; singletons may go without one."""
    path, truth = news_file
    sizes = {g: list(truth.values()).count(g) for g in set(truth.values())}
    labelled = tmp_path / "labelled.jsonl"
    with open(path, encoding="utf-8") as src, open(labelled, "w", encoding="utf-8") as out:
        for k, line in enumerate(src):
            doc = json.loads(line)
            group = truth[doc["id"]]
            if sizes[group] > 1:  # a group's label as a number on every other line: 7 and "7" are one label
                index = sorted(sizes).index(group)
                doc["group"] = index if k % 2 else str(index)
            out.write(json.dumps(doc, ensure_ascii=False) + "\n")
    out_path = tmp_path / "out.jsonl"
    result = run("cluster", str(labelled), "-o", str(out_path), "--truth-field", "group")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in out_path.read_text(encoding="utf-8").splitlines()]
    want = pairwise_scores([truth[r["id"]] for r in rows], [r["cluster"] for r in rows])
    line = result.stderr.splitlines()[-1]
    assert line.startswith(
        f"against group: precision {want.precision:.4f}, recall {want.recall:.4f}, F1 {want.f1:.4f} "
        f"(pairs: {want.tp + want.fn:,} labelled, {want.tp + want.fp:,} clustered, {want.tp:,} both)"
    ), line
    assert want.tp + want.fn > 100  # labelled pairs to score


@pytest.mark.parametrize(
    ("lines", "args", "message"),
    [
        (['{"id": "a", "text": "正文"}'], ["--truth-field", "grp"], "no line has a label in 'grp'"),
        (['{"id": "a", "text": "正文"}'], ["--truth-field", "text"], "--truth-field text is the field"),
        (
            ['{"id": "a", "text": "正文", "g": [1]}'],
            ["--truth-field", "g"],
            "line 1: the label in 'g' must be a string",
        ),
        (['{"id": "a", "text": "正文", "g": true}'], ["--truth-field", "g"], "not bool"),
        (['{"id": "a", "text": "正文", "g": ""}'], ["--truth-field", "g"], "no line has a label in 'g'"),
        ([""], ["--truth-field", "g"], "no line has a label in 'g'"),
    ],
)
def test_truth_field_refusals_write_nothing(tmp_path: Path, lines: list[str], args: list[str], message: str) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    result = run("cluster", str(src), "-o", str(out), *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert not out.exists() and "Traceback" not in result.stderr


def test_truth_field_may_not_be_a_field_the_configuration_reads(tmp_path: Path) -> None:
    src = tmp_path / "rows.jsonl"
    src.write_text('{"id": "a", "body": "正文", "category": "环保"}\n', encoding="utf-8")
    fields = tmp_path / "fields.toml"
    fields.write_text('[fields.body]\nmode = "text"\n[fields.category]\nmode = "value"\n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    result = run("cluster", str(src), "-o", str(out), "--fields", str(fields), "--truth-field", "category")
    assert result.returncode == 2 and "a field the configuration reads (value)" in result.stderr, result.stderr
    assert not out.exists()


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


def test_a_line_that_is_not_utf8_is_one_bad_line_and_a_leading_bom_is_dropped(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 (a line pasted from a Latin-1 file) spoil their line only, which is named and
    skipped like any bad line; the byte order mark some Windows editors write before line 1 is no part of it."""
    src = tmp_path / "in.jsonl"
    src.write_bytes(
        b"\xef\xbb\xbf"
        + json.dumps({"id": "a", "text": BODY}, ensure_ascii=False).encode("utf-8")
        + b"\n"
        + '{"id": "b", "text": "café"}\n'.encode("latin-1")
        + json.dumps({"id": "c", "text": BODY}, ensure_ascii=False).encode("utf-8")
        + b"\n"
    )
    out = tmp_path / "out.jsonl"
    refused = run("cluster", str(src), "-o", str(out))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert "line 2: not UTF-8 (byte 24) (use --skip-invalid to skip such lines)" in refused.stderr
    assert not out.exists()
    skipping = run("cluster", str(src), "-o", str(out), "--skip-invalid")
    assert skipping.returncode == 0, skipping.stderr
    assert "1 invalid lines skipped" in skipping.stderr and "skipped line 2: not UTF-8 (byte 24)" in skipping.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["id"], r["duplicate_of"]) for r in rows] == [("a", None), ("c", "a")]


def test_missing_input_file_is_a_clear_error(tmp_path: Path) -> None:
    result = run("cluster", str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "o.jsonl"))
    assert result.returncode == 2
    assert "cannot read" in result.stderr


def test_what_an_offline_command_cannot_do_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    good = tmp_path / "in.jsonl"
    good.write_text(json.dumps({"id": "a", "text": BODY}, ensure_ascii=False) + "\n", encoding="utf-8")
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes('{"id": "a", "text": "café"}\n'.encode("latin-1"))
    not_an_object = tmp_path / "fields.json"
    not_an_object.write_text("[1, 2]", encoding="utf-8")
    cases = [
        (("cluster", str(good), "-o", str(tmp_path / "no" / "dir" / "o.jsonl")), "cannot write"),
        (("idf", "fit", str(latin), "-o", str(tmp_path / "idf.txt")), "line 1: not UTF-8 (byte 24)"),
        (("idf", "fit", str(good), "-o", str(tmp_path / "no" / "dir" / "idf.txt")), "cannot write"),
        (("eval", "--seeds", "a,b"), "whole numbers separated by commas"),
        (("eval", "--seeds", ""), "whole numbers separated by commas"),
        (("eval", "--set", "news", "--groups", "-5"), "-5 is not in the range x>=0"),
        (("eval", "--set", "news", "--groups", "0", "--singles", "0"), "need documents"),
        (("eval", "--set", "news", "--output", str(tmp_path / "no" / "dir" / "e.json")), "cannot write"),  # not run
        (("cluster", str(good), "-o", str(tmp_path / "o.jsonl"), "--fields", str(not_an_object)), "must be an object"),
        (
            (
                "cluster",
                str(good),
                "-o",
                str(tmp_path / "o.jsonl"),
                "--fields",
                str(not_an_object),
                "--text-field",
                "x",
            ),
            "--text-field cannot be used with --fields",
        ),
    ]
    for args, message in cases:
        result = run(*args)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr[-400:])
        assert "Traceback" not in result.stderr, args
    assert not (tmp_path / "idf.txt").exists() and not (tmp_path / "o.jsonl").exists()
    assert not list(tmp_path.rglob("*.part"))
    # a bad line names the option that skips it, on every command that reads lines
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": 5}\n' + good.read_text(encoding="utf-8"), encoding="utf-8")
    refused = run("idf", "fit", str(bad), "-o", str(tmp_path / "idf.txt"))
    assert refused.returncode == 2 and "line 1" in refused.stderr and "--skip-invalid" in refused.stderr
    skipping = run("idf", "fit", str(bad), "-o", str(tmp_path / "idf.txt"), "--skip-invalid")
    assert skipping.returncode == 0 and "from 1 documents" in skipping.stderr, skipping.stderr


def test_bad_settings_in_the_environment_are_named() -> None:
    for setting, message in [
        ("NEARDUP_RECENT_SECONDS=inf", "NEARDUP_RECENT_SECONDS must be in (0, 3,600], not inf"),
        ("NEARDUP_MAX_CANDIDATES=-1", "NEARDUP_MAX_CANDIDATES must be in [1, 10,000], not -1"),
        ("NEARDUP_FLAG_IN_ES=ture", "NEARDUP_FLAG_IN_ES='ture' is not a boolean"),
        ("NEARDUP_ES_RETRIES=abc", "NEARDUP_ES_RETRIES='abc' is not a valid int"),
    ]:
        name, value = setting.split("=")
        result = subprocess.run(
            [sys.executable, "-m", "neardup", "es", "status"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=os.environ | {name: value},
        )
        assert result.returncode == 2 and message in result.stderr, (setting, result.stderr[-300:])


def test_cluster_command_with_fields(tmp_path: Path) -> None:
    cfg = tmp_path / "fields.toml"
    cfg.write_text(
        '[fields.complaint]\nmode = "text"\n[fields.category]\nmode = "value"\nweight = 2\n'
        '[fields.office]\nmode = "ignore"\n',
        encoding="utf-8",
    )
    office = "受理单位：朝阳区人民政府信访办公室；地址：朝阳区政府大院三号楼一层；办理时限：自受理之日起六十日内办结。"
    other = "公交车站的候车亭顶棚破损多日，下雨天乘客只能淋雨等车，希望交通部门尽快派人维修更换顶棚设施。"
    rows = [
        {"id": "a", "complaint": BODY, "category": "环保", "office": office},
        {"id": "b", "complaint": BODY.replace("半个多月", "半个月"), "category": "环保", "office": office},
        {"id": "c", "complaint": other, "category": "交通", "office": office},
        {"id": "d", "complaint": None, "category": None, "office": office},
    ]
    src = tmp_path / "rows.jsonl"
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    res = run("cluster", str(src), "-o", str(out), "--fields", str(cfg))
    assert res.returncode == 0, res.stderr
    got = {line["id"]: line for line in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert got["b"]["cluster"] == "a" and got["c"]["cluster"] == "c"
    assert got["d"]["status"] == "empty" and got["d"]["cluster"] == "d"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "complaint": 5}\n', encoding="utf-8")
    res = run("cluster", str(bad), "-o", str(out), "--fields", str(cfg))
    assert res.returncode == 2 and "line 1" in res.stderr and "complaint" in res.stderr
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(src.read_text(encoding="utf-8") + '{"id": "x", "complaint": 5}\n', encoding="utf-8")
    res = run("cluster", str(mixed), "-o", str(out), "--fields", str(cfg), "--skip-invalid")
    assert res.returncode == 0 and "1 invalid lines skipped" in res.stderr and "line 5" in res.stderr
    assert [json.loads(x)["id"] for x in out.read_text(encoding="utf-8").splitlines()] == ["a", "b", "c", "d"]


def test_cluster_with_fields_in_two_processes_equals_one(tmp_path: Path) -> None:
    cfg = tmp_path / "fields.toml"
    cfg.write_text(
        '[fields.complaint]\nmode = "text"\n[fields.category]\nmode = "value"\nweight = 2\n'
        '[fields.district]\nmode = "value"\nweight = 2\n[fields.office]\nmode = "ignore"\n',
        encoding="utf-8",
    )
    rows = petition_rows(load_peoples_daily(), seed=31, groups=120, singles=300)
    lines = [json.dumps({"id": r.id, **r.fields}, ensure_ascii=False) for r in rows]
    lines.insert(250, json.dumps({"id": "refused", "complaint": ["not", "text"]}))  # line 251, in the second batch
    src = tmp_path / "rows.jsonl"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    outputs = []
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}.jsonl"
        args = ["cluster", str(src), "-o", str(out), "--fields", str(cfg), "--skip-invalid", "--workers", workers]
        res = run(*args)
        assert res.returncode == 0, res.stderr
        assert "1 invalid lines skipped" in res.stderr and "line 251" in res.stderr and "complaint" in res.stderr
        outputs.append(out.read_text(encoding="utf-8"))
    assert outputs[0] == outputs[1]
    got = [json.loads(x) for x in outputs[1].splitlines()]
    assert [g["id"] for g in got] == [r.id for r in rows]
    groups = {r.id: r.group for r in rows}
    joined = [g for g in got if g["duplicate_of"] is not None]
    assert len(joined) > 100 and all(groups[g["id"]] == groups[g["duplicate_of"]] for g in joined)


def test_cluster_reads_standard_input_and_writes_standard_output(news_file: tuple[Path, dict[str, str]]) -> None:
    path, truth = news_file
    result = subprocess.run(
        [sys.executable, "-m", "neardup", "cluster", "-", "-o", "-"],
        input=path.read_bytes(),
        capture_output=True,
        timeout=600,
        check=False,
        env=os.environ | {"LC_ALL": "C", "PYTHONIOENCODING": ""},
    )
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.decode("utf-8").splitlines()]
    assert [r["id"] for r in rows] == list(truth) and not Path("-").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_an_output_that_is_a_link_or_no_regular_file_is_written_through_not_replaced(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": "a", "text": BODY}, ensure_ascii=False) + "\n", encoding="utf-8")
    real = tmp_path / "real.jsonl"
    real.write_text("old\n", encoding="utf-8")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    assert run("cluster", str(src), "-o", str(link)).returncode == 0
    assert link.is_symlink() and json.loads(real.read_text(encoding="utf-8"))["id"] == "a"
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    reader = subprocess.Popen(["cat", str(pipe)], stdout=subprocess.PIPE)
    try:
        assert run("cluster", str(src), "-o", str(pipe)).returncode == 0
        got, _ = reader.communicate(timeout=60)
    finally:
        reader.kill()
    assert json.loads(got)["id"] == "a" and pipe.is_fifo() and not (tmp_path / "pipe.part").exists()
    # /dev/stdout is the command's own output: appended to a log there, not put in the log's place
    log = tmp_path / "log.txt"
    log.write_text("earlier\n", encoding="utf-8")
    with open(log, "ab") as appended:
        done = subprocess.run(
            [sys.executable, "-m", "neardup", "cluster", str(src), "-o", "/dev/stdout"],
            stdout=appended,
            stderr=subprocess.PIPE,
            timeout=600,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    lines = log.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "earlier" and json.loads(lines[1])["id"] == "a", lines
    piped = subprocess.run(
        [sys.executable, "-m", "neardup", "cluster", str(src), "-o", "/dev/stdout"],
        capture_output=True,
        timeout=600,
        check=False,
    )
    assert piped.returncode == 0 and json.loads(piped.stdout)["id"] == "a", piped.stderr


def test_eval_only_runs_the_methods_named_on_every_set() -> None:
    result = run("eval", "--set", "metadata", "--seeds", "1", "--only", "μ=0.7")
    assert result.returncode == 0, result.stderr
    methods = [line.split("|")[1].strip() for line in result.stdout.splitlines() if line.startswith("| ")][1:]
    assert methods == ["combined μ=0.7, score ≥ 0.5"], result.stdout

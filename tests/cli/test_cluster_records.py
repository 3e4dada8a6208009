"""``neardup cluster --fields`` (:mod:`neardup.cli.offline`) on structured records."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.record_sets import petition_rows

BODY = (
    "小区门口的垃圾已经堆放了半个多月，一直无人清理，夏天气味很大，严重影响居民出行和环境卫生，希望有关部门尽快处理。"
)


def _neardup(*args: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "neardup", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


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
    res = _neardup("cluster", str(src), "-o", str(out), "--fields", str(cfg))
    assert res.returncode == 0, res.stderr
    got = {line["id"]: line for line in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert got["b"]["cluster"] == "a" and got["c"]["cluster"] == "c"
    assert got["d"]["status"] == "empty" and got["d"]["cluster"] == "d"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "complaint": 5}\n', encoding="utf-8")
    res = _neardup("cluster", str(bad), "-o", str(out), "--fields", str(cfg))
    assert res.returncode == 2 and "line 1" in res.stderr and "complaint" in res.stderr
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(src.read_text(encoding="utf-8") + '{"id": "x", "complaint": 5}\n', encoding="utf-8")
    res = _neardup("cluster", str(mixed), "-o", str(out), "--fields", str(cfg), "--skip-invalid")
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
        res = _neardup(*args, timeout=300)
        assert res.returncode == 0, res.stderr
        assert "1 invalid lines skipped" in res.stderr and "line 251" in res.stderr and "complaint" in res.stderr
        outputs.append(out.read_text(encoding="utf-8"))
    assert outputs[0] == outputs[1]
    got = [json.loads(x) for x in outputs[1].splitlines()]
    assert [g["id"] for g in got] == [r.id for r in rows]
    groups = {r.id: r.group for r in rows}
    joined = [g for g in got if g["duplicate_of"] is not None]
    assert len(joined) > 100 and all(groups[g["id"]] == groups[g["duplicate_of"]] for g in joined)

"""Structured records: per-field configuration, metadata MinHash, ``neardup cluster --fields``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.record_sets import petition_rows, template_text
from neardup.ingest.fingerprint import Fingerprinter
from neardup.ingest.metadata import meta_jaccard, meta_signature
from neardup.ingest.records import RecordConfig, RecordError
from neardup.ingest.verify import VerifyConfig, verify

FIELDS = RecordConfig.parse(
    {
        "fields": {
            "complaint": {"mode": "text"},
            "category": {"mode": "value", "weight": 2},
            "district": {"mode": "value", "weight": 2},
            "office": {"mode": "ignore"},
            "tags": {"mode": "set"},
        }
    }
)
BODY = (
    "小区门口的垃圾已经堆放了半个多月，一直无人清理，夏天气味很大，严重影响居民出行和环境卫生，希望有关部门尽快处理。"
)


def _neardup(*args: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "neardup", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def fp() -> Fingerprinter:
    return Fingerprinter.default()


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({}, r"non-empty \[fields\]"),
        ({"fields": {"a": {"mode": "blob"}}}, "mode must be one of"),
        ({"fields": {"a": {"mode": "text", "weight": -1}}}, "weight must be"),
        ({"fields": {"a": {"mode": "set"}}}, "at least one field"),
        ({"fields": {"a": {"mode": "text"}}, "mu": 2}, "mu must be"),
    ],
)
def test_bad_configurations_are_refused(data: dict[str, object], needle: str) -> None:
    with pytest.raises(RecordError, match=needle):
        RecordConfig.parse(data)


def test_missing_null_and_ignored_fields_contribute_nothing(fp: Fingerprinter) -> None:
    full = fp.fingerprint_record({"complaint": BODY, "category": "环保", "district": None, "office": "x" * 50}, FIELDS)
    same = fp.fingerprint_record({"complaint": BODY, "category": "环保", "other": "ignored", "office": "y"}, FIELDS)
    assert full.fingerprints == same.fingerprints and full.exact == same.exact
    other = fp.fingerprint_record({"complaint": BODY, "category": "交通"}, FIELDS)
    assert other.fingerprints != full.fingerprints  # the value field counts


def test_a_record_with_every_field_empty_is_flagged_not_matched(fp: Fingerprinter) -> None:
    a = fp.fingerprint_record({"complaint": "", "category": None, "tags": []}, FIELDS)
    b = fp.fingerprint_record({"complaint": "  ", "office": "x"}, FIELDS)
    assert a.status == b.status == "empty"
    assert verify(a, b, VerifyConfig()) is None


def test_wrong_types_name_the_field(fp: Fingerprinter) -> None:
    with pytest.raises(RecordError, match="complaint") as err:
        fp.fingerprint_record({"complaint": 42}, FIELDS)
    assert err.value.field == "complaint"
    with pytest.raises(RecordError, match="category"):
        fp.fingerprint_record({"complaint": BODY, "category": {"x": 1}}, FIELDS)


def test_the_field_configuration_is_part_of_the_version(fp: Fingerprinter) -> None:
    other = RecordConfig.parse({"fields": {"complaint": {"mode": "text"}}})
    assert fp.record_version(FIELDS) != fp.record_version(other) != fp.version


def test_metadata_decides_between_look_alike_texts(fp: Fingerprinter) -> None:
    """Two announcements in one long template (content Jaccard ~0.6): content alone joins them, the
    combined score keeps them apart unless their tags agree."""
    config = FIELDS.verify_config(VerifyConfig())
    sports = template_text("春季运动会报名", "报名时间为三月一日至三月十日，各学院统一组织报名")
    library = template_text("图书馆闭馆维修", "图书馆将于四月份闭馆维修一个月，请读者提前归还图书")
    a = fp.fingerprint_record({"complaint": sports, "tags": ["体育", "通知"]}, FIELDS)
    reprint = fp.fingerprint_record({"complaint": sports.replace("认真", "仔细"), "tags": ["体育", "通知"]}, FIELDS)
    look_alike = fp.fingerprint_record({"complaint": library, "tags": ["图书馆", "维修"]}, FIELDS)
    assert verify(a, look_alike, VerifyConfig()) is not None  # content alone would join them
    assert verify(a, look_alike, config) is None
    assert verify(a, reprint, config) is not None
    same_text_other_tags = fp.fingerprint_record({"complaint": sports, "tags": ["图书馆", "维修"]}, FIELDS)
    assert verify(a, same_text_other_tags, config) is not None  # identical text still wins at μ = 0.8


@settings(max_examples=40, deadline=None)
@given(
    st.sets(st.text(min_size=1, max_size=6), min_size=1, max_size=30),
    st.sets(st.text(min_size=1, max_size=6), max_size=30),
)
def test_meta_jaccard_estimates_the_set_jaccard(a: set[str], b: set[str]) -> None:
    sa, sb = meta_signature({"t": a}), meta_signature({"t": b})
    ta = {f"t={x}" for x in a if x.strip()}
    tb = {f"t={x}" for x in b if x.strip()}
    if sa is None or sb is None:
        assert not ta or not tb
        return
    true = len(ta & tb) / len(ta | tb)
    assert abs(meta_jaccard(sa, sb) - true) <= 0.25  # 128 permutations: a loose, always-true bound
    assert meta_jaccard(sa, sa) == 1.0


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


@pytest.mark.es
def test_an_index_with_a_field_configuration_takes_records_through_the_service(es_url: str, index_name: str) -> None:
    from neardup.service import create_app

    api = create_app({"es_url": es_url}).test_client()
    config = {
        "fields": {
            "complaint": {"mode": "text"},
            "category": {"mode": "value", "weight": 2},
            "tags": {"mode": "set"},
            "office": {"mode": "ignore"},
        },
    }
    put = api.put(f"/v1/indices/{index_name}", json=config)
    assert put.status_code == 200 and put.json["fields"]["category"] == {"mode": "value", "weight": 2}
    sports = template_text("春季运动会报名", "报名时间为三月一日至三月十日，各学院统一组织报名")
    library = template_text("图书馆闭馆维修", "图书馆将于四月份闭馆维修一个月，请读者提前归还图书")
    rows = [
        {"id": "a", "complaint": sports, "category": "通知", "tags": ["体育"], "office": "x"},
        {"id": "b", "complaint": sports.replace("认真", "仔细"), "category": "通知", "tags": ["体育"]},
        {"id": "c", "complaint": library, "category": "通知", "tags": ["图书馆"]},
        {"id": "d", "category": None, "complaint": None},
    ]
    resp = api.post(f"/v1/indices/{index_name}/documents", json=rows)
    assert resp.status_code == 200, resp.json
    items = {i["id"]: i for i in resp.json["items"]}
    assert items["b"]["duplicate_of"] == "a" and items["c"]["duplicate_of"] is None
    assert items["d"]["cluster"] == "d"
    dups = api.get(f"/v1/indices/{index_name}/documents/a/duplicates").json["items"]
    assert [d["id"] for d in dups] == ["b"]  # c shares the template, not the tags
    bad = api.post(f"/v1/indices/{index_name}/documents", json=[{"id": "e", "complaint": 5}])
    assert bad.status_code == 400 and "complaint" in bad.json["error"]["message"]

    # lookups of a posted record use the index's configuration; text is refused with a reason
    probe = {"complaint": sports.replace("统一", "集中"), "category": "通知", "tags": ["体育"]}
    looked = api.post(f"/v1/indices/{index_name}/duplicates", json={"record": probe})
    assert looked.status_code == 200, looked.json
    # c shares the template but not the tags
    assert {d["id"] for d in looked.json["items"]} == {"a", "b"} and looked.json["status"] == "ok"
    as_text = api.post(f"/v1/indices/{index_name}/duplicates", json={"text": sports})
    assert as_text.status_code == 400 and as_text.json["error"]["type"] == "record_expected"
    both = api.post(f"/v1/indices/{index_name}/duplicates", json={"text": sports, "record": probe})
    assert both.status_code == 400
    refused = api.post(f"/v1/indices/{index_name}/duplicates", json={"record": {"complaint": 5}})
    assert refused.status_code == 400 and "complaint" in refused.json["error"]["message"]

    # reconcile re-clusters the stored records with the same rules: nothing changes
    job = api.post(f"/v1/indices/{index_name}/reconcile").json
    done = _wait(api, job["id"])
    assert done["state"] == "done" and done["result"]["changed"] == 0 and done["result"]["documents"] == 4

    # the same rows put into an index without neardup, then deduped with the configuration
    from elasticsearch import Elasticsearch, helpers

    plain = index_name + "-plain"
    es = Elasticsearch(es_url)
    try:
        es.indices.create(index=plain)
        stored = [*rows, {"id": "e", "complaint": 5}]  # the configuration refuses e: counted, left as it is
        helpers.bulk(
            es, ({"_index": plain, "_id": r["id"], **{k: v for k, v in r.items() if k != "id"}} for r in stored)
        )
        es.indices.refresh(index=plain)
        assert api.put(f"/v1/indices/{plain}", json=config).status_code == 200
        done = _wait(api, api.post(f"/v1/indices/{plain}/dedupe", json={}).json["id"])
        assert done["state"] == "done" and done["result"]["fingerprinted"] == 4, done
        assert done["result"]["refused_records"] == 1
        es.indices.refresh(index=plain)
        hits = es.search(index=plain)["hits"]["hits"]
        got = {h["_id"]: h["_source"]["neardup"]["cluster"] for h in hits if "neardup" in h["_source"]}
        assert got == {i: items[i]["cluster"] for i in items}
        assert len(hits) == 5
    finally:
        es.indices.delete(index=plain, ignore_unavailable=True)
        es.options(ignore_status=404).indices.delete_index_template(name=f"neardup-{plain}")
        es.close()


def _wait(api: object, job_id: str) -> dict[str, object]:
    import time

    for _ in range(300):
        job = api.get(f"/v1/jobs/{job_id}").json  # type: ignore[attr-defined]
        if job["state"] != "running":
            return job  # type: ignore[no-any-return]
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not finish")

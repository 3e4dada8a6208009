"""Structured records (:mod:`neardup.ingest.records`): per-field configuration and its fingerprints."""

from __future__ import annotations

import pytest

from neardup.ingest.fingerprint import Fingerprinter
from neardup.ingest.records import RecordConfig, RecordError
from neardup.ingest.verify import VerifyConfig, verify

BODY = (
    "小区门口的垃圾已经堆放了半个多月，一直无人清理，夏天气味很大，严重影响居民出行和环境卫生，希望有关部门尽快处理。"
)


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


def test_missing_null_and_ignored_fields_contribute_nothing(fp: Fingerprinter, complaint_fields: RecordConfig) -> None:
    full = fp.fingerprint_record(
        {"complaint": BODY, "category": "环保", "district": None, "office": "x" * 50}, complaint_fields
    )
    same = fp.fingerprint_record(
        {"complaint": BODY, "category": "环保", "other": "ignored", "office": "y"}, complaint_fields
    )
    assert full.fingerprints == same.fingerprints and full.exact == same.exact
    other = fp.fingerprint_record({"complaint": BODY, "category": "交通"}, complaint_fields)
    assert other.fingerprints != full.fingerprints  # the value field counts


def test_a_record_with_every_field_empty_is_flagged_not_matched(
    fp: Fingerprinter, complaint_fields: RecordConfig
) -> None:
    a = fp.fingerprint_record({"complaint": "", "category": None, "tags": []}, complaint_fields)
    b = fp.fingerprint_record({"complaint": "  ", "office": "x"}, complaint_fields)
    assert a.status == b.status == "empty"
    assert verify(a, b, VerifyConfig()) is None


def test_wrong_types_name_the_field(fp: Fingerprinter, complaint_fields: RecordConfig) -> None:
    with pytest.raises(RecordError, match="complaint") as err:
        fp.fingerprint_record({"complaint": 42}, complaint_fields)
    assert err.value.field == "complaint"
    with pytest.raises(RecordError, match="category"):
        fp.fingerprint_record({"complaint": BODY, "category": {"x": 1}}, complaint_fields)


def test_the_field_configuration_is_part_of_the_version(fp: Fingerprinter, complaint_fields: RecordConfig) -> None:
    other = RecordConfig.parse({"fields": {"complaint": {"mode": "text"}}})
    assert fp.record_version(complaint_fields) != fp.record_version(other) != fp.version

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
        ({"fields": {"a": {"mode": "text", "wieght": 5}}}, "unknown key 'wieght'"),
        ({"fields": {"a": {"mode": "text", "title": "false"}}}, "title must be true or false"),
        ({"fields": {"a": {"mode": "text", "mu": 0.5}}}, "unknown key 'mu'"),  # TOML: mu after [fields.a]
        ({"fields": {"a": {"mode": "text"}}, "min_combine": 0.5}, "unknown key 'min_combine'"),
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


def test_a_stored_configuration_is_read_as_it_was_taken() -> None:
    stored = {"fields": {"a": {"mode": "text", "title": "yes", "note": "kept"}}, "comment": "x"}
    assert RecordConfig.parse(stored, strict=False).fields["a"].title


RECORD = {
    "name": "张伟",
    "city": "北京",
    "street": "朝阳路",
    "company": "华为",
    "title": "工程师",
    "issue": "退款一直未到账，客服电话无人接听",
    "tags": ["退款"],
}


def test_the_order_a_configuration_lists_its_fields_in_changes_nothing(fp: Fingerprinter) -> None:
    fields = {"name": "value", "city": "value", "street": "value", "company": "value", "title": "value"}
    forwards = {n: {"mode": m} for n, m in fields.items()} | {"issue": {"mode": "text"}, "tags": {"mode": "set"}}
    backwards = dict(reversed(list(forwards.items())))
    a = fp.fingerprint_record(RECORD, RecordConfig.parse({"fields": forwards}))
    b = fp.fingerprint_record(RECORD, RecordConfig.parse({"fields": backwards}))
    assert (a.version, a.fingerprints, a.exact, a.sketch.tolist()) == (
        b.version,
        b.fingerprints,
        b.exact,
        b.sketch.tolist(),
    )


def test_rows_of_placeholders_are_empty_not_one_cluster(fp: Fingerprinter) -> None:
    """A table's "no data" marks (``-``, ``/``, ``……``) hold no letters or digits; the field names of value features
    do not count as content."""
    config = RecordConfig.parse({"fields": {"body": {"mode": "text"}, "category": {"mode": "value"}}})
    rows = [{"body": "……", "category": "-"}, {"body": "。", "category": "/"}, {"category": "—"}]
    records = [fp.fingerprint_record(r, config) for r in rows]
    assert [r.status for r in records] == ["empty"] * 3
    assert verify(records[0], records[1], VerifyConfig()) is None
    kept = fp.fingerprint_record({"body": "……", "category": "环保"}, config)
    assert kept.status == "too_short"  # a value with content: matched by its exact hash, as before


def test_characters_of_neighbouring_fields_do_not_run_together(fp: Fingerprinter) -> None:
    config = RecordConfig.parse({"fields": {"a": {"mode": "text"}, "b": {"mode": "text"}}})
    one = fp.fingerprint_record({"a": "北京", "b": "上海"}, config)
    other = fp.fingerprint_record({"a": "北京上", "b": "海"}, config)
    assert one.status == other.status == "too_short" and one.exact != other.exact
    assert verify(one, other, VerifyConfig()) is None


def test_a_number_is_one_value_however_it_is_spelt(fp: Fingerprinter) -> None:
    config = RecordConfig.parse({"fields": {"issue": {"mode": "text"}, "n": {"mode": "value"}}})
    whole = fp.fingerprint_record({"issue": BODY, "n": 3}, config)
    assert whole.fingerprints == fp.fingerprint_record({"issue": BODY, "n": 3.0}, config).fingerprints
    assert whole.fingerprints != fp.fingerprint_record({"issue": BODY, "n": 3.5}, config).fingerprints


def test_set_elements_are_folded_as_values_are_and_objects_refused(fp: Fingerprinter) -> None:
    config = RecordConfig.parse({"fields": {"issue": {"mode": "text"}, "tags": {"mode": "set"}}})
    traditional = fp.fingerprint_record({"issue": BODY, "tags": ["體育", "ＮＢＡ"]}, config)
    simplified = fp.fingerprint_record({"issue": BODY, "tags": ["体育", "nba"]}, config)
    assert traditional.meta is not None and traditional.meta.tolist() == simplified.meta.tolist()
    assert fp.fingerprint_record({"issue": BODY, "tags": True}, config).meta.tolist() == (
        fp.fingerprint_record({"issue": BODY, "tags": [True]}, config).meta.tolist()
    )
    with pytest.raises(RecordError, match="tags"):
        fp.fingerprint_record({"issue": BODY, "tags": {"a": 1}}, config)


def test_a_field_without_letters_or_digits_changes_nothing(fp: Fingerprinter) -> None:
    config = RecordConfig.parse({"fields": {"a": {"mode": "text"}, "b": {"mode": "text"}, "c": {"mode": "text"}}})
    with_it = fp.fingerprint_record({"a": "北京", "b": "——", "c": "上海"}, config)
    without = fp.fingerprint_record({"a": "北京", "c": "上海"}, config)
    assert with_it.exact == without.exact


def test_a_set_given_as_one_string_is_split_at_commas_of_either_width(fp: Fingerprinter) -> None:
    config = RecordConfig.parse({"fields": {"issue": {"mode": "text"}, "tags": {"mode": "set"}}})
    ascii_commas = fp.fingerprint_record({"issue": BODY, "tags": "体育,足球"}, config)
    full_width = fp.fingerprint_record({"issue": BODY, "tags": "体育，足球"}, config)
    listed = fp.fingerprint_record({"issue": BODY, "tags": ["体育", "足球"]}, config)
    assert ascii_commas.meta.tolist() == full_width.meta.tolist() == listed.meta.tolist()

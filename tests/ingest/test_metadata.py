"""The metadata MinHash (:mod:`neardup.ingest.metadata`) and the combined score."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.evaluation.record_sets import template_text
from neardup.ingest.fingerprint import Fingerprinter
from neardup.ingest.metadata import meta_jaccard, meta_signature
from neardup.ingest.records import RecordConfig
from neardup.ingest.verify import VerifyConfig, verify


def test_metadata_decides_between_look_alike_texts(fp: Fingerprinter, complaint_fields: RecordConfig) -> None:
    """Two announcements in one long template (content Jaccard ~0.6): content alone joins them, the
    combined score keeps them apart unless their tags agree."""
    config = complaint_fields.verify_config(VerifyConfig())
    sports = template_text("春季运动会报名", "报名时间为三月一日至三月十日，各学院统一组织报名")
    library = template_text("图书馆闭馆维修", "图书馆将于四月份闭馆维修一个月，请读者提前归还图书")
    a = fp.fingerprint_record({"complaint": sports, "tags": ["体育", "通知"]}, complaint_fields)
    reprint = fp.fingerprint_record(
        {"complaint": sports.replace("认真", "仔细"), "tags": ["体育", "通知"]}, complaint_fields
    )
    look_alike = fp.fingerprint_record({"complaint": library, "tags": ["图书馆", "维修"]}, complaint_fields)
    assert verify(a, look_alike, VerifyConfig()) is not None  # content alone would join them
    assert verify(a, look_alike, config) is None
    assert verify(a, reprint, config) is not None
    same_text_other_tags = fp.fingerprint_record({"complaint": sports, "tags": ["图书馆", "维修"]}, complaint_fields)
    assert verify(a, same_text_other_tags, config) is not None  # identical text still wins at μ = 0.8


def test_metadata_on_one_side_only_leaves_the_decision_to_the_content(
    fp: Fingerprinter, complaint_fields: RecordConfig
) -> None:
    """A row whose tags are missing says nothing of whether they would agree: the content decides, as without any.
    Counted as a metadata score of 0, a reprint with content Jaccard below (min_combined) / μ was lost."""
    config = complaint_fields.verify_config(VerifyConfig())
    sports = template_text("春季运动会报名", "报名时间为三月一日至三月十日，各学院统一组织报名")
    tagged = fp.fingerprint_record({"complaint": sports, "tags": ["体育", "通知"]}, complaint_fields)
    edited = sports[: len(sports) * 6 // 10]  # a partial copy: content Jaccard about 0.59
    untagged = fp.fingerprint_record({"complaint": edited}, complaint_fields)
    plain = fp.fingerprint_record({"complaint": edited, "tags": ["体育", "通知"]}, complaint_fields)
    assert untagged.meta is None and tagged.meta is not None
    content = verify(tagged, untagged, VerifyConfig())
    assert content is not None and content.similarity < config.min_combined / config.mu
    assert verify(tagged, untagged, config) == content
    assert verify(untagged, tagged, config) == content
    assert verify(tagged, plain, config) is not None  # the same tags on both: the combined score, as before
    library = template_text("图书馆闭馆维修", "图书馆将于四月份闭馆维修一个月，请读者提前归还图书")
    look_alike = fp.fingerprint_record({"complaint": library}, complaint_fields)
    assert verify(tagged, look_alike, config) == verify(tagged, look_alike, VerifyConfig())


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

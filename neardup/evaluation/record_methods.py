"""Methods compared on the record sets: one text blob vs per-field weights (petition rows), and
content-only vs the combined content + metadata score (tagged documents)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from neardup.ingest.cluster import cluster_records
from neardup.ingest.fingerprint import Fingerprinter, Record
from neardup.ingest.records import RecordConfig
from neardup.ingest.verify import VerifyConfig

from .methods import Result
from .metrics import pairwise_scores
from .record_sets import LabelledRecord, blob_text

__all__ = ["PETITION_FIELDS", "TAGGED_FIELDS", "run_metadata_methods", "run_record_methods"]

#: the per-field configuration of the petition table (what a user would write in fields.toml)
PETITION_FIELDS = RecordConfig.parse(
    {
        "fields": {
            "complaint": {"mode": "text"},
            "notes": {"mode": "text"},
            "category": {"mode": "value", "weight": 2},
            "district": {"mode": "value", "weight": 2},
            "submitter": {"mode": "value", "weight": 1},
            "office": {"mode": "ignore"},
            "date": {"mode": "ignore"},
        }
    }
)
TAGGED_FIELDS = RecordConfig.parse(
    {"fields": {"text": {"mode": "text"}, "title": {"mode": "text", "title": True}, "tags": {"mode": "set"}}}
)


def _labels(records: Sequence[Record], verify: VerifyConfig) -> list[int]:
    labels: list[int] = cluster_records(records, lambda r: r.fingerprints, verify).cluster.tolist()
    return labels


def _run(
    rows: Sequence[LabelledRecord], methods: dict[str, Callable[[], list[int]]], only: Sequence[str] | None
) -> list[Result]:
    """The results of ``methods`` (of those whose name contains one of ``only``, if given) on ``rows``."""
    truth = [r.group for r in rows]
    out = []
    for name, run in methods.items():
        if only and not any(o in name for o in only):
            continue
        start = time.perf_counter()
        labels = run()
        out.append(Result(name, pairwise_scores(truth, labels), time.perf_counter() - start))
    return out


def run_record_methods(
    rows: Sequence[LabelledRecord], fp: Fingerprinter, only: Sequence[str] | None = None
) -> list[Result]:
    equal = RecordConfig(
        {n: type(s)(s.mode, 1.0, s.title) for n, s in PETITION_FIELDS.fields.items()}, PETITION_FIELDS.mu
    )
    everything = RecordConfig({n: type(s)("text", 1.0, False) for n, s in PETITION_FIELDS.fields.items()})
    verify = VerifyConfig()
    return _run(
        rows,
        {
            "one text blob (all fields, labelled)": lambda: _labels(
                [fp.fingerprint(blob_text(r.fields)) for r in rows], verify
            ),
            "  one text blob without the office notice": lambda: _labels(
                [fp.fingerprint(blob_text({k: v for k, v in r.fields.items() if k != "office"})) for r in rows],
                verify,
            ),
            "per-field weights (fields.toml: office/date ignored, values ×2)": lambda: _labels(
                [fp.fingerprint_record(r.fields, PETITION_FIELDS) for r in rows], verify
            ),
            "  per-field, every weight 1": lambda: _labels(
                [fp.fingerprint_record(r.fields, equal) for r in rows], verify
            ),
            "  every field as text (nothing ignored)": lambda: _labels(
                [fp.fingerprint_record(r.fields, everything) for r in rows], verify
            ),
        },
        only,
    )


def run_metadata_methods(
    docs: Sequence[LabelledRecord], fp: Fingerprinter, only: Sequence[str] | None = None
) -> list[Result]:
    records = [fp.fingerprint_record(d.fields, TAGGED_FIELDS) for d in docs]
    default = TAGGED_FIELDS.verify_config(VerifyConfig())
    methods: dict[str, Callable[[], list[int]]] = {
        "content only (text + title, sketch verify)": lambda: _labels(records, VerifyConfig()),
        f"combined μ={default.mu}, score ≥ {default.min_combined} (default)": lambda: _labels(records, default),
    }
    for mu, threshold in ((0.9, 0.6), (0.85, 0.55), (0.85, 0.6), (0.7, 0.5)):
        config = VerifyConfig(mu=mu, min_combined=threshold)
        methods[f"  combined μ={mu}, score ≥ {threshold}"] = lambda c=config: _labels(records, c)  # type: ignore[misc]
    return _run(docs, methods, only)

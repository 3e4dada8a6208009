"""Document order survives a round trip through doc values: Elasticsearch renders a ``date_nanos`` doc value
without the fraction's trailing zeros, which would put ``…00.12345678Z`` (earlier) after ``…00.123456789Z``."""

from __future__ import annotations

from elasticsearch import Elasticsearch

from neardup.es.client import setup_index
from neardup.ingest.fingerprint import Fingerprinter
from neardup.mappings import schema
from neardup.mappings.schema import Stored


def test_candidates_read_from_doc_values_keep_document_order(es: Elasticsearch, index_name: str) -> None:
    fp = Fingerprinter.default()
    rec = fp.fingerprint("人民日报记者从国家统计局获悉，今年前三季度国内生产总值同比增长，经济运行总体平稳。")
    setup_index(es, index_name)
    times = {"later": "2026-11-26T15:10:00.123456789Z", "earlier": "2026-11-26T15:10:00.123456780Z"}
    for doc_id, at in times.items():
        fields = schema.record_fields(rec) | {schema.CLUSTER: doc_id, schema.INDEXED_AT: at}
        es.index(index=index_name, id=doc_id, document={schema.ROOT: fields}, refresh=True)
    hits = es.search(index=index_name, docvalue_fields=schema.CANDIDATE_DOC_VALUES, source=False, size=10)["hits"][
        "hits"
    ]
    rendered = {h["_id"]: h["fields"][schema.path(schema.INDEXED_AT)][0] for h in hits}
    assert rendered["earlier"] == "2026-11-26T15:10:00.12345678Z"  # what makes this test necessary
    stored = {s.id: s for s in (Stored.from_doc_values(h, fp.version) for h in hits)}
    assert stored["earlier"].indexed_at == times["earlier"]
    assert stored["earlier"].order < stored["later"].order

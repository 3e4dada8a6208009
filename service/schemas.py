"""Request and response schemas; the OpenAPI description at ``/openapi.json`` is generated from them."""

from __future__ import annotations

from typing import Any

from apiflask import Schema
from apiflask.fields import Boolean, Dict, Float, Integer, List, Nested, String
from apiflask.validators import Length, OneOf, Range
from marshmallow import ValidationError, validates_schema

from neardup.es.browse import CLUSTER_COUNT_PRECISION, MAX_RESULT_WINDOW
from neardup.ingest.records import MAX_WEIGHT, MODES, FieldSpec, RecordConfig
from neardup.ingest.verify import VerifyConfig

__all__ = [
    "ClusterOut",
    "ClusterQuery",
    "ClustersOut",
    "ClustersQuery",
    "DedupeIn",
    "DocumentIn",
    "DocumentsOut",
    "DocumentsQuery",
    "DuplicatesIn",
    "DuplicatesOut",
    "DuplicatesQuery",
    "FingerprintIn",
    "FingerprintOut",
    "HealthOut",
    "IndexIn",
    "IndexOut",
    "JobOut",
    "SearchOut",
    "SearchQuery",
]


#: what a match's score is: the second check's measure (``ingest/verify.py``)
_SIMILARITY = (
    "the shingle-sketch Jaccard similarity of the two texts; in an index whose field configuration has set fields "
    "(mu < 1), when either record holds set values, the combined score mu·content + (1 − mu)·metadata Jaccard "
    "instead (content being that sketch similarity), which is what min_combined bounds"
)


class DocumentIn(Schema):
    """One document: ``id`` (optional, becomes the Elasticsearch ``_id``), ``title``, ``text``; any
    other fields are stored as given (``neardup`` is reserved)."""

    id = String(metadata={"description": "string or integer; generated when absent"})
    title = String(allow_none=True)
    text = String(required=True)


class DocumentsQuery(Schema):
    refresh = String(
        load_default="false",
        validate=OneOf(["true", "false", "wait_for"]),
        metadata={
            "description": "Elasticsearch's refresh for the write; flagging does not need it (the service "
            "remembers what it wrote moments ago); wait_for makes the documents searchable before the answer"
        },
    )
    keep_accepted = Boolean(
        load_default=False,
        data_key="partial",
        metadata={
            "description": "keep the items Elasticsearch accepts when it refuses others (default: all or nothing)"
        },
    )


class ItemOut(Schema):
    id = String()
    status = String(metadata={"description": "created, updated, error, or not_written (the batch was undone)"})
    cluster = String(allow_none=True)
    duplicate_of = String(allow_none=True)
    distance = Integer(allow_none=True)
    similarity = Float(allow_none=True, metadata={"description": f"to duplicate_of: {_SIMILARITY}"})
    error = String()


class DocumentsOut(Schema):
    errors = Boolean()
    items = List(Nested(ItemOut))
    took_ms = Integer()


class _LookupOptions(Schema):
    """What both lookups take (in the query string of a stored document's, in the body of a posted one's)."""

    max_distance = Integer(
        load_default=VerifyConfig.max_distance,
        validate=Range(0, 64),
        metadata={
            "description": "the Hamming distance within which a weak sketch agreement (near_jaccard) makes a match; "
            "a strong one (min_jaccard) matches at any distance, so items may lie farther"
        },
    )
    size = Integer(
        load_default=50,
        validate=Range(1, 1000),
        metadata={"description": "the most items returned; no more than the candidates read (NEARDUP_MAX_CANDIDATES)"},
    )


class DuplicatesQuery(_LookupOptions):
    pass


class DuplicatesIn(_LookupOptions):
    """``text`` (and ``title``) for an index of documents; ``record`` for an index with a field configuration;
    ``max_distance`` and ``size`` in the body too."""

    title = String(allow_none=True)
    text = String()
    record = Dict(keys=String(), metadata={"description": "a structured record, read by the index's fields"})

    @validates_schema
    def _text_or_record(self, data: dict[str, Any], **_: Any) -> None:
        if ("text" in data) == ("record" in data):
            raise ValidationError("give either 'text' or 'record'", "_schema")


class DuplicateOut(Schema):
    id = String()
    distance = Integer()
    score = Float(metadata={"description": _SIMILARITY})
    cluster = String(allow_none=True)


class DuplicatesOut(Schema):
    items = List(Nested(DuplicateOut))
    candidates = Integer()
    status = String(metadata={"description": "the looked-up text's or record's status (ok, too_short, empty)"})


class _Paged(Schema):
    """``from`` (and a subclass's ``size``): a page of at most Elasticsearch's result window."""

    from_ = Integer(
        load_default=0,
        data_key="from",
        validate=Range(0, MAX_RESULT_WINDOW),
        metadata={"description": f"from + size is at most {MAX_RESULT_WINDOW} (Elasticsearch's max_result_window)"},
    )

    @validates_schema
    def _inside_result_window(self, data: dict[str, Any], **_: Any) -> None:
        if data["from_"] + data["size"] > MAX_RESULT_WINDOW:
            raise ValidationError(
                f"from + size is {data['from_'] + data['size']}; it may be at most {MAX_RESULT_WINDOW} "
                "(Elasticsearch's index.max_result_window)",
                "from",
            )


class SearchQuery(_Paged):
    q = String(load_default="", validate=Length(max=2000))
    hide_duplicates = Boolean(load_default=False)
    cluster = String(
        load_default=None,
        validate=Length(min=1, max=512),
        metadata={"description": "only this cluster's members (the hidden ones of a hit, with the same q)"},
    )
    size = Integer(load_default=10, validate=Range(0, 100))


class HitOut(Schema):
    id = String()
    score = Float(allow_none=True)
    cluster = String(allow_none=True)
    duplicate_of = String(allow_none=True)
    duplicates_hidden = Integer()
    title = String(allow_none=True)
    text = String()
    highlight = Dict(
        keys=String(),
        values=List(String()),
        metadata={"description": "per field, HTML fragments: the text escaped, the matching words in <em>"},
    )


class SearchOut(Schema):
    total = Integer(
        metadata={
            "description": "matching documents; when hiding duplicates, distinct clusters and documents without one"
        }
    )
    total_estimated = Boolean(
        metadata={
            "description": f"true when hiding duplicates among {CLUSTER_COUNT_PRECISION:,} matching clusters or more: "
            "total is then an estimate"
        }
    )
    hide_duplicates = Boolean()
    hits = List(Nested(HitOut))


class ClustersQuery(Schema):
    min_size = Integer(load_default=2, validate=Range(1, 1_000_000))
    size = Integer(load_default=20, validate=Range(1, 1000))


class ClusterQuery(_Paged):
    size = Integer(load_default=100, validate=Range(1, 1000), metadata={"description": "members in this page"})
    text_chars = Integer(
        load_default=None,
        validate=Range(0, None),
        metadata={"description": "each member's text cut to this many characters (0: no text); default: whole"},
    )


class ClusterSummary(Schema):
    cluster = String()
    size = Integer()
    title = String(allow_none=True)


class ClustersOut(Schema):
    documents = Integer()
    clusters_total = Integer()
    clusters_total_estimated = Boolean(
        metadata={
            "description": f"true when clusters_total is an estimate ({CLUSTER_COUNT_PRECISION:,} clusters or more)"
        }
    )
    duplicates = Integer()
    clusters = List(Nested(ClusterSummary))


class MemberOut(Schema):
    id = String()
    title = String(allow_none=True)
    text = String(allow_none=True)
    text_length = Integer(allow_none=True, metadata={"description": "the whole text's length in characters"})
    canonical = Boolean()
    duplicate_of = String(allow_none=True)
    distance = Integer(allow_none=True)
    similarity = Float(allow_none=True)
    distance_to_canonical = Integer(allow_none=True)
    indexed_at = String(allow_none=True)
    status = String(allow_none=True)


class ClusterOut(Schema):
    cluster = String()
    size = Integer(metadata={"description": "every member of the cluster, not only this page's"})
    members = List(Nested(MemberOut))


class DedupeIn(Schema):
    workers = Integer(load_default=1, validate=Range(1, 32))
    text_field = String(load_default="text", validate=Length(1, 256))
    title_field = String(load_default="title", validate=Length(1, 256))


class JobOut(Schema):
    id = String()
    kind = String()
    index = String()
    state = String(metadata={"description": "running, done, failed, or lost (its worker died)"})
    progress = Dict()
    result = Dict(allow_none=True)
    error = Dict(allow_none=True)
    created_at = String()
    heartbeat_at = String(allow_none=True)
    finished_at = String(allow_none=True)


class FingerprintIn(Schema):
    text = String(required=True)
    title = String(allow_none=True)
    explain = Integer(load_default=20, validate=Range(0, 200))


class FeatureOut(Schema):
    feature = String()
    weight = Float()


class FingerprintOut(Schema):
    status = String()
    version = String()
    fingerprint = String(allow_none=True)
    fingerprint_long = Integer(allow_none=True)
    fingerprints = List(String())
    blocks = List(List(String()))
    exact = String()
    features = List(Nested(FeatureOut))


class HealthOut(Schema):
    status = String()
    elasticsearch = Dict()


class FieldIn(Schema):
    mode = String(required=True, validate=OneOf(MODES))
    weight = Float(
        load_default=FieldSpec.weight,
        validate=Range(0, MAX_WEIGHT, min_inclusive=False, max_inclusive=False),
        metadata={"description": "text: a factor on its words' weights; value: times the record's median word weight"},
    )
    title = Boolean(load_default=FieldSpec.title, metadata={"description": "text: its words also get the title factor"})


class IndexIn(Schema):
    """A per-field configuration (the JSON form of README's fields.toml), read by ``RecordConfig.parse``, whose
    messages name what it refuses."""

    field_config = Dict(
        data_key="fields",
        required=True,
        keys=String(),
        values=Nested(FieldIn),
        metadata={
            "description": "each field of a record by name: text, value, set or ignore; at least one text or value",
            "example": {
                "complaint": {"mode": "text"},
                "category": {"mode": "value", "weight": 2},
                "tags": {"mode": "set"},
            },
        },
    )
    mu = Float(
        load_default=RecordConfig.mu,
        validate=Range(0, 1),
        metadata={"description": "with set fields: content's weight against the sets' in the combined score"},
    )
    min_combined = Float(
        load_default=RecordConfig.min_combined,
        validate=Range(0, 1),
        metadata={"description": "the combined score a pair needs"},
    )


class FingerprintedOtherwiseOut(Schema):
    documents = Integer(metadata={"description": "documents of the index not fingerprinted by this configuration"})
    message = String(
        allow_none=True,
        metadata={"description": "when there are some: that a dedupe of the index fingerprints them by it"},
    )


class IndexOut(Schema):
    index = String()
    created = Boolean()
    field_config = Dict(
        data_key="fields", allow_none=True, metadata={"description": "the per-field configuration, when one is stored"}
    )
    fingerprinted_otherwise = Nested(
        FingerprintedOtherwiseOut,
        metadata={
            "description": "when the request gives a field configuration: the documents the index holds that are not "
            "fingerprinted by it (texts, records of another configuration, documents not fingerprinted yet). Records "
            "are not compared with them until POST /v1/indices/{index}/dedupe (or `neardup dedupe INDEX`) "
            "fingerprints them by it"
        },
    )

"""The ``neardup.*`` document schema: every field name, and the encoding between a fingerprint
:class:`~neardup.ingest.fingerprint.Record` (plus its cluster assignment) and a document's ``_source``.

This is the only module that spells the field names; queries, writes and reads elsewhere use the
constants and functions here. The mapping itself is ``neardup-fields.component.json`` beside this file,
and a test checks that both name the same fields.

>>> path(CLUSTER), BLOCK_FIELDS[2]
('neardup.cluster', 'neardup.b2')
>>> from neardup.ingest.fingerprint import Fingerprinter
>>> rec = Fingerprinter.default().fingerprint("国务院今天召开常务会议，部署进一步推动经济稳定增长的措施。")
>>> hit = {"_id": "a", "_source": {ROOT: record_fields(rec) | {INDEXED_AT: "2024-01-01T00:00:00.000000000Z"}}}
>>> stored = Stored.from_hit(hit)
>>> stored.fingerprints == rec.fingerprints, stored.exact == rec.exact, stored.cluster
(True, True, None)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.ingest import bits
from neardup.ingest.fingerprint import Record
from neardup.ingest.metadata import decode_meta, encode_meta
from neardup.ingest.sketch import decode_sketch, encode_sketch
from neardup.ingest.verify import Match

__all__ = [
    "ASSIGNMENT_PATHS",
    "BLOCK_FIELDS",
    "CANDIDATE_DOC_VALUES",
    "CLUSTER",
    "DISTANCE",
    "DUPLICATE_OF",
    "EXACT",
    "FINGERPRINT",
    "INDEXED_AT",
    "IS_DUPLICATE",
    "LOOKUP_FIELDS",
    "ROOT",
    "SIMILARITY",
    "STATUS",
    "VERSION",
    "Stored",
    "assignment_fields",
    "assignment_of",
    "canonical_timestamp",
    "field_names",
    "is_reserved",
    "path",
    "record_fields",
    "record_of",
    "rounded_similarity",
    "timestamp",
]

#: the object every neardup field lives under
ROOT = "neardup"

# field names under ROOT (``path`` gives the dotted name a query uses)
FINGERPRINT = "fingerprint"  # the 16 fingerprints as signed longs, seed 0 first
HEX = "hex"  # seed 0 in hex, for people
BLOCKS = ("b0", "b1", "b2", "b3")  # per block position, one "seed:hex" token per seed
STATUS = "status"
VERSION = "version"
EXACT = "exact"
MINHASH = "minhash"  # the shingle sketch
META_MINHASH = "meta_minhash"  # the metadata sets' MinHash (records with set fields)
CLUSTER = "cluster"
DUPLICATE_OF = "duplicate_of"
DISTANCE = "distance"
SIMILARITY = "similarity"
IS_DUPLICATE = "is_duplicate"
INDEXED_AT = "indexed_at"


def path(name: str) -> str:
    """The dotted field name of ``name`` (``neardup.<name>``)."""
    return f"{ROOT}.{name}"


BLOCK_FIELDS = tuple(path(b) for b in BLOCKS)

#: what verification and assignment read of a stored document (never the text)
LOOKUP_FIELDS = [path(f) for f in (FINGERPRINT, MINHASH, EXACT, STATUS, VERSION, CLUSTER, INDEXED_AT, META_MINHASH)]

#: what a candidate search reads, all from doc values (no ``_source`` is loaded or parsed per hit): seed 0
#: of the fingerprint as hex (doc values of the fingerprint array come sorted, which loses which is
#: seed 0), the sketches as base64, and the time with all nine digits as stored
CANDIDATE_DOC_VALUES: list[str | dict[str, str]] = [
    path(HEX),
    path(MINHASH),
    path(META_MINHASH),
    path(EXACT),
    path(STATUS),
    path(CLUSTER),
    {"field": path(INDEXED_AT), "format": "strict_date_optional_time_nanos"},
]

#: the assignment fields, written by flagging and changed by reconcile
ASSIGNMENT_FIELDS = (CLUSTER, DUPLICATE_OF, DISTANCE, SIMILARITY)
#: the same as dotted paths, as a ``_source`` filter names them
ASSIGNMENT_PATHS = tuple(path(f) for f in ASSIGNMENT_FIELDS)


def field_names() -> frozenset[str]:
    """Every field this module writes (names under ``neardup``)."""
    return frozenset(
        {FINGERPRINT, HEX, *BLOCKS, STATUS, VERSION, EXACT, MINHASH, META_MINHASH, *ASSIGNMENT_FIELDS}
        | {IS_DUPLICATE, INDEXED_AT}
    )


def is_reserved(key: str) -> bool:
    """Does a client's top-level field name touch ``neardup.*`` in any spelling?

    >>> [is_reserved(k) for k in ("neardup", "neardup.cluster", "Neardup", "neardupx", "title")]
    [True, True, False, False, False]
    """
    return key == ROOT or key.startswith(ROOT + ".")


def record_fields(record: Record) -> dict[str, Any]:
    """The fingerprint fields of ``record`` (everything but the cluster assignment and time)."""
    ok = record.status == "ok"
    tokens = record.block_tokens()
    return {
        FINGERPRINT: [bits.to_signed(f) for f in record.fingerprints] if ok else [],
        HEX: bits.to_hex(record.fingerprint) if ok else None,
        **dict(zip(BLOCKS, tokens, strict=True)),
        STATUS: record.status,
        VERSION: record.version,
        EXACT: record.exact,
        MINHASH: encode_sketch(record.sketch),
        META_MINHASH: None if record.meta is None else encode_meta(record.meta),
    }


def record_of(fields: Mapping[str, Any]) -> Record:
    """The :class:`Record` whose :func:`record_fields` are ``fields`` (as the ingest processor writes them).

    >>> from neardup.ingest.fingerprint import Fingerprinter
    >>> rec = Fingerprinter.default().fingerprint("国务院今天召开常务会议，部署进一步推动经济稳定增长的措施。")
    >>> back = record_of(record_fields(rec))
    >>> back.fingerprints == rec.fingerprints, back.exact == rec.exact, bool((back.sketch == rec.sketch).all())
    (True, True, True)
    """
    return Record(
        fingerprints=tuple(bits.to_unsigned(int(v)) for v in fields.get(FINGERPRINT) or []),
        sketch=decode_sketch(fields.get(MINHASH) or ""),
        exact=str(fields.get(EXACT) or ""),
        status=str(fields.get(STATUS) or ""),
        version=str(fields.get(VERSION) or ""),
        meta=decode_meta(fields.get(META_MINHASH)),
    )


def rounded_similarity(similarity: float) -> float:
    """A similarity as neardup stores and answers it: rounded to 4 places.

    >>> rounded_similarity(0.876543)
    0.8765
    """
    return round(similarity, 4)


def assignment_fields(cluster: str, duplicate_of: str | None, match: Match | None) -> dict[str, Any]:
    """The cluster assignment fields (similarity rounded as stored)."""
    return {
        CLUSTER: cluster,
        DUPLICATE_OF: duplicate_of,
        DISTANCE: None if match is None else match.distance,
        SIMILARITY: None if match is None else rounded_similarity(match.similarity),
        IS_DUPLICATE: duplicate_of is not None,
    }


def assignment_of(source: Mapping[str, Any]) -> tuple[Any, ...]:
    """The stored assignment of a ``_source`` as a tuple comparable with :func:`assignment_fields`' values."""
    nd = source.get(ROOT) or {}
    return tuple(nd.get(f) for f in ASSIGNMENT_FIELDS)


def timestamp(ns: int) -> str:
    """The ``indexed_at`` value (``date_nanos``) of a time in nanoseconds: ISO-8601 UTC with nanoseconds,
    all of one length, so text order is time order.

    >>> timestamp(1_700_000_000_123_456_789)
    '2023-11-14T22:13:20.123456789Z'
    """
    seconds, nanos = divmod(ns, 1_000_000_000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos:09d}Z"


def canonical_timestamp(value: str) -> str:
    """An ``indexed_at`` with nine fraction digits, as :func:`timestamp` writes it. Elasticsearch renders a
    ``date_nanos`` doc value without the fraction's trailing zeros, and a shorter fraction would sort after a
    longer one of the same prefix (``…00.12345678Z`` after ``…00.123456789Z``), so text order would no longer
    be time order. A value of another shape is returned as it is.

    >>> canonical_timestamp("2026-11-26T15:10:00.12345678Z")
    '2026-11-26T15:10:00.123456780Z'
    >>> canonical_timestamp("2026-11-26T15:10:00.100Z")
    '2026-11-26T15:10:00.100000000Z'
    >>> canonical_timestamp("2026-11-26T15:10:00.123456789Z")
    '2026-11-26T15:10:00.123456789Z'
    """
    head, dot, fraction = value.removesuffix("Z").partition(".")
    if not value.endswith("Z") or not dot or not fraction.isdigit() or len(fraction) > 9:
        return value
    return f"{head}.{fraction.ljust(9, '0')}Z"


@dataclass(frozen=True)
class Stored:
    """A document as Elasticsearch holds it: enough to verify and assign, no re-tokenising."""

    id: str
    fingerprints: tuple[int, ...]
    sketch: npt.NDArray[np.uint32]
    exact: str
    status: str
    version: str
    cluster: str | None
    indexed_at: str
    meta: npt.NDArray[np.uint32] | None = None
    #: False for a candidate read from doc values: ``fingerprints`` then holds seed 0 alone
    all_seeds: bool = True

    @property
    def fingerprint(self) -> int:
        return self.fingerprints[0] if self.fingerprints else 0

    @classmethod
    def from_hit(cls, hit: Mapping[str, Any]) -> Stored:
        nd = (hit.get("_source") or {}).get(ROOT) or {}
        fps = nd.get(FINGERPRINT) or []
        if isinstance(fps, int):
            fps = [fps]
        return cls(
            id=str(hit["_id"]),
            fingerprints=tuple(bits.to_unsigned(int(v)) for v in fps),
            sketch=decode_sketch(nd.get(MINHASH) or ""),
            exact=str(nd.get(EXACT) or ""),
            status=str(nd.get(STATUS) or ""),
            version=str(nd.get(VERSION) or ""),
            cluster=nd.get(CLUSTER),
            indexed_at=str(nd.get(INDEXED_AT) or ""),
            meta=decode_meta(nd.get(META_MINHASH)),
        )

    @classmethod
    def written(cls, doc_id: str, record: Record, cluster: str, indexed_at: str) -> Stored:
        """The stored form of a document just written with these values (what a search will return)."""
        return cls(
            doc_id,
            record.fingerprints if record.status == "ok" else (),
            record.sketch,
            record.exact,
            record.status,
            record.version,
            cluster,
            indexed_at,
            record.meta,
        )

    @classmethod
    def from_doc_values(cls, hit: Mapping[str, Any], version: str) -> Stored:
        """A candidate from a search hit's ``fields`` (:data:`CANDIDATE_DOC_VALUES`), of ``version``.

        >>> from neardup.ingest.fingerprint import Fingerprinter
        >>> rec = Fingerprinter.default().fingerprint("国务院今天召开常务会议，部署进一步推动经济稳定增长的措施。")
        >>> nd = record_fields(rec)
        >>> hit = {"_id": "a", "fields": {path(HEX): [nd[HEX]], path(MINHASH): [nd[MINHASH]],
        ...        path(EXACT): [rec.exact], path(STATUS): ["ok"]}}
        >>> c = Stored.from_doc_values(hit, rec.version)
        >>> c.fingerprint == rec.fingerprint, bool((c.sketch == rec.sketch).all()), c.cluster, c.all_seeds
        (True, True, None, False)
        """
        fields = hit.get("fields") or {}

        def one(name: str) -> Any:
            values = fields.get(path(name))
            return values[0] if values else None

        hex_value = one(HEX)
        return cls(
            id=str(hit["_id"]),
            fingerprints=() if hex_value is None else (int(hex_value, 16),),
            sketch=decode_sketch(one(MINHASH) or ""),
            exact=str(one(EXACT) or ""),
            status=str(one(STATUS) or ""),
            version=version,
            cluster=one(CLUSTER),
            indexed_at=canonical_timestamp(str(one(INDEXED_AT) or "")),
            meta=decode_meta(one(META_MINHASH)),
            all_seeds=False,
        )

    def block_tokens(self) -> list[list[str]]:
        if not self.all_seeds:
            raise ValueError(f"{self.id}: a candidate read from doc values has seed 0 only, not its blocks")
        return bits.document_block_fields(self.fingerprints, self.status == "ok")

    @property
    def order(self) -> tuple[str, str]:
        """Document order for "earlier document" (ties broken by id)."""
        return (self.indexed_at, self.id)

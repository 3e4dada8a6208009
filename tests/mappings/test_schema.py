"""The ``neardup.*`` schema module (:mod:`neardup.mappings.schema`): it names exactly the mapped fields, its
encoding round-trips, and no other module spells a field name."""

from __future__ import annotations

import re
from pathlib import Path

from neardup import mappings
from neardup.ingest.fingerprint import Fingerprinter
from neardup.ingest.verify import Match
from neardup.mappings import schema

ROOT = Path(__file__).resolve().parents[2]


def test_the_schema_names_exactly_the_fields_of_the_mapping() -> None:
    assert schema.field_names() == set(mappings.neardup_fields())


def test_a_record_and_its_assignment_round_trip_through_source() -> None:
    fp = Fingerprinter.default()
    rec = fp.fingerprint("国务院今天召开常务会议，部署进一步推动经济稳定增长的措施。", title="国务院常务会议")
    fields = schema.record_fields(rec) | schema.assignment_fields("c1", "d0", Match(2, 0.912345))
    fields[schema.INDEXED_AT] = schema.timestamp(1_700_000_000_000_000_001)
    assert set(fields) == schema.field_names()
    stored = schema.Stored.from_hit({"_id": "d1", "_source": {schema.ROOT: fields}})
    assert stored.fingerprints == rec.fingerprints and stored.status == "ok" and stored.version == rec.version
    assert (stored.sketch == rec.sketch).all() and stored.cluster == "c1"
    assert stored.block_tokens() == rec.block_tokens()
    assert schema.assignment_of({schema.ROOT: fields}) == ("c1", "d0", 2, 0.9123)


def test_reserved_keys_are_the_root_and_every_dotted_spelling() -> None:
    assert schema.is_reserved("neardup") and schema.is_reserved("neardup.cluster")
    assert schema.is_reserved("neardup.anything.deeper")
    assert not schema.is_reserved("neardup_cluster") and not schema.is_reserved("text")


def test_no_module_outside_mappings_spells_a_neardup_field() -> None:
    names = "|".join(sorted(schema.field_names()))
    dotted = re.compile(rf"[\"']neardup\.({names})\b")
    root_key = re.compile(r"(\.get\(|\[|\{)\s*[\"']neardup[\"']\s*(\)|\]|:)")
    # a stored neardup object read by its field names (``nd`` is what every reader calls it)
    nested = re.compile(rf"\bnd(\.get\(|\[)\s*[\"']({names})[\"']")
    offenders = []
    for folder in ("neardup", "ingest", "service"):  # mappings/ is where the schema lives
        for path in (ROOT / folder).rglob("*.py"):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if dotted.search(line) or nested.search(line) or (root_key.search(line) and "extensions[" not in line):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []

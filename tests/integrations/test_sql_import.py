"""``neardup import`` from a relational database into the real Elasticsearch: batch, then incremental;
bad rows reported by row and skipped. SQLite always; PostgreSQL and MariaDB when their server binaries
are here (``.ci/run`` installs them from Debian)."""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch, helpers

from neardup.es.client import read_record_config
from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.metrics import pairwise_scores
from neardup.evaluation.record_sets import LabelledRecord, petition_rows
from tests.indices import remove_indices

pytestmark = pytest.mark.es

FIELDS_TOML = """
[fields.complaint]
mode = "text"
[fields.notes]
mode = "text"
[fields.category]
mode = "value"
weight = 2
[fields.district]
mode = "value"
weight = 2
[fields.submitter]
mode = "value"
[fields.office]
mode = "ignore"
[fields.date]
mode = "ignore"
"""
COLUMNS = ["category", "district", "office", "date", "submitter", "notes", "complaint"]


@pytest.fixture(scope="module")
def rows() -> list[LabelledRecord]:
    return petition_rows(load_peoples_daily(), seed=21, groups=25, singles=40)


def _cli(
    *args: str, es_url: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"NEARDUP_ES_URL": es_url} | (env or {})
    return subprocess.run(
        [sys.executable, "-m", "neardup", *args], capture_output=True, text=True, env=env, timeout=timeout, check=False
    )


def _clusters(es: Elasticsearch, index: str) -> dict[str, str]:
    es.indices.refresh(index=index)
    return {
        h["_id"]: h["_source"]["neardup"]["cluster"] for h in helpers.scan(es, index=index, _source=["neardup.cluster"])
    }


def _insert(conn: sqlite3.Connection, rows: list[LabelledRecord]) -> None:
    conn.executemany(
        f"INSERT INTO petitions (ref, {', '.join(COLUMNS)}) VALUES (?, {', '.join('?' * len(COLUMNS))})",
        [(r.id, *(r.fields[c] for c in COLUMNS)) for r in rows],
    )
    conn.commit()


def test_sqlite_batch_then_incremental(
    tmp_path: Path, rows: list[LabelledRecord], es_url: str, es: Elasticsearch, index_name: str
) -> None:
    fields = tmp_path / "fields.toml"
    fields.write_text(FIELDS_TOML, encoding="utf-8")
    db = tmp_path / "petitions.db"
    conn = sqlite3.connect(db)
    # complaint has no declared type, so a number stays a number (a wrong type for a text field)
    conn.execute(
        "CREATE TABLE petitions (row_id INTEGER PRIMARY KEY, ref TEXT, category TEXT, district TEXT, office TEXT, "
        "date TEXT, submitter TEXT, notes TEXT, complaint)"
    )
    cut = int(len(rows) * 0.7)
    first, second = rows[:cut], rows[cut:]
    _insert(conn, first[:10])
    conn.execute("INSERT INTO petitions (ref, category, complaint) VALUES (NULL, '环保', '缺少编号的一行投诉内容')")
    conn.execute("INSERT INTO petitions (ref, category, complaint) VALUES ('bad-type', '环保', 12345)")
    conn.execute(
        "INSERT INTO petitions (ref, category, complaint) VALUES ('bad-utf8', '环保', CAST(X'E4B8FF41' AS TEXT))"
    )
    conn.commit()
    _insert(conn, first[10:])
    args = [
        "import",
        f"sqlite:///{db}",
        index_name,
        "--table",
        "petitions",
        "--id-column",
        "ref",
        "--fields",
        str(fields),
        "--incremental",
        "row_id",
        "--batch-size",
        "20",
    ]
    res = _cli(*args, es_url=es_url)
    assert res.returncode == 0, res.stderr
    assert f"imported {len(first)} of {len(first) + 3} rows" in res.stdout
    assert "skipped row 11 (id None): id column 'ref' is empty" in res.stderr
    assert "skipped row 12 (id bad-type): field 'complaint': text must be a string" in res.stderr
    assert "skipped row 13 (id bad-utf8): column 'complaint': invalid UTF-8" in res.stderr
    assert set(_clusters(es, index_name)) == {r.id for r in first}

    _insert(conn, second)  # new rows, re-submissions of earlier complaints among them
    again = _cli(*args, es_url=es_url)
    assert again.returncode == 0, again.stderr
    assert f"imported {len(second)} of {len(second)} rows" in again.stdout and "started after" in again.stdout
    clusters = _clusters(es, index_name)
    assert len(clusters) == len(rows)
    first_ids = {r.id for r in first}
    groups_before = {r.group for r in first}
    late_dups = [r for r in second if r.group in groups_before]
    assert late_dups, "the split should leave re-submissions for the incremental run"
    for r in late_dups:  # flagged against rows of the first run
        doc = es.get(index=index_name, id=r.id)["_source"]["neardup"]
        if doc["is_duplicate"]:
            assert doc["cluster"] in first_ids
    scores = pairwise_scores([r.group for r in rows], [clusters[r.id] for r in rows])
    print(f"import P {scores.precision:.3f} R {scores.recall:.3f}")
    assert scores.precision >= 0.97 and scores.recall >= 0.9
    es.indices.refresh(index="neardup-imports")
    stored = es.search(index="neardup-imports", query={"term": {"index": index_name}})["hits"]["hits"]
    assert stored[0]["_source"]["high_water"] == len(rows) + 3
    conn.close()


def _small_table(tmp_path: Path, fields_toml: str, columns: str, rows: list[tuple[object, ...]]) -> tuple[Path, Path]:
    """A field configuration file, and an SQLite file whose table ``t`` (``row_id`` first, then ``columns``) holds
    ``rows``."""
    fields = tmp_path / "fields.toml"
    fields.write_text(fields_toml, encoding="utf-8")
    db = tmp_path / "small.db"
    conn = sqlite3.connect(db)
    conn.execute(f"CREATE TABLE t (row_id INTEGER PRIMARY KEY, {columns})")
    conn.executemany(f"INSERT INTO t VALUES ({', '.join('?' * len(rows[0]))})", rows)
    conn.commit()
    conn.close()
    return fields, db


def test_a_refused_row_is_read_again_by_the_next_incremental_run(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    texts = [a.text for a in load_peoples_daily()[:6]]
    # row 3's office is no number, and the index maps office as one: Elasticsearch refuses that row alone
    fields, db = _small_table(
        tmp_path,
        '[fields.complaint]\nmode = "text"\n[fields.office]\nmode = "ignore"\n',
        "ref TEXT, office TEXT, complaint TEXT",
        [(k, f"r{k}", "x" if k == 3 else str(k), texts[k - 1]) for k in range(1, 7)],
    )
    es.indices.create(index=index_name, mappings={"properties": {"office": {"type": "integer"}}})
    args = ["import", f"sqlite:///{db}", index_name, "--table", "t", "--id-column", "ref", "--fields", str(fields)]
    args += ["--incremental", "row_id", "--batch-size", "2"]

    first = _cli(*args, es_url=es_url)
    assert first.returncode == 1, first.stderr
    assert "imported 5 of 6 rows" in first.stdout and "1 failed; high-water mark 2" in first.stdout, first.stdout
    assert "the next --incremental run reads them again (or with --since row_id 3, the rows after them only)" in (
        first.stdout
    )
    assert "Elasticsearch refused row 3 (id r3):" in first.stderr and "office" in first.stderr, first.stderr
    conn = sqlite3.connect(db)
    conn.execute("UPDATE t SET office = '3' WHERE row_id = 3")
    conn.commit()
    conn.close()

    second = _cli(*args, es_url=es_url)
    assert second.returncode == 0, second.stderr
    # the refused row and the rows after it (written again by id): none is lost, none is doubled
    assert "imported 4 of 4 rows" in second.stdout and "high-water mark 6 (started after 2)" in second.stdout
    es.indices.refresh(index=index_name)
    assert sorted(h["_id"] for h in helpers.scan(es, index=index_name, _source=False)) == [f"r{k}" for k in range(1, 7)]


def test_rows_repeating_an_id_leave_the_last_copy_and_never_name_themselves(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """A table of revisions: one id on several rows of a batch. Each copy is written after the one before it."""
    first, other = (a.text for a in load_peoples_daily()[:2])
    revised = first + "（本文有修订）"
    fields, db = _small_table(
        tmp_path,
        '[fields.complaint]\nmode = "text"\n',
        "ref TEXT, complaint TEXT",
        [(1, "r1", first), (2, "r2", other), (3, "r1", revised)],
    )
    res = _cli(
        "import",
        f"sqlite:///{db}",
        index_name,
        "--table",
        "t",
        "--id-column",
        "ref",
        "--fields",
        str(fields),
        es_url=es_url,
    )
    assert res.returncode == 0, res.stderr
    assert "imported 3 of 3 rows" in res.stdout, res.stdout
    stored = es.get(index=index_name, id="r1")["_source"]
    assert stored["complaint"] == revised
    assert stored["neardup"]["duplicate_of"] != "r1" and stored["neardup"]["cluster"] == "r1", stored["neardup"]


def test_the_field_configuration_is_kept_with_the_index_for_dedupe_and_reconcile(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """What the import wrote is records of its field configuration: ``reconcile`` clusters them (it reads the
    records' fingerprint version, from the configuration kept with the index) and ``dedupe`` has nothing to
    fingerprint again. An import with another configuration is refused before it writes a row."""
    texts = [a.text for a in load_peoples_daily()[:4]]
    table = [(k, f"r{k}", "环保", texts[k - 1]) for k in range(1, 5)] + [(5, "r5", "环保", texts[0] + "（转载）")]
    fields_toml = '[fields.complaint]\nmode = "text"\n[fields.category]\nmode = "value"\nweight = 2\n'
    fields, db = _small_table(tmp_path, fields_toml, "ref TEXT, category TEXT, complaint TEXT", table)
    args = ["import", f"sqlite:///{db}", index_name, "--table", "t", "--id-column", "ref", "--fields", str(fields)]
    res = _cli(*args, es_url=es_url)
    assert res.returncode == 0 and "imported 5 of 5 rows" in res.stdout, res.stderr
    reconciled = _cli("reconcile", index_name, es_url=es_url)
    assert reconciled.returncode == 0 and "documents=5 clusters=4" in reconciled.stdout, reconciled.stdout
    deduped = _cli("dedupe", index_name, es_url=es_url)
    assert deduped.returncode == 0, deduped.stderr
    assert "fingerprinted=0" in deduped.stdout and "documents=5 clusters=4 changed=0" in deduped.stdout, deduped.stdout
    assert _clusters(es, index_name)["r5"] == "r1"
    kept = es.indices.get_mapping(index=index_name)[index_name]["mappings"]["_meta"]["neardup"]["record_config"]
    assert {n: f["mode"] for n, f in kept["fields"].items()} == {"complaint": "text", "category": "value"}
    again = _cli(*args, es_url=es_url)  # the same configuration: imported again as before
    assert again.returncode == 0 and "imported 5 of 5 rows" in again.stdout, again.stderr

    other = tmp_path / "other.toml"
    other.write_text(fields_toml.replace("weight = 2", "weight = 3"), encoding="utf-8")
    more = sqlite3.connect(db)
    more.execute("INSERT INTO t VALUES (6, 'r6', '环保', ?)", (texts[3],))
    more.commit()
    more.close()
    refused = _cli(*args[:-1], str(other), es_url=es_url)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert f"index {index_name!r} keeps another field configuration (differing in field 'category')" in refused.stderr
    assert set(_clusters(es, index_name)) == {f"r{k}" for k in range(1, 6)}
    still = es.indices.get_mapping(index=index_name)[index_name]["mappings"]["_meta"]["neardup"]["record_config"]
    assert still == kept


def test_an_index_of_other_documents_is_not_made_an_index_of_records(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """Keeping a field configuration with an index that holds texts would have a later dedupe read them as records."""
    es.index(index=index_name, id="t1", document={"text": load_peoples_daily()[0].text}, refresh=True)
    one_field = '[fields.complaint]\nmode = "text"\n'
    fields, db = _small_table(tmp_path, one_field, "ref TEXT, complaint TEXT", [(1, "r1", "y")])
    args = ["import", f"sqlite:///{db}", index_name, "--table", "t", "--id-column", "ref", "--fields", str(fields)]
    refused = _cli(*args, es_url=es_url)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert "holds 1 documents that are not records of this field configuration" in refused.stderr
    assert es.count(index=index_name)["count"] == 1
    assert read_record_config(es, index_name) is None


def test_an_index_running_the_text_processor_is_not_given_records(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """Its processor reads `text`: every record another client wrote there would fail."""
    setup = _cli("setup", index_name, "--pipeline", es_url=es_url)
    if setup.returncode != 0 and "plugin" in setup.stderr:
        pytest.skip("needs neardup's plugin on the cluster")
    assert setup.returncode == 0, setup.stderr
    one_field = '[fields.complaint]\nmode = "text"\n'
    fields, db = _small_table(tmp_path, one_field, "ref TEXT, complaint TEXT", [(1, "r1", "y")])
    args = ["import", f"sqlite:///{db}", index_name, "--table", "t", "--id-column", "ref", "--fields", str(fields)]
    refused = _cli(*args, es_url=es_url)
    assert refused.returncode == 2 and "runs the ingest pipeline" in refused.stderr, refused.stderr
    assert read_record_config(es, index_name) is None and es.count(index=index_name)["count"] == 0


def test_an_index_elasticsearch_will_not_set_up_is_its_refusal_not_a_stopped_import(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """The neardup fields cannot be added to an index whose ``neardup`` is a keyword: Elasticsearch's refusal is
    the error, and no row was read or written (no "import stopped after 0 rows ... resume")."""
    es.indices.create(index=index_name, mappings={"properties": {"neardup": {"type": "keyword"}}})
    one_field = '[fields.complaint]\nmode = "text"\n'
    fields, db = _small_table(tmp_path, one_field, "ref TEXT, complaint TEXT", [(1, "r1", "y")])
    args = ["import", f"sqlite:///{db}", index_name, "--table", "t", "--id-column", "ref", "--fields", str(fields)]
    refused = _cli(*args, es_url=es_url)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert "Elasticsearch refused the request" in refused.stderr and "neardup" in refused.stderr, refused.stderr
    assert "import stopped" not in refused.stderr and "resume" not in refused.stderr, refused.stderr
    assert es.count(index=index_name)["count"] == 0 and read_record_config(es, index_name) is None


def test_import_reports_usage_errors(tmp_path: Path, es_url: str, index_name: str) -> None:
    fields = tmp_path / "fields.toml"
    fields.write_text(FIELDS_TOML, encoding="utf-8")
    db = tmp_path / "x.db"
    sqlite3.connect(db).execute("CREATE TABLE t (id INTEGER PRIMARY KEY, complaint TEXT)").connection.commit()
    base = ["import", f"sqlite:///{db}", index_name, "--id-column", "id", "--fields", str(fields)]
    assert "exactly one of --table and --query" in _cli(*base, es_url=es_url).stderr
    missing = _cli(*base, "--table", "nope", es_url=es_url)
    assert missing.returncode == 2 and "no table 'nope'" in missing.stderr and "Traceback" not in missing.stderr
    bad_url = _cli(
        "import",
        "nosuchdb://x",
        index_name,
        "--table",
        "t",
        "--id-column",
        "id",
        "--fields",
        str(fields),
        es_url=es_url,
    )
    assert bad_url.returncode == 2 and "cannot use database URL" in bad_url.stderr
    down = _cli(*base, "--table", "t", es_url="http://127.0.0.1:9")
    assert down.returncode == 1 and "Traceback" not in down.stderr, down.stderr
    assert "Elasticsearch is unreachable" in down.stderr and "import stopped" not in down.stderr, down.stderr


def test_an_import_its_source_refuses_leaves_nothing_behind(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """A wrong table, a wrong column or a query the database refuses is found before the index is set up; a SQLite
    file that does not exist is named as such, and not made (SQLite would make an empty one)."""
    fields, db = _small_table(
        tmp_path, '[fields.complaint]\nmode = "text"\n', "ref TEXT, complaint TEXT", [(1, "r1", "y")]
    )
    base = ["import", f"sqlite:///{db}", index_name, "--fields", str(fields)]
    failures = [
        (["--table", "nope", "--id-column", "ref"], "no table 'nope'"),
        (["--table", "t", "--id-column", "reff"], "column 'reff' is not in the rows"),
        (["--table", "t", "--id-column", "ref", "--incremental", "row_idd"], "column 'row_idd' is not in the rows"),
        (["--query", "SELECT ref, complaint FROM tt", "--id-column", "ref"], "no such table: tt"),
    ]
    for args, message in failures:
        res = _cli(*base, *args, es_url=es_url)
        assert res.returncode in (1, 2) and message in res.stderr and "Traceback" not in res.stderr, (args, res.stderr)
        assert not es.indices.exists(index=index_name), args

    misspelt = tmp_path / "smal.db"
    res = _cli("import", f"sqlite:///{misspelt}", *base[2:], "--table", "t", "--id-column", "ref", es_url=es_url)
    assert res.returncode == 2 and f"no such file {str(misspelt)!r}" in res.stderr, res.stderr
    assert not misspelt.exists() and not es.indices.exists(index=index_name)

    done = _cli(*base, "--table", "t", "--id-column", "ref", es_url=es_url)
    assert done.returncode == 0 and "imported 1 of 1 rows" in done.stdout, done.stderr


def _import_args(db: Path, index: str, fields: Path, id_column: str, *more: str) -> list[str]:
    return [
        "import",
        f"sqlite:///{db}",
        index,
        "--table",
        "t",
        "--id-column",
        id_column,
        "--fields",
        str(fields),
        *more,
    ]


def test_a_query_is_sent_as_written(tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str) -> None:
    """A colon in the query's literals (' :b', a time) is the user's text, not a parameter for neardup to bind."""
    texts = [a.text for a in load_peoples_daily()[:3]]
    fields, db = _small_table(
        tmp_path,
        '[fields.complaint]\nmode = "text"\n',
        "ref TEXT, complaint TEXT, note TEXT",
        [(1, "r1", texts[0], "see :below"), (2, "r2", texts[1], "10:30"), (3, "r3", texts[2], "-")],
    )
    query = "SELECT * FROM t WHERE note <> 'see :below' AND note <> ':'"
    args = ["import", f"sqlite:///{db}", index_name, "--query", query, "--id-column", "ref", "--fields", str(fields)]
    res = _cli(*args, es_url=es_url)
    assert res.returncode == 0, res.stderr
    assert "imported 2 of 2 rows" in res.stdout, res.stdout
    assert set(_clusters(es, index_name)) == {"r2", "r3"}


def test_an_incremental_datetime_column_reads_every_later_row(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """SQLite holds a DATETIME as the text SQLAlchemy writes ('2024-05-01 10:00:00.000000') and compares it as
    text: the mark is that text, so rows later on the mark's day and rows updated since are all read again."""
    texts = [a.text for a in load_peoples_daily()[:5]]
    fields, db = _small_table(
        tmp_path,
        '[fields.complaint]\nmode = "text"\n',
        "ref TEXT, complaint TEXT, updated_at DATETIME",
        [(1, "r1", texts[0], "2024-05-01 09:00:00.000000"), (2, "r2", texts[1], "2024-05-01 10:00:00.000000")],
    )
    args = _import_args(db, index_name, fields, "ref", "--incremental", "updated_at")
    first = _cli(*args, es_url=es_url)
    assert first.returncode == 0 and "imported 2 of 2 rows" in first.stdout, first.stderr
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO t VALUES (3, 'r3', ?, '2024-05-01 15:30:00.000000')", (texts[2],))
    conn.execute("INSERT INTO t VALUES (4, 'r4', ?, '2024-05-02 08:00:00.000000')", (texts[3],))
    conn.execute("UPDATE t SET complaint = ?, updated_at = '2024-05-01 18:00:00.000000' WHERE ref = 'r1'", (texts[4],))
    conn.commit()
    conn.close()

    second = _cli(*args, es_url=es_url)
    assert second.returncode == 0, second.stderr
    assert "imported 3 of 3 rows" in second.stdout and "high-water mark 2024-05-02 08:00:00" in second.stdout, (
        second.stdout
    )
    assert set(_clusters(es, index_name)) == {"r1", "r2", "r3", "r4"}
    assert es.get(index=index_name, id="r1")["_source"]["complaint"] == texts[4]
    assert es.get(index=index_name, id="r3")["_source"]["updated_at"] == "2024-05-01T15:30:00"  # ISO, as before
    by_hand = _cli(
        *_import_args(db, index_name, fields, "ref", "--since", "updated_at", "2024-05-01 15:00"), es_url=es_url
    )
    assert by_hand.returncode == 0 and "imported 3 of 3 rows" in by_hand.stdout, by_hand.stdout + by_hand.stderr
    # the ISO form with its T (typed so, or a mark an earlier neardup kept so) passes over no row of its day
    iso = _cli(*_import_args(db, index_name, fields, "ref", "--since", "updated_at", "2024-05-01T15:00"), es_url=es_url)
    assert iso.returncode == 0 and "imported 3 of 3 rows" in iso.stdout, iso.stdout + iso.stderr


def test_an_ordering_column_the_mark_cannot_hold_is_said(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """Values the mark cannot keep (bytes that are not text here; an interval on PostgreSQL) never move it: every
    --incremental run reads those rows again, which the command says instead of a silent "high-water mark None"."""
    texts = [a.text for a in load_peoples_daily()[:3]]
    fields, db = _small_table(
        tmp_path,
        '[fields.complaint]\nmode = "text"\n',
        "ref TEXT, complaint TEXT, stamp BLOB",
        [(k, f"r{k}", texts[k - 1], bytes([0xFF, k])) for k in range(1, 4)],
    )
    args = _import_args(db, index_name, fields, "ref", "--incremental", "stamp")
    for _ in range(2):
        res = _cli(*args, es_url=es_url)
        assert res.returncode == 0 and "imported 3 of 3 rows" in res.stdout, res.stdout + res.stderr
        assert "3 rows have a value of stamp the high-water mark cannot hold" in res.stderr, res.stderr


def test_an_incremental_text_key_stays_text(tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str) -> None:
    """Zero-padded text keys compare as text ('010' > '009'), in a stored mark and in a --since given by hand."""
    texts = [a.text for a in load_peoples_daily()[:11]]
    fields = tmp_path / "fields.toml"
    fields.write_text('[fields.complaint]\nmode = "text"\n', encoding="utf-8")
    db = tmp_path / "pad.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (ref TEXT PRIMARY KEY, complaint TEXT)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(f"{k:03d}", texts[k - 1]) for k in range(1, 10)])
    conn.commit()
    args = _import_args(db, index_name, fields, "ref", "--incremental", "ref")
    first = _cli(*args, es_url=es_url)
    assert first.returncode == 0 and "imported 9 of 9 rows" in first.stdout, first.stderr
    conn.executemany("INSERT INTO t VALUES (?, ?)", [("010", texts[9]), ("011", texts[10])])
    conn.commit()
    conn.close()
    second = _cli(*args, es_url=es_url)
    assert second.returncode == 0 and "imported 2 of 2 rows" in second.stdout, second.stdout
    assert "high-water mark 011 (started after 009)" in second.stdout, second.stdout
    by_hand = _cli(*_import_args(db, index_name, fields, "ref", "--since", "ref", "007"), es_url=es_url)
    assert by_hand.returncode == 0 and "imported 4 of 4 rows" in by_hand.stdout, by_hand.stdout
    # a number of a query's expression (no column type for SQLite to read the text by) compares as a number
    query = ["--query", "SELECT ref, ref + 0 AS n, complaint FROM t", "--id-column", "ref", "--fields", str(fields)]
    numbers = _cli("import", f"sqlite:///{db}", index_name, *query, "--since", "n", "9", es_url=es_url)
    assert numbers.returncode == 0 and "imported 2 of 2 rows" in numbers.stdout, numbers.stdout


def test_a_value_sqlite_holds_but_its_column_type_cannot_read_is_a_bad_row(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """SQLite keeps any value in any column: an epoch integer in a DATETIME column, '2024/1/6' in a DATE one.
    That row is reported and skipped; the rows of the same batch and after it are imported."""
    texts = [a.text for a in load_peoples_daily()[:8]]
    rows: list[tuple[object, ...]] = [
        (k, f"r{k}", texts[k - 1], "2024-05-01 09:00:00.000000", f"2024-01-0{k}") for k in range(1, 9)
    ]
    rows[5] = (6, "r6", texts[5], 1714550400, "2024-01-06")
    rows[6] = (7, "r7", texts[6], "2024-05-01 09:00:00.000000", "2024/1/7")
    fields, db = _small_table(
        tmp_path, '[fields.complaint]\nmode = "text"\n', "ref TEXT, complaint TEXT, created DATETIME, d DATE", rows
    )
    args = _import_args(db, index_name, fields, "ref", "--incremental", "row_id", "--batch-size", "2")
    res = _cli(*args, es_url=es_url)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    assert "imported 6 of 8 rows" in res.stdout and "2 bad rows skipped" in res.stdout, res.stdout
    assert "high-water mark 8" in res.stdout, res.stdout
    assert "skipped row 6 (id r6): column 'created': cannot read 1714550400 as DATETIME" in res.stderr, res.stderr
    assert "skipped row 7 (id r7): column 'd': cannot read '2024/1/7' as DATE" in res.stderr, res.stderr
    assert set(_clusters(es, index_name)) == {f"r{k}" for k in (1, 2, 3, 4, 5, 8)}
    assert es.get(index=index_name, id="r1")["_source"]["d"] == "2024-01-01"


def test_a_binary_column_the_fields_do_not_name_is_kept_as_base64(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """A photo beside the text: not UTF-8, and no field of the configuration, so no reason to skip the row."""
    import base64

    texts = [a.text for a in load_peoples_daily()[:3]]
    photo = bytes([0x89, 0x50, 0x4E, 0x47, 0, 0xFF])
    fields, db = _small_table(
        tmp_path,
        '[fields.complaint]\nmode = "text"\n',
        "ref TEXT, complaint TEXT, photo BLOB, note BLOB, legacy TEXT",
        [
            (k, f"r{k}", texts[k - 1], photo + bytes([k]), "备注".encode(), "café".encode("latin-1"))
            for k in range(1, 4)
        ],
    )
    conn = sqlite3.connect(db)
    conn.execute("UPDATE t SET legacy = CAST(legacy AS TEXT)")  # stored as text, as a Latin-1 application wrote it
    conn.commit()
    conn.close()
    res = _cli(*_import_args(db, index_name, fields, "ref"), es_url=es_url)
    assert res.returncode == 0 and "imported 3 of 3 rows" in res.stdout, res.stdout + res.stderr
    stored = es.get(index=index_name, id="r2")["_source"]
    assert stored["photo"] == base64.b64encode(photo + b"\x02").decode() and stored["note"] == "备注"
    assert stored["legacy"] == base64.b64encode("café".encode("latin-1")).decode()  # text of another encoding


def test_an_import_whose_every_row_is_bad_fails(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    fields, db = _small_table(
        tmp_path,
        '[fields.complaint]\nmode = "text"\n',
        "ref TEXT, complaint BLOB",
        [(k, f"r{k}", b"\xe4\xb8\xff\x41") for k in range(1, 4)],
    )
    res = _cli(*_import_args(db, index_name, fields, "ref"), es_url=es_url)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert "imported 0 of 3 rows" in res.stdout, res.stdout
    assert "skipped row 3 (id r3): column 'complaint': invalid UTF-8 at byte 0" in res.stderr, res.stderr
    assert "every row read was a bad row" in res.stderr, res.stderr
    # the mark went past them: the message says how to read them again once mended
    assert "once they are mended, the same command reads them again" in res.stderr, res.stderr


def test_a_field_that_is_no_column_is_refused_before_anything_is_written(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """A misspelt field (or one PostgreSQL folded to lower case) would make every record empty."""
    fields, db = _small_table(
        tmp_path, '[fields.contents]\nmode = "text"\n', "ref TEXT, content TEXT", [(1, "r1", "投诉内容")]
    )
    for source in (["--table", "t"], ["--query", "SELECT row_id, ref, content FROM t"]):
        args = ["import", f"sqlite:///{db}", index_name, *source, "--id-column", "ref", "--fields", str(fields)]
        res = _cli(*args, es_url=es_url)
        assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
        assert "the field configuration names 'contents', which is not a column of the rows" in res.stderr, res.stderr
        assert "(have: row_id, ref, content)" in res.stderr, res.stderr
        assert not es.indices.exists(index=index_name)


def test_a_database_that_cannot_be_opened_is_said_so(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """Not "import stopped after 0 rows ... resume from the beginning": nothing was opened, let alone read."""
    fields = tmp_path / "fields.toml"
    fields.write_text('[fields.complaint]\nmode = "text"\n', encoding="utf-8")
    (tmp_path / "a-folder.db").mkdir()
    (tmp_path / "notes.db").write_text("id,complaint\n1,hello\n", encoding="utf-8")
    urls = [
        (f"sqlite:///{tmp_path / 'a-folder.db'}", "unable to open database file"),
        (f"sqlite:///{tmp_path / 'notes.db'}", "file is not a database"),
        (f"postgresql+psycopg://u:secret@127.0.0.1:{_free_port()}/db", "127.0.0.1"),
    ]
    for url, reason in urls:
        args = ["import", url, index_name, "--table", "t", "--id-column", "id", "--fields", str(fields)]
        res = _cli(*args, es_url=es_url)
        assert res.returncode == 1 and "Traceback" not in res.stderr, (url, res.stderr)
        assert f"cannot open database {url.replace(':secret', ':***')}: " in res.stderr and reason in res.stderr, (
            url,
            res.stderr,
        )
        assert "import stopped" not in res.stderr and "resume" not in res.stderr and "secret" not in res.stderr
        assert not es.indices.exists(index=index_name)


def test_a_database_server_that_never_answers_is_given_up_on(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """A PostgreSQL URL whose host takes the connection and never speaks (as a firewall or a hung server does): the
    import gives up after NEARDUP_DB_CONNECT_TIMEOUT, where libpq alone would wait for ever."""
    pytest.importorskip("psycopg")
    fields = tmp_path / "fields.toml"
    fields.write_text('[fields.complaint]\nmode = "text"\n', encoding="utf-8")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the system completes the connection; nobody reads or answers it
        url = f"postgresql+psycopg://u@127.0.0.1:{silent.getsockname()[1]}/db"
        args = ["import", url, index_name, "--table", "t", "--id-column", "id", "--fields", str(fields)]
        res = _cli(*args, es_url=es_url, env={"NEARDUP_DB_CONNECT_TIMEOUT": "2"}, timeout=90)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert f"cannot open database {url}: " in res.stderr and "timeout" in res.stderr, res.stderr
    assert not es.indices.exists(index=index_name)


def test_an_interrupted_import_says_where_to_resume(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """Ctrl-C between batches: exit 130 and the --since value (quoted for the shell: the mark holds a space) that
    resumes it; resuming with it imports the rest."""
    texts = [a.text for a in load_peoples_daily()[:300]]
    stamps = [f"2024-05-01 {k // 60:02d}:{k % 60:02d}" for k in range(len(texts))]
    fields, db = _small_table(
        tmp_path,
        '[fields.complaint]\nmode = "text"\n',
        "ref TEXT, complaint TEXT, stamp TEXT",
        [(k + 1, f"r{k}", text, stamps[k]) for k, text in enumerate(texts)],
    )
    args = _import_args(db, index_name, fields, "ref", "--since", "stamp", "2024", "--batch-size", "1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "neardup", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ | {"NEARDUP_ES_URL": es_url},
        # as a terminal starts it: a test run in the background (CI, nohup) ignores SIGINT, and so would the child
        preexec_fn=functools.partial(signal.signal, signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if es.indices.exists(index=index_name) and es.count(index=index_name)["count"] >= 3:
                break
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()  # its pipes closed here, not left to a later test's garbage collection
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert "neardup: interrupted after" in err, err
    found = re.search(r"resume with --since stamp ('[^']*')", err)
    assert found is not None, err
    resume = shlex.split(found.group(1))[0]
    assert resume in stamps and " " in resume, resume
    rest = _cli(*_import_args(db, index_name, fields, "ref", "--since", "stamp", resume), es_url=es_url)
    assert rest.returncode == 0, rest.stderr
    assert set(_clusters(es, index_name)) == {f"r{k}" for k in range(len(texts))}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(
    proc: subprocess.Popen[bytes], data: Path, admin_url: str, url: str, setup: str | None = None
) -> Iterator[str]:
    """For a database fixture: wait until the server ``proc`` answers at ``admin_url`` (running ``setup``
    there), yield ``url``, then stop the server and remove its ``data``."""
    import sqlalchemy as sa

    engine = sa.create_engine(admin_url)
    for _ in range(100):
        try:
            with engine.begin() as conn:
                if setup is not None:
                    conn.execute(sa.text(setup))
            break
        except sa.exc.OperationalError:
            time.sleep(0.1)
    engine.dispose()
    yield url
    proc.terminate()
    proc.wait(timeout=30)
    shutil.rmtree(data, ignore_errors=True)


PG_BIN = next((p for p in sorted(Path("/usr/lib/postgresql").glob("*/bin")) if (p / "postgres").exists()), None)


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    if PG_BIN is None:
        pytest.skip("no PostgreSQL server binaries (Debian package postgresql) on this machine")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("the psycopg driver is not installed")
    run_as: list[str] = []
    if os.geteuid() == 0:  # postgres refuses to run as root
        if shutil.which("runuser") is None:
            pytest.skip("running as root without runuser: cannot start PostgreSQL")
        run_as = ["runuser", "-u", "postgres", "--"]
    data = Path(tempfile.mkdtemp(prefix="neardup-pg-"))
    if run_as:
        shutil.chown(data, "postgres")
    port = _free_port()
    subprocess.run(
        [*run_as, str(PG_BIN / "initdb"), "-D", str(data / "db"), "-U", "postgres", "-A", "trust"],
        check=True,
        capture_output=True,
    )
    proc = subprocess.Popen(
        [
            *run_as,
            str(PG_BIN / "postgres"),
            "-D",
            str(data / "db"),
            "-p",
            str(port),
            "-k",
            str(data),
            "-c",
            "listen_addresses=127.0.0.1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    yield from _serve(proc, data, url, url)


def test_postgresql_import_with_a_query(
    postgres: str, tmp_path: Path, rows: list[LabelledRecord], es_url: str, es: Elasticsearch, index_name: str
) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(postgres)
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE IF EXISTS petitions"))
        conn.execute(
            sa.text(
                "CREATE TABLE petitions (row_id SERIAL PRIMARY KEY, ref TEXT, category TEXT, district TEXT,"
                " office TEXT, date DATE, submitter TEXT, notes TEXT, complaint TEXT)"
            )
        )
        conn.execute(
            sa.text(
                f"INSERT INTO petitions (ref, {', '.join(COLUMNS)}) VALUES (:ref, "
                + ", ".join(f":{c}" for c in COLUMNS)
                + ")"
            ),
            [{"ref": r.id, **{c: r.fields[c] for c in COLUMNS}} for r in rows],
        )
    engine.dispose()
    fields = tmp_path / "fields.toml"
    fields.write_text(FIELDS_TOML, encoding="utf-8")
    res = _cli(
        "import",
        postgres,
        index_name,
        "--query",
        "SELECT * FROM petitions WHERE category IS NOT NULL AND ref::text <> 'see :ref'",  # as written: no binds
        "--id-column",
        "ref",
        "--fields",
        str(fields),
        "--since",
        "row_id",
        "0",
        es_url=es_url,
    )
    assert res.returncode == 0, res.stderr
    assert f"imported {len(rows)} of {len(rows)} rows" in res.stdout
    clusters = _clusters(es, index_name)
    scores = pairwise_scores([r.group for r in rows], [clusters[r.id] for r in rows])
    assert scores.precision >= 0.97 and scores.recall >= 0.9
    doc = es.get(index=index_name, id=rows[0].id)["_source"]
    assert doc["date"] == rows[0].fields["date"]  # a DATE column arrives as ISO text
    json.dumps(doc)


def test_an_import_that_fails_half_way_says_where_to_resume(
    postgres: str, tmp_path: Path, rows: list[LabelledRecord], es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """PostgreSQL raises "division by zero" when the cursor reaches row 41: the batches before it are
    written, the message gives the --since value that resumes after them, and resuming finishes."""
    import sqlalchemy as sa

    engine = sa.create_engine(postgres)
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE IF EXISTS boom"))
        conn.execute(sa.text("CREATE TABLE boom (row_id SERIAL PRIMARY KEY, ref TEXT, complaint TEXT)"))
        conn.execute(
            sa.text("INSERT INTO boom (ref, complaint) VALUES (:ref, :complaint)"),
            [{"ref": r.id, "complaint": r.fields["complaint"]} for r in rows[:60]],
        )
    engine.dispose()
    fields = tmp_path / "fields.toml"
    fields.write_text('[fields.complaint]\nmode = "text"\n', encoding="utf-8")
    boom = "SELECT *, 1 / (row_id - 41) AS boom FROM boom"
    res = _cli(
        "import",
        postgres,
        index_name,
        "--query",
        boom,
        "--id-column",
        "ref",
        "--fields",
        str(fields),
        "--batch-size",
        "20",
        "--since",
        "row_id",
        "0",
        es_url=es_url,
    )
    assert res.returncode == 1 and "Traceback" not in res.stderr and "division by zero" in res.stderr
    found = re.search(r"resume with --since row_id (\d+)", res.stderr)
    assert found is not None, res.stderr
    resume = int(found.group(1))
    # every row up to the mark is written, and the last row of the last batch too: a batch may end among rows
    # sharing a value, so its value is complete only when the next batch shows a larger one
    assert 0 < resume < 41 and len(_clusters(es, index_name)) == resume + 1
    fixed = "SELECT * FROM boom"
    again = _cli(
        "import",
        postgres,
        index_name,
        "--query",
        fixed,
        "--id-column",
        "ref",
        "--fields",
        str(fields),
        "--since",
        "row_id",
        str(resume),
        es_url=es_url,
    )
    assert again.returncode == 0, again.stderr
    assert f"imported {60 - resume} of {60 - resume} rows" in again.stdout
    assert len(_clusters(es, index_name)) == 60


def test_postgresql_marks_compare_as_the_column_type(
    postgres: str, tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """A stored mark and a --since given by hand are text the database reads as the column's type: a timestamp
    (in ISO form or PostgreSQL's), a zero-padded text key. A value the column's type refuses is refused before the
    index is set up."""
    import sqlalchemy as sa

    texts = [a.text for a in load_peoples_daily()[:6]]
    engine = sa.create_engine(postgres)
    insert = sa.text("INSERT INTO ev (ref, updated_at, complaint) VALUES (:ref, :at, :complaint)")
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE IF EXISTS ev"))
        conn.execute(sa.text("CREATE TABLE ev (id SERIAL PRIMARY KEY, ref TEXT, updated_at TIMESTAMP, complaint TEXT)"))
        conn.execute(
            insert,
            [{"ref": f"00{k}", "at": f"2024-05-01 0{k}:00", "complaint": texts[k - 1]} for k in range(1, 4)],
        )
    fields = tmp_path / "fields.toml"
    fields.write_text('[fields.complaint]\nmode = "text"\n', encoding="utf-8")
    base = ["import", postgres, index_name, "--id-column", "ref", "--fields", str(fields)]
    for column in ("updated_at", "ref"):
        first = _cli(*base, "--table", "ev", "--incremental", column, es_url=es_url)
        assert first.returncode == 0 and "imported 3 of 3 rows" in first.stdout, first.stderr
    with engine.begin() as conn:
        conn.execute(
            insert,
            [{"ref": f"0{k:02d}", "at": f"2024-05-01 {k:02d}:00", "complaint": texts[k - 6]} for k in (10, 11)],
        )
    engine.dispose()
    for column, mark in (("updated_at", "2024-05-01T11:00:00"), ("ref", "011")):
        again = _cli(*base, "--table", "ev", "--incremental", column, es_url=es_url)
        assert again.returncode == 0, again.stderr
        assert "imported 2 of 2 rows" in again.stdout and f"high-water mark {mark}" in again.stdout, again.stdout
    query = ["--query", "SELECT * FROM ev"]
    by_hand = _cli(*base, *query, "--since", "updated_at", "2024-05-01 02:30", es_url=es_url)
    assert by_hand.returncode == 0 and "imported 3 of 3 rows" in by_hand.stdout, by_hand.stderr
    assert set(_clusters(es, index_name)) == {"001", "002", "003", "010", "011"}

    elsewhere = f"{index_name}-new"
    try:
        refused = _cli(*base[:2], elsewhere, *base[3:], *query, "--since", "updated_at", "May 1st", es_url=es_url)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
        assert "invalid input syntax for type timestamp" in refused.stderr, refused.stderr
        assert "import stopped" not in refused.stderr and not es.indices.exists(index=elsewhere)
    finally:
        remove_indices(es, elsewhere)


MARIADBD = next((p for p in (Path("/usr/sbin/mariadbd"), Path("/usr/sbin/mysqld")) if p.exists()), None)


@pytest.fixture(scope="module")
def mariadb() -> Iterator[str]:
    """A throw-away MariaDB server from Debian's binaries (``mariadb-server``), root without a password."""
    install = shutil.which("mariadb-install-db") or shutil.which("mysql_install_db")
    if MARIADBD is None or install is None:
        pytest.skip("no MariaDB/MySQL server binaries (Debian package mariadb-server) on this machine")
    try:
        import pymysql  # noqa: F401
    except ImportError:
        pytest.skip("the PyMySQL driver is not installed")
    data = Path(tempfile.mkdtemp(prefix="neardup-mariadb-"))
    user = ["--user=mysql"] if os.geteuid() == 0 else []  # mariadbd refuses to run as root
    if user:
        shutil.chown(data, "mysql")
    subprocess.run(
        [install, "--no-defaults", f"--datadir={data / 'db'}", *user, "--auth-root-authentication-method=normal"],
        check=True,
        capture_output=True,
    )
    port = _free_port()
    proc = subprocess.Popen(
        [
            str(MARIADBD),
            "--no-defaults",
            f"--datadir={data / 'db'}",
            f"--socket={data / 'sock'}",
            f"--port={port}",
            "--bind-address=127.0.0.1",
            "--skip-name-resolve",
            "--character-set-server=utf8mb4",
            *user,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    yield from _serve(
        proc,
        data,
        f"mysql+pymysql://root@127.0.0.1:{port}/?charset=utf8mb4",
        f"mysql+pymysql://root@127.0.0.1:{port}/petitions?charset=utf8mb4",
        "CREATE DATABASE IF NOT EXISTS petitions CHARACTER SET utf8mb4",
    )


def test_mariadb_batch_then_incremental(
    mariadb: str, tmp_path: Path, rows: list[LabelledRecord], es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """MySQL's dialect through PyMySQL: a server-side cursor, DATE and DECIMAL columns, complaints kept in
    a BLOB (bytes, decoded as UTF-8; one row's bytes are not UTF-8 and are reported)."""
    import sqlalchemy as sa

    engine = sa.create_engine(mariadb)
    insert = sa.text(
        f"INSERT INTO petitions (ref, score, {', '.join(COLUMNS)}) VALUES (:ref, :score, "
        + ", ".join(f":{c}" for c in COLUMNS)
        + ")"
    )

    def params(part: list[LabelledRecord]) -> list[dict[str, object]]:
        return [
            {"ref": r.id, "score": "4.50", **{c: r.fields[c] for c in COLUMNS}}
            | {"complaint": r.fields["complaint"].encode("utf-8")}
            for r in part
        ]

    cut = int(len(rows) * 0.7)
    first, second = rows[:cut], rows[cut:]
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "CREATE TABLE petitions (row_id INT AUTO_INCREMENT PRIMARY KEY, ref VARCHAR(64), category TEXT,"
                " district TEXT, office TEXT, date DATE, submitter TEXT, notes TEXT, complaint LONGBLOB,"
                " score DECIMAL(5, 2)) CHARACTER SET utf8mb4"
            )
        )
        conn.execute(insert, params(first[:10]))
        conn.execute(
            sa.text("INSERT INTO petitions (ref, category, complaint) VALUES ('bad-utf8', '环保', :raw)"),
            {"raw": b"\xe4\xb8\xff\x41"},
        )
        conn.execute(insert, params(first[10:]))
    fields = tmp_path / "fields.toml"
    fields.write_text(FIELDS_TOML + '[fields.score]\nmode = "ignore"\n', encoding="utf-8")
    args = ["import", mariadb, index_name, "--table", "petitions", "--id-column", "ref", "--fields", str(fields)]
    args += ["--incremental", "row_id", "--batch-size", "20"]
    res = _cli(*args, es_url=es_url)
    assert res.returncode == 0, res.stderr
    assert f"imported {len(first)} of {len(first) + 1} rows" in res.stdout
    assert "skipped row 11 (id bad-utf8): column 'complaint': invalid UTF-8" in res.stderr

    with engine.begin() as conn:
        conn.execute(insert, params(second))
    engine.dispose()
    again = _cli(*args, es_url=es_url)
    assert again.returncode == 0, again.stderr
    assert f"imported {len(second)} of {len(second)} rows" in again.stdout and "started after" in again.stdout
    clusters = _clusters(es, index_name)
    assert set(clusters) == {r.id for r in rows}
    scores = pairwise_scores([r.group for r in rows], [clusters[r.id] for r in rows])
    assert scores.precision >= 0.97 and scores.recall >= 0.9
    doc = es.get(index=index_name, id=rows[0].id)["_source"]
    assert doc["date"] == rows[0].fields["date"] and doc["score"] == 4.5  # DATE as ISO text, DECIMAL as a number
    assert doc["complaint"] == rows[0].fields["complaint"]  # BLOB bytes arrive as the UTF-8 text

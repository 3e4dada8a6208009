"""``neardup import`` from a relational database into the real Elasticsearch: batch, then incremental;
bad rows reported by row and skipped. SQLite always; PostgreSQL and MariaDB when their server binaries
are here (``.ci/run`` installs them from Debian)."""

from __future__ import annotations

import json
import os
import shutil
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


def _cli(*args: str, es_url: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"NEARDUP_ES_URL": es_url}
    return subprocess.run(
        [sys.executable, "-m", "neardup", *args], capture_output=True, text=True, env=env, timeout=300, check=False
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
        "SELECT * FROM petitions WHERE category IS NOT NULL",
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
    import re

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

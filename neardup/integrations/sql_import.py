"""``neardup import``: rows of a relational database (SQLAlchemy: SQLite out of the box, PostgreSQL or
MySQL with their driver installed) → per-field fingerprints → the ingest pipeline → an index.

Rows are read in the order of the incremental column (or the id column), in batches; each batch is
flagged and written like posted documents. After every written batch the high-water mark (see
:class:`Mark`) is stored in Elasticsearch (index ``neardup-imports``), so ``--incremental COLUMN`` later
reads only newer rows, and rows Elasticsearch refused again, and checks them against everything indexed.
The mark, and a ``--since`` value, is given to the database untyped, for it to compare with the column as it
compares the column's own values (:func:`_rows`). A bad row (missing id, a value its column's type cannot read,
invalid UTF-8 in a text column or in a field) is reported by row and skipped; an import that cannot go on, or
is interrupted, says where to resume.

The index is set up (:func:`~neardup.es.client.setup_index`) only once the source is known to give rows (the
database, the table or query, the columns, the fields, the mark), so an import refused by its source leaves
nothing behind. The field
configuration is kept with the index before the first row is written, as ``PUT /v1/indices/{index}``
keeps one, so ``neardup dedupe`` and ``reconcile`` and the service read the rows as the records they are; an
index that keeps another configuration is refused.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import hashlib
import math
import re
import unicodedata
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from elasticsearch import ApiError, Elasticsearch, NotFoundError, TransportError
from sqlalchemy.engine import make_url

from neardup.errors import NeardupError, UsageError
from neardup.es.client import (
    IMPORTS_INDEX,
    count_fingerprinted_otherwise,
    create_index,
    read_record_config,
    setup_index,
    write_record_config,
)
from neardup.es.indexing import IngestConfig, ItemResult, index_batch
from neardup.es.pipeline import text_pipeline, text_pipeline_problem
from neardup.incoming.documents import Incoming
from neardup.ingest.fingerprint import Fingerprinter, Record
from neardup.ingest.records import RecordConfig, RecordError
from neardup.ingest.verify import VerifyConfig
from neardup.recent.writes import RecentWrites

__all__ = ["BadRow", "ImportInterrupted", "ImportResult", "ImportSpec", "ImportStopped", "Mark", "run_import"]

STATE_INDEX = IMPORTS_INDEX


@dataclass(frozen=True)
class ImportSpec:
    url: str
    index: str
    fields: RecordConfig
    id_column: str
    table: str | None = None
    query: str | None = None
    since: tuple[str, str] | None = None  # (column, value): only rows with column > value
    incremental: str | None = None  # column whose stored high-water mark selects new rows
    batch_size: int = 500
    connect_timeout: float | None = None  # seconds (``Settings.db_connect_timeout``); None: the driver's own

    @property
    def column(self) -> str:
        """The column the rows are read in the order of, and whose values the mark holds."""
        return self.incremental or (self.since[0] if self.since else self.id_column)


@dataclass(frozen=True)
class BadRow:
    row: int  # 1-based position in this run's read order
    id: str | None
    problem: str


@dataclass
class ImportResult:
    read: int = 0
    indexed: int = 0
    duplicates: int = 0
    failed: int = 0
    bad_rows: list[BadRow] = field(default_factory=list)
    refused: list[BadRow] = field(default_factory=list)  # rows Elasticsearch would not write, with its reason
    past_refused: Any = None  # the ordering value of the last of them: a --since that goes past them all
    high_water: Any = None
    since: Any = None
    #: rows whose ordering value the mark cannot hold (an interval, bytes that are no text): it stays below them
    unkept: int = 0


class ImportStopped(NeardupError):
    """The import stopped before the end; ``resume`` is the ``--since`` value to continue from."""

    def __init__(self, message: str, result: ImportResult, column: str, resume: Any) -> None:
        super().__init__(message)
        self.result = result
        self.column = column
        self.resume = resume


class ImportInterrupted(ImportStopped):
    """The import was interrupted (Ctrl-C) while it read or wrote rows; ``resume`` as for :class:`ImportStopped`."""


_NO_ROW = object()


class Mark:
    """An import's high-water mark: the largest value of the ordering column such that every row with that
    value or a smaller one is done (written, or reported as a bad row), so a later run reads the rows after it.

    Rows come ordered by (column, id), so a value is complete only when a row with a larger one follows, or
    the rows end: a batch may end among rows that share a value. Values are compared as the database may
    compare them, loosely (:func:`_tie_key`: text without case, accents or trailing spaces, as case- and
    accent-insensitive collations do), which can only hold the mark back a value, never skip a row. The first
    row Elasticsearch refused holds the mark below its value for the rest of the run, so the next run reads it
    again (with the rows after it, which are written again by id). A row without a value (NULL, or one that
    cannot be read) leaves the mark alone: no ``>`` comparison ever selects it again.

    >>> mark = Mark(None)
    >>> for value in (1, 2, 2):
    ...     mark.row(value, done=True)
    >>> mark.value  # rows of value 2 may follow in the next batch
    1
    >>> mark.row(3, done=True); mark.row(4, done=False); mark.row(5, done=True); mark.end()
    >>> mark.value  # 4 was refused: read again next time
    3
    >>> mark = Mark(None)
    >>> for value in ("a", "B", "b ", None):
    ...     mark.row(value, done=True)
    >>> mark.value, mark.end(), mark.value  # "B" and "b " may be one value to the database; NULLs leave it alone
    ('a', None, 'B')
    """

    def __init__(self, since: Any) -> None:
        self.value = since
        self._pending: Any = _NO_ROW
        self._held = False

    def row(self, value: Any, done: bool) -> None:
        """The next row in read order, with its column value (None: none); ``done`` False when Elasticsearch
        refused it."""
        if self._held or value is None:
            return
        if self._pending is _NO_ROW or _tie_key(value) != _tie_key(self._pending):
            if self._pending is not _NO_ROW:  # a larger value: every row of the pending one has come
                self.value = self._pending
            self._pending = value
        if not done:
            self._held = True

    def end(self) -> None:
        """The rows have all been read: the last value is complete too, unless a refused row holds the mark."""
        if not self._held and self._pending is not _NO_ROW:
            self.value = self._pending


def _tie_key(value: Any) -> Any:
    """What two values a database may call equal share: text without case, accents and trailing spaces (MySQL's
    default collations compare so); other values as they are.

    >>> _tie_key("Café  ") == _tie_key("cafe"), _tie_key(3)
    (True, 3)
    """
    if not isinstance(value, str):
        return value
    folded = unicodedata.normalize("NFKD", value.rstrip(" ")).casefold()
    return "".join(c for c in folded if not unicodedata.combining(c))


#: the drivers that take a ``connect_timeout`` in seconds covering the whole opening of a connection (libpq's, which
#: otherwise waits as long as the system's TCP retries, minutes) or its TCP connect (the MySQL drivers')
_CONNECT_TIMEOUT_DRIVERS = frozenset({"psycopg", "psycopg2", "pymysql", "mysqldb", "mariadbconnector"})


def _connect_args(url: sa.URL, timeout: float | None) -> dict[str, Any]:
    """The connect arguments neardup gives the driver: ``timeout`` as ``connect_timeout`` in whole seconds, for a
    driver that takes one, unless the URL names its own.

    >>> _connect_args(make_url("postgresql+psycopg://h/db"), 2.5)
    {'connect_timeout': 3}
    >>> _connect_args(make_url("postgresql+psycopg://h/db?connect_timeout=60"), 2.5)
    {}
    >>> _connect_args(make_url("sqlite:///rows.db"), 2.5), _connect_args(make_url("mysql+pymysql://h/db"), None)
    ({}, {})
    """
    if timeout is None or "connect_timeout" in url.query or url.get_driver_name() not in _CONNECT_TIMEOUT_DRIVERS:
        return {}
    return {"connect_timeout": math.ceil(timeout)}


def _engine(url: str, connect_timeout: float | None = None) -> sa.Engine:
    try:
        parsed = make_url(url)
        engine = sa.create_engine(parsed, connect_args=_connect_args(parsed, connect_timeout))
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError) as exc:
        raise UsageError(f"cannot use database URL {make_url_safe(url)}: {exc}") from exc
    except ImportError as exc:
        raise UsageError(f"the driver for {make_url_safe(url)} is not installed: {exc.name}") from exc
    if parsed.get_backend_name() == "sqlite":
        _check_sqlite_file(parsed)

        @sa.event.listens_for(engine, "connect")
        def _raw_text(dbapi_conn: Any, _record: Any) -> None:
            # bad UTF-8 becomes lone surrogates (found by _value): one bad row, not a crashed import
            dbapi_conn.text_factory = _decode_escaped

    return engine


def _check_sqlite_file(url: sa.URL) -> None:
    """:class:`UsageError` for a SQLite database file that does not exist: SQLite would create it, empty, and the
    import would leave that file behind reporting a missing table. (An in-memory database, or a ``file:`` URI
    with ``?uri=true``, is left to SQLite.)"""
    database = url.database
    if not database or database == ":memory:" or url.query.get("uri"):
        return
    if not Path(database).exists():
        raise UsageError(f"no such file {database!r} (database URL {url.render_as_string(hide_password=True)})")


def make_url_safe(url: str) -> str:
    """The URL without its password (for messages and the state key)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return "<unparseable URL>"


def _decode_escaped(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


_ESCAPED = re.compile("[\udc80-\udcff]")


def _value(column: str, value: Any, named: bool = True) -> Any:
    """A column's value as JSON holds it. Bytes are UTF-8 text; ``named`` False (a column that is neither the id
    nor a field of the configuration, such as a photo beside the text), bytes or text that are not UTF-8 are kept
    as base64 rather than making the row a bad row.

    >>> _value("n", decimal.Decimal("12345678901234567891")), _value("n", decimal.Decimal("2.50"))
    (12345678901234567891, 2.5)
    >>> _value("photo", b"\\x89PNG", named=False), _value("note", "备注".encode(), named=False)
    ('iVBORw==', '备注')
    >>> _value("note", _decode_escaped("café".encode("latin-1")), named=False)
    'Y2Fm6Q=='
    """
    if isinstance(value, str):
        bad = _ESCAPED.search(value)
        if bad is not None:
            if not named:
                return base64.b64encode(value.encode("utf-8", "surrogateescape")).decode("ascii")
            raise RecordError(f"column {column!r}: invalid UTF-8 at character {bad.start()}", column)
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError as exc:
            if not named:
                return base64.b64encode(value).decode("ascii")
            raise RecordError(f"column {column!r}: invalid UTF-8 at byte {exc.start}", column) from exc
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):  # a whole one exactly (a NUMERIC id past 2**53 would lose digits)
        return int(value) if value.is_finite() and value == value.to_integral_value() else float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


@dataclass(frozen=True)
class _Rows:
    """How the rows are read: ``stmt``, and ``convert``: for each column SQLite gives as it stores it (see
    :func:`_source`) whose type converts its values, that type's name and SQLAlchemy's conversion."""

    stmt: sa.Select[Any]
    convert: Mapping[str, tuple[str, Callable[[Any], Any]]]


def _rows(engine: sa.Engine, spec: ImportSpec, order: str, since: Any) -> _Rows:
    """The rows after ``since`` (the mark, or ``--since``) in the order of ``order``, checked by the database
    before anything is written: :class:`NeardupError` when it cannot be opened, :class:`UsageError` when it
    refuses the table, the query, a column or field the rows lack, or ``since`` (a value the column's type
    cannot read).

    ``since`` goes to the database untyped: PostgreSQL and MySQL read text as the column's type (a timestamp, a
    number, or text, so '009' stays text), and SQLite compares it with the column as it compares the column's
    values (see :func:`_compared`); a stored mark is a value read from the column (:func:`_mark_value`)."""
    with _opened(engine, spec.url) as conn:
        source, convert = _source(conn, spec)
        _check_columns(source, spec, order)
        stmt = sa.select(source)
        after = ""
        try:
            if since is not None:
                after = f" after {order} {since!r}"
                value = _compared(conn, source.c[order], since)
                stmt = stmt.where(source.c[order] > sa.bindparam("neardup_since", value, type_=sa.types.NullType()))
            stmt = stmt.order_by(source.c[order], source.c[spec.id_column])
            conn.execute(stmt.limit(0))
        except sa.exc.SQLAlchemyError as exc:
            raise UsageError(f"the database refused to read the rows{after}: {_reason(exc)}") from exc
    return _Rows(stmt, convert)


@contextmanager
def _opened(engine: sa.Engine, url: str) -> Iterator[sa.Connection]:
    """A connection to the database; :class:`NeardupError` "cannot open database" when there is none (no server
    there, a login refused, a SQLite file that cannot be opened or is no database)."""
    try:
        conn = engine.connect()
    except sa.exc.DBAPIError as exc:
        raise NeardupError(f"cannot open database {make_url_safe(url)}: {_reason(exc)}") from exc
    with conn:
        if engine.dialect.name == "sqlite":
            try:  # SQLite opens any file: reading its schema finds one that is no database
                conn.exec_driver_sql("PRAGMA schema_version")
            except sa.exc.DBAPIError as exc:
                raise NeardupError(f"cannot open database {make_url_safe(url)}: {_reason(exc)}") from exc
        yield conn


def _reason(exc: sa.exc.SQLAlchemyError) -> str:
    """The first line of what the database or its driver said, without SQLAlchemy's wrapping."""
    said = exc.orig if isinstance(exc, sa.exc.DBAPIError) else exc
    return (str(said).strip().splitlines() or [type(said).__name__])[0][:300]


def _source(conn: sa.Connection, spec: ImportSpec) -> tuple[Any, dict[str, tuple[str, Callable[[Any], Any]]]]:
    """The table or the query to select from, and the conversions of :class:`_Rows`. SQLite keeps any value in any
    column (an epoch number in a DATETIME one) and SQLAlchemy converts it after the driver, where one value it
    cannot read would fail the whole batch: a SQLite table is read as stored and converted row by row
    (:func:`_typed_row`). The drivers of other databases give values of the column's type."""
    if spec.table:
        try:
            table = sa.Table(spec.table, sa.MetaData(), autoload_with=conn)
        except sa.exc.NoSuchTableError as exc:
            raise UsageError(f"no table {spec.table!r} in {make_url_safe(spec.url)}") from exc
        except sa.exc.SQLAlchemyError as exc:
            raise UsageError(f"cannot read table {spec.table!r} in {make_url_safe(spec.url)}: {_reason(exc)}") from exc
        if conn.dialect.name != "sqlite":
            return table, {}
        stored = sa.table(table.name, *(sa.column(c.name) for c in table.c), schema=table.schema)
        return stored, _conversions(table, conn.dialect)
    query = _verbatim((spec.query or "").strip().rstrip(";"))
    try:  # learn the query's columns
        keys = list(conn.execute(sa.text(f"SELECT * FROM ({query}) AS neardup_probe LIMIT 0")).keys())
    except sa.exc.SQLAlchemyError as exc:
        raise UsageError(f"the database refused the query: {_reason(exc)}") from exc
    return sa.text(query).columns(*[sa.column(k) for k in keys]).subquery("neardup_rows"), {}


def _verbatim(query: str) -> str:
    """``query`` for :func:`sqlalchemy.text` to pass on as written: every colon escaped, since ``text`` reads
    ``:name`` as a parameter to bind, even inside a quoted literal, and the user's query has none.

    >>> str(sa.text(_verbatim("SELECT * FROM t WHERE note <> 'see :below' AND n::text <> ':'")))
    "SELECT * FROM t WHERE note <> 'see :below' AND n::text <> ':'"
    """
    return query.replace(":", "\\:")


def _conversions(table: sa.Table, dialect: sa.Dialect) -> dict[str, tuple[str, Callable[[Any], Any]]]:
    """For each column of ``table`` whose type converts what the driver gives (SQLite text into a datetime, a float
    into a Decimal), the type's name and the conversion SQLAlchemy makes."""
    found: dict[str, tuple[str, Callable[[Any], Any]]] = {}
    for column in table.c:
        convert = column.type.dialect_impl(dialect).result_processor(dialect, None)
        if convert is not None:
            found[column.name] = (column.type.compile(dialect=dialect), convert)
    return found


def _typed_row(raw: Mapping[str, Any], convert: Mapping[str, tuple[str, Callable[[Any], Any]]]) -> dict[str, Any]:
    """``raw`` with the values of the columns in ``convert`` converted to their type; :class:`RecordError` for a
    value the type cannot read (that row is a bad row)."""
    row = dict(raw)
    for name, (type_name, to_type) in convert.items():
        value = row.get(name)
        if value is None:
            continue
        try:
            row[name] = to_type(value)
        except (TypeError, ValueError, ArithmeticError) as exc:
            shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
            raise RecordError(f"column {name!r}: cannot read {shown} as {type_name}", name) from exc
    return row


def _check_columns(source: Any, spec: ImportSpec, order: str) -> None:
    """:class:`UsageError` for an ordering column, id column or configured field the rows do not have (a field
    missing would leave every record without it, as if empty)."""
    have = ", ".join(source.c.keys())
    if order not in source.c:
        raise UsageError(f"column {order!r} is not in the rows (have: {have})")
    if spec.id_column not in source.c:
        raise UsageError(f"id column {spec.id_column!r} is not in the rows (have: {have})")
    missing = [name for name in spec.fields.fields if name not in source.c]
    if missing:
        names = ", ".join(repr(name) for name in missing)
        which = "is not a column" if len(missing) == 1 else "are not columns"
        raise UsageError(f"the field configuration names {names}, which {which} of the rows (have: {have})")


_ISO_T = re.compile(r"\d{4}-\d\d-\d\dT\d")


def _compared(conn: sa.Connection, column: Any, value: Any) -> Any:
    """``value`` as ``column`` is compared with it: as it is, except on SQLite a date and time in ISO form with a
    space for its T, and a text value as a number when the column holds numbers. SQLite reads text as a number
    itself for a column declared numeric, but not for an expression of a query, where every number orders before
    any text (no row would be after it). '009' for a column of text stays text."""
    if conn.dialect.name != "sqlite" or not isinstance(value, str):
        return value
    if _ISO_T.match(value):
        # SQLite stores a datetime with a space where ISO puts its T, and compares the two as text: a value with the
        # T (a mark kept in that form, one typed by hand) would pass over the rows later on its day. With the space
        # it orders at or before every stored form of that time: rows are at worst read again, never skipped
        return value.replace("T", " ", 1)
    held = conn.execute(sa.select(column).where(column.is_not(None)).limit(1)).scalar()
    if isinstance(held, bool) or not isinstance(held, (int, float)):
        return value
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            continue
    return value


def _mark_value(value: Any) -> Any:
    """An ordering column's value as the mark keeps it (JSON, in ``neardup-imports``) and gives it back to the
    database: numbers and text as they are, a date or time in ISO form, a decimal as an exact number (whole) or
    text; None for a value it cannot keep (bytes that are no UTF-8 text, text with invalid UTF-8, another kind),
    which leaves the mark alone.

    >>> _mark_value(dt.datetime(2024, 5, 1, 10)), _mark_value(decimal.Decimal("2.50")), _mark_value("009")
    ('2024-05-01T10:00:00', '2.5', '009')
    """
    if isinstance(value, decimal.Decimal) and not (value.is_finite() and value == value.to_integral_value()):
        return str(value.normalize())  # exact, and one text for equal values ('2.50', '2.5')
    try:
        kept = _value("", value)
    except RecordError:
        return None
    return kept if isinstance(kept, (bool, int, float, str)) else None


def _state_id(spec: ImportSpec, column: str) -> str:
    key = f"{make_url_safe(spec.url)}|{spec.table or spec.query}|{spec.index}|{column}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _stored_mark(client: Elasticsearch, spec: ImportSpec, column: str) -> Any:
    try:
        return client.get(index=STATE_INDEX, id=_state_id(spec, column))["_source"]["high_water"]
    except NotFoundError:
        return None


_STATE_MAPPING = {
    "dynamic": False,
    "properties": {k: {"type": "keyword"} for k in ("source", "table", "index", "column")}
    | {"updated_at": {"type": "date"}},
}


def _store_mark(client: Elasticsearch, spec: ImportSpec, column: str, value: Any) -> None:
    create_index(client, STATE_INDEX, _STATE_MAPPING)
    doc = {
        "source": make_url_safe(spec.url),
        "table": spec.table,
        "query": spec.query,
        "index": spec.index,
        "column": column,
        "high_water": value,
        "updated_at": dt.datetime.now(dt.UTC).isoformat(),
    }
    client.index(index=STATE_INDEX, id=_state_id(spec, column), document=doc)


def _batches(engine: sa.Engine, stmt: sa.Select[Any], size: int) -> Iterator[list[Mapping[str, Any]]]:
    with engine.connect() as conn:
        result = conn.execution_options(stream_results=True, yield_per=size).execute(stmt)
        for part in result.mappings().partitions(size):
            yield [dict(r) for r in part]


def run_import(
    client: Elasticsearch,
    spec: ImportSpec,
    fingerprinter: Fingerprinter,
    progress: Callable[[ImportResult], None] | None = None,
    ingest: IngestConfig | None = None,
) -> ImportResult:
    """Import the rows (see the module doc); raises :class:`ImportStopped` when it cannot go on, and
    :class:`ImportInterrupted` for a KeyboardInterrupt once rows are being read. ``ingest``: the candidate settings
    (:meth:`IngestConfig.from_settings`); the verification is the field configuration's."""
    column = spec.column
    since: Any = spec.since[1] if spec.since else None
    if spec.incremental and since is None:
        since = _stored_mark(client, spec, column)
    pipeline = text_pipeline(client, spec.index)  # records there would fail other clients' writes
    if pipeline is not None:
        raise UsageError(text_pipeline_problem(spec.index, pipeline))
    engine = _engine(spec.url, spec.connect_timeout)
    result = ImportResult(since=since, high_water=since)
    config = replace(
        ingest or IngestConfig(),
        verify=spec.fields.verify_config(VerifyConfig()),
        refresh="wait_for",
        atomic=False,
    )
    mark = Mark(since)
    stopped = (sa.exc.SQLAlchemyError, ApiError, TransportError, OSError)
    try:
        rows = _rows(engine, spec, column, since)
        # once the rows can be read: an import refused by its source leaves no index. Elasticsearch refusing the
        # set-up is its own error, not an import stopped after 0 rows: nothing was read yet
        setup_index(client, spec.index)
        _keep_fields(client, spec.index, spec.fields, fingerprinter.record_version(spec.fields))
        try:
            _import_rows(client, spec, fingerprinter, config, rows, engine, column, mark, result, progress)
        except stopped as exc:
            raise _stopped(exc, result, column, mark) from exc
        except KeyboardInterrupt as exc:
            raise ImportInterrupted(f"interrupted after {result.read} rows", result, column, mark.value) from exc
    finally:
        engine.dispose()
    return result


def _stopped(exc: BaseException, result: ImportResult, column: str, mark: Mark) -> ImportStopped:
    reason = (str(exc).splitlines() or [""])[0][:200]
    return ImportStopped(
        f"import stopped after {result.read} rows: {type(exc).__name__}: {reason}", result, column, mark.value
    )


def _import_rows(
    client: Elasticsearch,
    spec: ImportSpec,
    fingerprinter: Fingerprinter,
    config: IngestConfig,
    rows: _Rows,
    engine: sa.Engine,
    column: str,
    mark: Mark,
    result: ImportResult,
    progress: Callable[[ImportResult], None] | None,
) -> None:
    """Read ``rows`` in batches and write them, advancing ``mark`` and ``result`` as they are. The id and the
    configured fields must be text where they are bytes; another column's bytes may be any (:func:`_value`)."""
    named = {spec.id_column, *spec.fields.fields}
    for batch in _batches(engine, rows.stmt, spec.batch_size):
        docs: list[Incoming] = []
        records: list[Record] = []
        doc_of_row: list[int | None] = []  # each row's place among docs; None for a bad row
        row_of_doc: list[int] = []  # each doc's row number in this run's read order
        order_values: list[Any] = []  # each row's ordering value as the mark keeps it (:func:`_mark_value`)
        for raw in batch:
            result.read += 1
            rid = raw.get(spec.id_column)
            order_values.append(_mark_value(raw[column]))
            if order_values[-1] is None and raw[column] is not None:
                result.unkept += 1
            try:
                if rid is None or (isinstance(rid, str) and not rid.strip()):
                    raise RecordError(f"id column {spec.id_column!r} is empty")
                row = {k: _value(k, v, k in named) for k, v in _typed_row(raw, rows.convert).items()}
                record = fingerprinter.fingerprint_record(row, spec.fields)
            except RecordError as exc:
                result.bad_rows.append(BadRow(result.read, None if rid is None else str(rid), str(exc)))
                doc_of_row.append(None)
                continue
            doc_of_row.append(len(docs))
            row_of_doc.append(result.read)
            docs.append(Incoming(str(row[spec.id_column]), None, None, row))
            records.append(record)
        written = [True] * len(docs)
        if docs:
            items = _write(client, spec.index, docs, fingerprinter, config, records)
            written = [i.written for i in items]
            result.indexed += sum(written)
            result.duplicates += sum(1 for i in items if i.duplicate_of)
            result.failed += written.count(False)
            result.refused += [
                BadRow(row_of_doc[k], item.id, item.error or item.status)
                for k, item in enumerate(items)
                if not item.written
            ]
        for value, at in zip(order_values, doc_of_row, strict=True):
            mark.row(value, done=at is None or written[at])
            if at is not None and not written[at]:
                result.past_refused = value
        _advance(client, spec, column, mark, result)
        if progress is not None:
            progress(result)
    mark.end()
    _advance(client, spec, column, mark, result)


def _keep_fields(client: Elasticsearch, index: str, fields: RecordConfig, version: str) -> None:
    """Keep ``fields`` with ``index`` (:func:`write_record_config`, as ``PUT /v1/indices/{index}`` does), so what
    reads the index later (``neardup dedupe`` and ``reconcile``, the service) fingerprints its documents as these
    records, not as text (``version``: what these records are fingerprinted as). An index that keeps the same
    configuration is left as it is; one that keeps another, or keeps none and holds other documents than these
    records, is a :class:`UsageError`: its documents were fingerprinted otherwise, and rows fingerprinted by this
    one would not be compared with them."""
    stored = read_record_config(client, index)
    if not stored:
        # documents of another kind (texts, or written by other clients) would be read as records from now on;
        # rows of this configuration an import wrote before it kept its configuration are these records
        other = count_fingerprinted_otherwise(client, index, version)
        if other:
            raise UsageError(
                f"index {index!r} holds {other} documents that are not records of this field configuration (texts, "
                "or documents neardup did not write): import into a new index, or one set up for these records "
                f"with PUT /v1/indices/{index}"
            )
        write_record_config(client, index, fields.as_data())
        return
    kept = RecordConfig.parse(stored, strict=False)
    if kept.describe() == fields.describe():
        return
    raise UsageError(
        f"index {index!r} keeps another field configuration (differing in {', '.join(_differences(kept, fields))}): "
        "its documents are fingerprinted by that one. Import with the same configuration or into another index; "
        f"to change the index's, PUT /v1/indices/{index} with the new one, then `neardup dedupe {index}` "
        "fingerprints its documents by it"
    )


def _differences(kept: RecordConfig, given: RecordConfig) -> list[str]:
    """What two configurations set apart, for a message.

    >>> kept = RecordConfig.parse({"fields": {"a": {"mode": "text"}, "b": {"mode": "value"}}})
    >>> _differences(kept, RecordConfig.parse({"fields": {"a": {"mode": "text"}, "c": {"mode": "set"}}, "mu": 0.5}))
    ["field 'b'", "field 'c'", 'mu']
    """
    names = sorted(set(kept.fields) | set(given.fields))
    found = [f"field {n!r}" for n in names if kept.fields.get(n) != given.fields.get(n)]
    found += [k for k in ("mu", "min_combined") if getattr(kept, k) != getattr(given, k)]
    return found or ["how records are read"]


#: how long the pieces of one batch remember what the earlier ones wrote: longer than writing them takes
_PIECES_SECONDS = 600.0


def _write(
    client: Elasticsearch,
    index: str,
    docs: list[Incoming],
    fingerprinter: Fingerprinter,
    config: IngestConfig,
    records: list[Record],
) -> list[ItemResult]:
    """:func:`index_batch` of rows in read order, cut wherever an id comes again (a table of revisions has one id
    on several rows): each copy is written after the one before it, the last one staying, as reading row by row
    would leave it. The pieces find each other through a window of what the earlier ones wrote, so only the last
    waits for a refresh."""
    items: list[ItemResult] = []
    recent = RecentWrites(_PIECES_SECONDS)
    start = 0
    while start < len(docs):
        seen: set[str] = set()
        end = start
        while end < len(docs) and docs[end].id not in seen:
            seen.add(docs[end].id)
            end += 1
        piece = config if end == len(docs) else replace(config, refresh="false")
        items += index_batch(client, index, docs[start:end], fingerprinter, piece, records[start:end], recent=recent)
        start = end
    return items


def _advance(client: Elasticsearch, spec: ImportSpec, column: str, mark: Mark, result: ImportResult) -> None:
    """Report the mark, and store it for ``--incremental`` when it moved."""
    if mark.value != result.high_water:
        result.high_water = mark.value
        if spec.incremental:
            _store_mark(client, spec, column, mark.value)

"""Commands that work on an Elasticsearch index: ``setup``, ``index``, ``dedupe``, ``reconcile``, ``import``,
``serve`` and ``kibana import``.

Elasticsearch comes from ``--es-url`` or ``NEARDUP_ES_URL``; a progress bar shows long work on a terminal.
"""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path
from typing import Any

import click
from tqdm import tqdm

from neardup.config import Settings
from neardup.errors import NeardupError, UsageError
from neardup.es.batch import BatchConfig, NoTextField, Progress, check_text_field, dedupe, read_fields, reconcile
from neardup.es.client import (
    IndexInfo,
    inspect_index,
    is_internal_index,
    location,
    make_client,
    not_written_to,
    record_config,
    setup_index,
    validate_index_name,
)
from neardup.es.indexing import IngestConfig, index_batch
from neardup.es.jobs import run_job
from neardup.es.lookup import has_verify_script
from neardup.es.pipeline import check_pipeline, install_pipeline, use_pipeline
from neardup.incoming.documents import DocumentFields, Incoming
from neardup.ingest.fingerprint import Fingerprinter
from neardup.ingest.pool import FingerprintPool
from neardup.ingest.records import RecordConfig, RecordError
from neardup.integrations.kibana import import_objects, load_objects, saved_objects_path
from neardup.integrations.sql_import import ImportInterrupted, ImportSpec, ImportStopped, make_url_safe, run_import
from neardup.recent.writes import RecentWrites
from neardup.service.server import serve

from .common import EXIT_INTERRUPTED, fail, reports_errors
from .offline import InputDoc, read_from, read_jsonl

__all__ = [
    "dedupe_cmd",
    "import_cmd",
    "index_cmd",
    "kibana",
    "reconcile_cmd",
    "serve_cmd",
    "setup_cmd",
]

_es_url = click.option(
    "--es-url",
    envvar="NEARDUP_ES_URL",
    default=None,
    help="Elasticsearch URL, or several nodes' separated by commas (default http://127.0.0.1:9200).",
)


class _Bars:
    """A tqdm bar per stage of a batch job."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bars: dict[str, tqdm[Any]] = {}

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        bar = self.bars.get(stage)
        if bar is None:
            bar = self.bars[stage] = tqdm(
                total=total, desc=stage, unit="doc", disable=not self.enabled, file=sys.stderr
            )
        bar.total = total
        bar.n = done
        bar.refresh()

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()


#: how many refused documents `neardup index` names one by one (the rest are counted)
_ERRORS_SHOWN = 20


def _target(index: str) -> str:
    """``index`` as the index a command works on: a valid name, and none of neardup's own indices (its jobs and
    imports) or Elasticsearch's (as the service refuses them)."""
    validate_index_name(index)
    if is_internal_index(index):
        raise UsageError(f"index {index!r} is internal to neardup or Elasticsearch: name an index of your own")
    return index


def _index_itself(client: Any, index: str) -> IndexInfo:
    """What ``index`` is; UsageError when neardup does not write to it (:func:`not_written_to`, which the service
    answers with 400 ``not_an_index``)."""
    info = inspect_index(client, index)
    problem = not_written_to(info)
    if problem:
        raise UsageError(f"{problem}: name the index")
    return info


@click.command("setup")
@click.argument("index")
@_es_url
@click.option(
    "--pipeline",
    is_flag=True,
    help="Also install the neardup ingest pipeline and make it INDEX's default pipeline, so any client's writes "
    "are fingerprinted inside Elasticsearch (needs the neardup plugin on the cluster).",
)
@click.option(
    "--flag",
    is_flag=True,
    help="With --pipeline: the pipeline also assigns near-duplicate clusters inside Elasticsearch (neardup-flag).",
)
@click.pass_context
@reports_errors
def setup_cmd(ctx: click.Context, index: str, es_url: str | None, pipeline: bool, flag: bool) -> None:
    """Install the neardup templates and create INDEX (idempotent)."""
    if flag and not pipeline:
        raise click.UsageError("--flag applies to the pipeline: use --pipeline --flag")
    _target(index)
    settings = Settings.from_env(es_url=es_url)
    client = make_client(settings)
    _index_itself(client, index)
    if pipeline:
        check_pipeline(client, index)  # before anything changes
    created = setup_index(client, index)
    click.echo(f"{'created' if created else 'updated'} index {index} with the neardup mappings")
    if pipeline:
        installed = install_pipeline(client, flag, settings)
        use_pipeline(client, index, installed)
        click.echo(f"installed ingest pipeline {installed}; it is the default pipeline of {index}")


@click.command("index")
@click.argument("index")
@click.argument("input_path", metavar="FILE.jsonl", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option("--id-field", default="id", show_default=True)
@click.option("--text-field", default="text", show_default=True)
@click.option("--title-field", default="title", show_default=True)
@click.option("--batch-size", type=click.IntRange(1, 5000), default=500, show_default=True)
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True)
@click.option("--skip-invalid", is_flag=True, help="Skip and report bad lines instead of stopping before any write.")
@_es_url
@reports_errors
def index_cmd(
    index: str,
    input_path: Path,
    id_field: str,
    text_field: str,
    title_field: str,
    batch_size: int,
    workers: int,
    skip_invalid: bool,
    es_url: str | None,
) -> None:
    """Flag and index FILE.jsonl (- reads standard input) into INDEX as the service does (each line checked first;
    a text longer than NEARDUP_MAX_TEXT_CHARS is a bad line, as the service refuses it)."""
    _target(index)
    settings = Settings.from_env(es_url=es_url)
    try:
        with read_from(input_path) as handle:  # decoded line by line: a line that is not UTF-8 is one bad line
            fields = DocumentFields(id_field, text_field, title_field)
            limit = settings.max_text_chars
            lines = list(read_jsonl(handle, fields, skip_invalid, check=Incoming.check_storable, max_chars=limit))
            docs = [d for d in lines if isinstance(d, InputDoc)]
    except OSError as exc:
        raise UsageError(f"cannot read {input_path}: {exc.strerror}") from exc
    for problem in lines:
        if isinstance(problem, str):
            click.echo(f"  skipped {problem}", err=True)
    skipped = len(lines) - len(docs)
    client = make_client(settings)
    _index_itself(client, index)
    if record_config(client, index) is not None:
        raise UsageError(
            f"index {index!r} holds records read by its field configuration; write them with `neardup import` "
            f"or POST /v1/indices/{index}/documents, not as texts"
        )
    setup_index(client, index)
    fingerprinter = Fingerprinter.default()
    # refused lines are reported one by one; the others stay
    config = IngestConfig.from_settings(settings, atomic=False, in_es=has_verify_script(client))
    recent = RecentWrites(settings.recent_seconds)  # each batch finds the ones before it without waiting for a refresh
    bar = tqdm(total=len(docs), unit="doc", desc="index", disable=not sys.stderr.isatty(), file=sys.stderr)
    written = duplicates = failed = unanswered = 0
    started = time.perf_counter()
    line = docs[0].line if docs else 0
    try:
        with FingerprintPool(workers) as pool:
            for k in range(0, len(docs), batch_size):
                chunk = docs[k : k + batch_size]
                line = chunk[0].line
                records = pool.fingerprint([(d.doc.text or "", d.doc.title) for d in chunk])
                items = index_batch(
                    client, index, [d.doc for d in chunk], fingerprinter, config, records, recent=recent
                )
                written += sum(1 for i in items if i.written)
                duplicates += sum(1 for i in items if i.duplicate_of)
                for item in (i for i in items if i.status == "error"):
                    failed += 1
                    unanswered += item.unanswered
                    if failed <= _ERRORS_SHOWN:
                        click.echo(f"  {item.id}: {item.error}", err=True)
                bar.update(len(chunk))
                line = 0
        client.indices.refresh(index=index)  # searchable when the command returns
    except BaseException:  # Elasticsearch gone, a refusal, Ctrl-C: where to resume from, then the error
        bar.close()
        where = f"stopped at line {line}; {written} documents before it" if line else f"stopped; {written} documents"
        click.echo(
            f"neardup: {where} are indexed. Re-run the same command to resume (documents are written by id).",
            err=True,
        )
        raise
    bar.close()
    if failed > _ERRORS_SHOWN:
        click.echo(f"  … and {failed - _ERRORS_SHOWN} more documents refused", err=True)
    click.echo(
        f"indexed {written} documents into {index}: {duplicates} flagged as near-duplicates, "
        f"{failed} failed, "
        + (f"{skipped} bad lines skipped, " if skip_invalid else "")
        + f"{time.perf_counter() - started:.1f}s",
        err=True,
    )
    if unanswered:
        click.echo(
            f"{unanswered} of the failed documents got no answer and may be written or not: run the same command "
            "again to write them (documents are written by id)",
            err=True,
        )
    if failed:
        sys.exit(1)


@click.command("dedupe")
@click.argument("index")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True)
@click.option("--text-field", default="text", show_default=True)
@click.option("--title-field", default="title", show_default=True)
@click.option(
    "--fingerprint-in-es/--fingerprint-here",
    default=None,
    help="Fingerprint texts with the cluster's neardup ingest processor (the plugin), or in --workers processes "
    "here; the same fingerprints either way. Default: NEARDUP_FINGERPRINT_IN_ES or NEARDUP_FLAG_IN_ES (false).",
)
@_es_url
@reports_errors
def dedupe_cmd(
    index: str, workers: int, text_field: str, title_field: str, fingerprint_in_es: bool | None, es_url: str | None
) -> None:
    """Fingerprint and cluster every document of INDEX (resumable, safe to re-run)."""
    client = _existing(index, es_url)
    config = BatchConfig(
        workers=workers,
        text_field=text_field,
        title_field=title_field,
        record=record_config(client, index),
        fingerprint_in_es=Settings.from_env().fingerprints_in_es if fingerprint_in_es is None else fingerprint_in_es,
    )
    fingerprinter = Fingerprinter.default()
    bars = _Bars(sys.stderr.isatty())
    try:
        check_text_field(client, index, config)  # before the set-up: a refused dedupe leaves the mapping as it was
        setup_index(client, index)
        result = run_job(
            client, "dedupe", index, lambda job: dedupe(client, index, fingerprinter, config, _both(job, bars))
        )
    except NoTextField as exc:
        raise UsageError(f"{exc}; if the text is in another field, name it with --text-field") from exc
    finally:
        bars.close()
    no_text = result.get("no_text") or 0
    which = "1 document has" if no_text == 1 else f"{no_text} documents have"
    _report(
        result,
        f"{which} no text in field {text_field!r}: left out, neither fingerprinted nor clustered; "
        "if the text is in another field, name it with --text-field"
        if no_text
        else None,
    )


@click.command("reconcile")
@click.argument("index")
@_es_url
@reports_errors
def reconcile_cmd(index: str, es_url: str | None) -> None:
    """Merge clusters split by concurrent ingest, from stored fingerprints only."""
    client = _existing(index, es_url)
    setup_index(client, index)
    bars = _Bars(sys.stderr.isatty())
    try:
        # the version the last dedupe wrote: the text and title fields it read are part of it
        fields = read_fields(client, index)
        config = BatchConfig(
            record=record_config(client, index), text_field=fields["text_field"], title_field=fields["title_field"]
        )
        version = config.version(Fingerprinter.default())
        result = run_job(
            client, "reconcile", index, lambda job: reconcile(client, index, version, config, _both(job, bars))
        )
    finally:
        bars.close()
    unread = not result.get("documents") and client.count(index=index)["count"] > 0
    hint = f"no document of {index} holds fingerprints of version {version}: `neardup dedupe {index}` fingerprints"
    _report(result, f"{hint} and clusters it" if unread else None)


def _both(job: Progress, bars: Progress) -> Progress:
    """The job's progress (its record, and where it stops when its lock was taken over) and the bars."""

    def progress(stage: str, done: int, total: int | None) -> None:
        job(stage, done, total)
        bars(stage, done, total)

    return progress


def _existing(index: str, es_url: str | None) -> Any:
    """A client of the cluster holding ``index`` (which it does not change)."""
    _target(index)
    client = make_client(Settings.from_env(es_url=es_url))
    if _index_itself(client, index).kind == "missing":
        raise UsageError(f"no index {index!r} at {location(client)}")
    return client


def _report(result: dict[str, Any], note: str | None = None) -> None:
    """The result on one line of ``key=value``; then ``note``, if any, the first record the field configuration
    refused, and failures, on stderr."""
    click.echo(" ".join(f"{k}={v}" for k, v in result.items() if not k.startswith("first_")))
    if note:
        click.echo(f"neardup: {note}", err=True)
    refused = result.get("refused_records")
    if refused:
        first = result.get("first_refused_record") or {}
        which = "1 record was" if refused == 1 else f"{refused} records were"
        click.echo(
            f"neardup: {which} refused by the field configuration, e.g. {first.get('id')!r}: {first.get('reason')}; "
            "left out, neither fingerprinted nor clustered",
            err=True,
        )
    if result.get("failures") or result.get("fingerprint_failures"):
        example = result.get("first_fingerprint_failure") or result.get("first_failure")
        click.echo(f"neardup: some updates failed, e.g. {example}; re-run to retry", err=True)
        sys.exit(1)


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--workers", type=click.IntRange(1, 64), default=2, show_default=True)
@_es_url
@reports_errors
def serve_cmd(host: str, port: int, workers: int, es_url: str | None) -> None:
    """Run the HTTP service (gunicorn, several worker processes)."""
    serve(Settings.from_env(es_url=es_url), host, port, workers)


@click.group("kibana")
def kibana() -> None:
    """Kibana dashboards of duplicate clusters."""


@kibana.command("import")
@click.option("--kibana-url", envvar="NEARDUP_KIBANA_URL", default="http://127.0.0.1:5601", show_default=True)
@click.option("--index-pattern", default=None, help="Indices the data view covers (default: demo-news).")
@click.option("--file", "path", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None)
@click.option(
    "--username",
    envvar=["NEARDUP_KIBANA_USERNAME", "NEARDUP_ES_USERNAME"],
    default=None,
    help="A user of Kibana's security (Elasticsearch's users; default NEARDUP_ES_USERNAME).",
)
@click.option("--password", envvar=["NEARDUP_KIBANA_PASSWORD", "NEARDUP_ES_PASSWORD"], default=None)
@click.option("--api-key", envvar=["NEARDUP_KIBANA_API_KEY", "NEARDUP_ES_API_KEY"], default=None)
@reports_errors
def kibana_import(
    kibana_url: str,
    index_pattern: str | None,
    path: Path | None,
    username: str | None,
    password: str | None,
    api_key: str | None,
) -> None:
    """Import the data view and the "Duplicate clusters" dashboard into Kibana (overwriting what an earlier import
    for the same --index-pattern made)."""
    if (username is None) != (password is None):
        raise UsageError("give --username and --password together")
    auth = (username, password) if username is not None and password is not None else None
    objects = load_objects(path or saved_objects_path(), index_pattern)
    result = import_objects(kibana_url, objects, basic_auth=auth, api_key=api_key)
    click.echo(f"imported {result.get('successCount', 0)} saved objects into {kibana_url}")


@click.command("import")
@click.argument("url")
@click.argument("index")
@click.option("--table", default=None, help="Read this table (or give --query).")
@click.option("--query", default=None, help="Read the rows of this SELECT.")
@click.option("--id-column", required=True, help="Column whose value becomes the document id.")
@click.option(
    "--fields",
    "fields_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Per-field configuration (TOML or JSON).",
)
@click.option("--since", nargs=2, default=None, metavar="COLUMN VALUE", help="Only rows with COLUMN > VALUE.")
@click.option(
    "--incremental",
    default=None,
    metavar="COLUMN",
    help="Only rows after the stored high-water mark of COLUMN; the mark is updated as batches land.",
)
@click.option("--batch-size", type=click.IntRange(1, 5000), default=500, show_default=True)
@_es_url
@reports_errors
def import_cmd(
    url: str,
    index: str,
    table: str | None,
    query: str | None,
    id_column: str,
    fields_path: Path,
    since: tuple[str, str] | None,
    incremental: str | None,
    batch_size: int,
    es_url: str | None,
) -> None:
    """Import rows of a relational database (SQLAlchemy URL, e.g. sqlite:///file.db) into INDEX."""
    _target(index)
    if (table is None) == (query is None):
        raise UsageError("give exactly one of --table and --query")
    if since and incremental and since[0] != incremental:
        raise UsageError("--since and --incremental must name the same column")
    try:
        fields = RecordConfig.load(fields_path)
    except RecordError as exc:
        raise UsageError(str(exc)) from exc
    settings = Settings.from_env(es_url=es_url)
    spec = ImportSpec(
        url, index, fields, id_column, table, query, since, incremental, batch_size, settings.db_connect_timeout
    )
    client = make_client(settings)
    _index_itself(client, index)
    bar = tqdm(unit="row", desc="import", disable=not sys.stderr.isatty(), file=sys.stderr)

    def progress(result: Any) -> None:
        bar.n = result.read
        bar.refresh()

    try:
        result = run_import(client, spec, Fingerprinter.default(), progress, IngestConfig.from_settings(settings))
    except ImportStopped as exc:
        bar.close()
        _bad_rows(exc.result.bad_rows)
        _bad_rows(exc.result.refused, "Elasticsearch refused")
        if isinstance(exc, ImportInterrupted):
            fail(f"{exc}; {_resume_hint(exc, incremental)}", EXIT_INTERRUPTED)
        raise NeardupError(f"{exc}; {_resume_hint(exc, incremental)}") from exc
    bar.close()
    _bad_rows(result.bad_rows)
    _bad_rows(result.refused, "Elasticsearch refused")
    click.echo(
        f"imported {result.indexed} of {result.read} rows from {make_url_safe(url)} into {index}: "
        f"{result.duplicates} flagged as near-duplicates, {len(result.bad_rows)} bad rows skipped, "
        f"{result.failed} failed; high-water mark {result.high_water}"
        + (f" (started after {result.since})" if result.since is not None else "")
        + (
            f"; the next --incremental run reads them again (or with {_since(incremental, result.past_refused)}, "
            "the rows after them only)"
            if result.failed and incremental
            else ""
        )
    )
    if result.unkept and incremental:
        click.echo(
            f"neardup: {result.unkept} rows have a value of {spec.column} the high-water mark cannot hold (an "
            "interval, bytes that are not text), so the mark does not move on them and --incremental reads them "
            "again: order by a column of numbers, text or times",
            err=True,
        )
    if result.read and len(result.bad_rows) == result.read:
        # the mark went past them (a bad row is done, as one the data must mend): say how to read them again
        plain = "the same command" + (" without --incremental" if incremental else "")
        again = _since(spec.column, result.since) if result.since is not None else plain
        fail(f"every row read was a bad row: none was imported; once they are mended, {again} reads them again")
    if result.failed:
        sys.exit(1)


def _resume_hint(stopped: ImportStopped, incremental: str | None) -> str:
    """Where a stopped import goes on: the ``--since`` that resumes it, or the beginning."""
    if stopped.resume is None:
        return "no row is known to be done yet: resume from the beginning"
    again = " (or run it again as it is: --incremental reads on from there)" if incremental else ""
    return (
        f"rows up to {stopped.column}={stopped.resume} are indexed, resume with "
        f"{_since(stopped.column, stopped.resume)}{again}"
    )


def _since(column: str | None, value: Any) -> str:
    """A ``--since`` option as a shell reads it (a value or column with spaces quoted)."""
    return f"--since {shlex.quote(str(column))} {shlex.quote(str(value))}"


def _bad_rows(rows: list[Any], what: str = "skipped") -> None:
    for bad in rows:
        click.echo(f"  {what} row {bad.row} (id {bad.id}): {bad.problem}", err=True)

"""Offline commands: ``fingerprint``, ``cluster``, ``idf fit`` and ``eval`` (no Elasticsearch)."""

from __future__ import annotations

import io
import json
import os
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

import click
from tqdm import tqdm

from neardup.config import Settings
from neardup.errors import UsageError
from neardup.evaluation.metrics import pairwise_scores
from neardup.evaluation.report import DEFAULT_GROUPS, DEFAULT_SEEDS, DEFAULT_SINGLES, run_eval
from neardup.incoming.documents import DocumentError, DocumentFields, Incoming, validate_document
from neardup.incoming.json_input import JSONRefused, decode_json, decode_text
from neardup.ingest.bits import to_hex, to_signed
from neardup.ingest.cluster import cluster_records
from neardup.ingest.fingerprint import FingerprintConfig, Fingerprinter, Record
from neardup.ingest.normalize import normalize
from neardup.ingest.pool import FingerprintPool
from neardup.ingest.records import RecordConfig, RecordError
from neardup.ingest.segment import Segmenter
from neardup.ingest.verify import VerifyConfig
from neardup.ingest.weights import IdfTable, WeightConfig, fit_idf

from .common import fail, reports_errors

__all__ = [
    "InputDoc",
    "cluster_cmd",
    "eval_cmd",
    "fingerprint_all",
    "fingerprint_cmd",
    "idf",
    "read_from",
    "read_jsonl",
]

_R = TypeVar("_R")


@dataclass(frozen=True)
class InputDoc:
    """A validated document of a JSON-lines file and the line it came from."""

    line: int
    doc: Incoming

    @property
    def id(self) -> str:
        return self.doc.id


#: the path that stands for standard input (an input) or standard output (an output), as in most command-line tools
STDIO = Path("-")


@contextmanager
def read_from(path: Path) -> Iterator[IO[bytes]]:
    """``path`` opened for reading bytes; :data:`STDIO` is standard input (left open)."""
    if path == STDIO:
        yield sys.stdin.buffer
        return
    with open(path, "rb") as handle:
        yield handle


@contextmanager
def written_whole(output: Path, dash: bool = False) -> Iterator[IO[str]]:
    """A text file to write ``output`` through: written as ``<output>.part`` and moved into place once complete,
    so there is never a half-written output; a path that cannot be written ends the command with a message.

    A symbolic link to a file is followed: the file it points to is replaced, the link kept. What cannot be replaced
    is written as it goes: with ``dash`` (a command whose output may be standard output), :data:`STDIO`; a path that
    is there but is no regular file (``/dev/null``, a named pipe); and one reached through ``/proc`` (``/dev/stdout``,
    ``/dev/fd/N``: the command's own output, maybe a file it appends to)."""
    if dash and output == STDIO:
        if isinstance(sys.stdout, io.TextIOWrapper):
            sys.stdout.reconfigure(encoding="utf-8")
        yield sys.stdout
        sys.stdout.flush()
        return
    through = _written_through(output)
    target = output if through else Path(os.path.realpath(output))
    tmp = target if through else target.with_name(target.name + ".part")
    try:
        # appended to when written through: /dev/stdout may be a file the shell opened to append to (a shell's ">"
        # emptied it already), and a device or a pipe has nothing to keep
        out = open(tmp, "a" if through else "w", encoding="utf-8")  # noqa: SIM115 (closed below; part file removed)
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror}", 2)
    try:
        with out:
            yield out
    except OSError as exc:  # the disk filled up, say
        if not through:
            tmp.unlink(missing_ok=True)
        fail(f"cannot write {output}: {exc.strerror}", 2)
    except BaseException:  # interrupted, or the command failed: no part file is left behind
        if not through:
            tmp.unlink(missing_ok=True)
        raise
    if not through:
        tmp.replace(target)


def _written_through(output: Path) -> bool:
    """Whether ``output`` is written as it is, not replaced (see :func:`written_whole`)."""
    try:
        if not stat.S_ISREG(os.stat(output).st_mode):  # follows links, /proc's too
            return True
    except OSError:  # not there (nor a link's target): made
        return False
    path = os.path.abspath(output)
    for _ in range(40):  # a chain of links, each step checked for /proc
        if os.path.realpath(os.path.dirname(path)).startswith("/proc/"):
            return True
        if not os.path.islink(path):
            return False
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    return True


def read_jsonl(
    handle: IO[bytes] | IO[str],
    fields: DocumentFields,
    skip_invalid: bool,
    check: Callable[[Incoming], None] | None = None,
    max_chars: int | None = None,
) -> Iterator[InputDoc | str]:
    """Documents of a JSON-lines file, each checked by :func:`validate_document` and by ``check`` (which raises
    :class:`DocumentError`) and ``max_chars`` (a text's limit, as :func:`validate_document` applies it); a bad line
    raises UsageError naming it, or with ``skip_invalid`` (the commands' ``--skip-invalid``) yields the problem as a
    string instead.

    Lines end at "\\n", as in the service's NDJSON. A binary ``handle`` is decoded line by line, so bytes that are
    not UTF-8 make their line a bad line, not the whole file. A UTF-8 byte order mark before the first line (as
    some Windows editors write) is dropped. A line without an id takes its line number as its id (so ``neardup
    index`` run again on the same file writes the same documents); when that number is another line's id too, the
    message says which of the two lines has it from its number.

    >>> lines = [b'\\xef\\xbb\\xbf{"id": "a", "text": "x"}\\n', b'{"text": "\\xff"}\\n', b'{"text": "y"}\\n']
    >>> [d if isinstance(d, str) else d.id for d in read_jsonl(lines, DocumentFields(), True)]
    ['a', 'line 2: not UTF-8 (byte 10)', '3']
    """
    seen: dict[str, tuple[int, bool]] = {}  # each id: the line it is on, and whether it is that line's number
    lines: Iterable[bytes | str] = handle
    for number, raw in enumerate(lines, start=1):
        line = _without_bom(raw) if number == 1 else raw
        if not line.strip():
            continue
        try:
            obj = decode_json(line) if isinstance(line, bytes) else decode_text(line, from_utf8=True)
            doc = validate_document(obj, fields, max_chars, default_id=str(number))
            if check is not None:
                check(doc)
            numbered = obj.get(fields.id) is None
            if doc.id in seen:
                raise DocumentError(_clash(doc.id, fields.id, numbered, *seen[doc.id]))
        except (JSONRefused, DocumentError) as exc:
            problem = f"line {number}: {exc}"
        else:
            seen[doc.id] = (number, numbered)
            yield InputDoc(number, doc)
            continue
        if not skip_invalid:
            raise UsageError(problem + " (use --skip-invalid to skip such lines)")
        yield problem


def _without_bom(line: bytes | str) -> bytes | str:
    """The first line without a UTF-8 byte order mark, read as bytes or as text.

    >>> _without_bom(b"\\xef\\xbb\\xbf{}"), _without_bom("\\ufeff{}"), _without_bom("{}")
    (b'{}', '{}', '{}')
    """
    return line.removeprefix(b"\xef\xbb\xbf") if isinstance(line, bytes) else line.removeprefix("\ufeff")


def _clash(doc_id: str, id_field: str, numbered: bool, first: int, first_numbered: bool) -> str:
    """A duplicate id, saying which of the two lines has it from its line number (having no ``id_field``).

    >>> _clash("3", "id", False, 3, True)
    "duplicate id '3' (also on line 3, which has no 'id' field, so its line number is its id)"
    >>> _clash("5", "id", True, 2, False)
    "duplicate id '5' (also on line 2): this line has no 'id' field, so its line number is its id"
    """
    numbered_note = f"has no {id_field!r} field, so its line number is its id"
    if numbered:
        return f"duplicate id {doc_id!r} (also on line {first}): this line {numbered_note}"
    if first_numbered:
        return f"duplicate id {doc_id!r} (also on line {first}, which {numbered_note})"
    return f"duplicate id {doc_id!r} (also on line {first})"


def fingerprint_all(docs: list[InputDoc], workers: int, progress: bool) -> list[Record]:
    """Fingerprint documents in order, with a process pool when ``workers`` > 1."""
    return _in_chunks(
        docs, workers, progress, lambda pool, chunk: pool.fingerprint([(d.doc.text or "", d.doc.title) for d in chunk])
    )


def fingerprint_records_all(
    docs: list[InputDoc], workers: int, progress: bool, config: RecordConfig
) -> list[Record | RecordError]:
    """Fingerprint structured records in order (the error where ``config`` refuses one)."""
    return _in_chunks(
        docs, workers, progress, lambda pool, chunk: pool.fingerprint_records([d.doc.source for d in chunk], config)
    )


def _in_chunks(
    docs: list[InputDoc], workers: int, progress: bool, work: Callable[[FingerprintPool, list[InputDoc]], list[_R]]
) -> list[_R]:
    bar = tqdm(total=len(docs), unit="doc", desc="fingerprint", disable=not progress, file=sys.stderr)
    out: list[_R] = []
    with FingerprintPool(workers) as pool:
        for k in range(0, len(docs), 2000):
            chunk = docs[k : k + 2000]
            out.extend(work(pool, chunk))
            bar.update(len(chunk))
    bar.close()
    return out


@click.command("fingerprint")
@click.argument("text")
@click.option("--title", default=None, help=f"The document's title (its words weigh ×{WeightConfig.title_factor:g}).")
@click.option("--explain", is_flag=True, help="Show the top weighted features.")
def fingerprint_cmd(text: str, title: str | None, explain: bool) -> None:
    """Fingerprint TEXT and print the record as JSON."""
    for name, value in (("TEXT", text), ("--title", title or "")):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # bytes the terminal's encoding could not decode, kept as lone surrogates
            fail(f"{name} is not valid text in this terminal's encoding ({sys.getfilesystemencoding()})", 2)
    rec = Fingerprinter.default().fingerprint(text, title, explain=20 if explain else 0)
    out: dict[str, Any] = {
        "status": rec.status,
        "version": rec.version,
        "fingerprint": to_hex(rec.fingerprint) if rec.status == "ok" else None,
        "fingerprint_long": to_signed(rec.fingerprint) if rec.status == "ok" else None,
        "blocks": [b[0] for b in rec.block_tokens()] if rec.status == "ok" else [],
        "seeds": len(rec.fingerprints),
        "exact": rec.exact,
    }
    if explain:
        out["features"] = [{"feature": f, "weight": round(w, 3)} for f, w in rec.features]
    click.echo(json.dumps(out, ensure_ascii=False, indent=2))


def _given(name: str) -> bool:
    """Whether the command's option ``name`` was given on the command line (not its default)."""
    return click.get_current_context().get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE


@click.command("cluster")
@click.argument("input_path", metavar="INPUT.jsonl", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option(
    "-o",
    "--output",
    "output",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    help="Where to write the clusters; - is standard output.",
)
@click.option("--id-field", default="id", show_default=True)
@click.option("--text-field", default="text", show_default=True)
@click.option("--title-field", default="title", show_default=True)
@click.option("--max-distance", type=click.IntRange(0, 16), default=VerifyConfig.max_distance, show_default=True)
@click.option("--min-jaccard", type=click.FloatRange(0, 1), default=VerifyConfig.min_jaccard, show_default=True)
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True)
@click.option("--skip-invalid", is_flag=True, help="Skip and count bad lines instead of stopping.")
@click.option(
    "--fields",
    "fields_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Per-field configuration (TOML/JSON): the lines are structured records.",
)
@click.option(
    "--truth-field",
    default=None,
    help="Score the clusters against the labels of this field (a string or a number; lines with the same label are "
    'duplicates of one another, a line without one, or with "", is a document of its own): pairwise precision, '
    "recall and F1.",
)
def cluster_cmd(
    input_path: Path,
    output: Path,
    id_field: str,
    text_field: str,
    title_field: str,
    max_distance: int,
    min_jaccard: float,
    workers: int,
    skip_invalid: bool,
    fields_path: Path | None,
    truth_field: str | None,
) -> None:
    """Cluster near-duplicates of a JSON-lines file (- reads standard input; no Elasticsearch needed).

    Writes one {"id", "cluster", "fingerprint"} line per input document, plus duplicate_of and distance. With
    --truth-field, a labelled file is scored too (printed after the summary).
    """
    record_config = None
    read = (id_field,) if fields_path is not None else (id_field, text_field, title_field)
    if truth_field is not None and truth_field in read:
        fail(f"--truth-field {truth_field} is the field the documents' id, text or title is read from, not a label", 2)
    if fields_path is not None:
        given = [f"--{name.replace('_', '-')}" for name in ("text_field", "title_field") if _given(name)]
        if given:  # the configuration names the fields a record is read from
            fail(f"{' and '.join(given)} cannot be used with --fields: the field configuration names the fields", 2)
        try:
            record_config = RecordConfig.load(fields_path)
        except RecordError as exc:
            fail(str(exc), 2)
        spec = record_config.fields.get(truth_field) if truth_field is not None else None
        if spec is not None and spec.mode != "ignore":  # a label that is also a feature would score itself
            fail(f"--truth-field {truth_field} is a field the configuration reads ({spec.mode}), not a label", 2)
    try:
        with read_from(input_path) as handle:  # decoded line by line (read_jsonl)
            text_key = None if record_config is not None else text_field
            check = _label_check(truth_field) if truth_field is not None else None
            items = list(read_jsonl(handle, DocumentFields(id_field, text_key, title_field), skip_invalid, check))
    except OSError as exc:
        fail(f"cannot read {input_path}: {exc.strerror}", 2)
    except UsageError as exc:
        fail(str(exc), 2)
    docs = [d for d in items if isinstance(d, InputDoc)]
    skipped = [p for p in items if isinstance(p, str)]
    if truth_field is not None and all(_label(d, truth_field)[0] == "alone" for d in docs):
        fail(f"no line has a label in {truth_field!r} (--truth-field): nothing to score against", 2)
    progress = sys.stderr.isatty()
    t0 = time.perf_counter()
    config = VerifyConfig(max_distance=max_distance, min_jaccard=min_jaccard)
    if record_config is None:
        records = fingerprint_all(docs, workers, progress)
    else:
        records = []
        kept: list[InputDoc] = []
        for doc, result in zip(docs, fingerprint_records_all(docs, workers, progress, record_config), strict=True):
            if isinstance(result, RecordError):
                if not skip_invalid:
                    fail(f"line {doc.line}: {result} (use --skip-invalid to skip such lines)", 2)
                skipped.append(f"line {doc.line}: {result}")
            else:
                records.append(result)
                kept.append(doc)
        docs = kept
        config = record_config.verify_config(config)
    t1 = time.perf_counter()
    assignment = cluster_records(records, lambda r: r.fingerprints, config)
    t2 = time.perf_counter()
    with written_whole(output, dash=True) as out:
        for k, (doc, rec) in enumerate(zip(docs, records, strict=True)):
            dup = int(assignment.duplicate_of[k])
            line = {
                "id": doc.id,
                "cluster": docs[int(assignment.cluster[k])].id,
                "fingerprint": to_hex(rec.fingerprint) if rec.status == "ok" else None,
                "duplicate_of": docs[dup].id if dup >= 0 else None,
                "distance": int(assignment.distance[k]) if dup >= 0 else None,
                "status": rec.status,
            }
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    clusters = len(set(assignment.cluster.tolist()))
    click.echo(
        f"{len(docs)} documents, {clusters} clusters, {sum(1 for d in assignment.duplicate_of if d >= 0)} "
        f"duplicates; {len(skipped)} invalid lines skipped; fingerprint {t1 - t0:.1f}s, cluster {t2 - t1:.1f}s",
        err=True,
    )
    for problem in skipped[:10]:
        click.echo(f"  skipped {problem}", err=True)
    if truth_field is not None:
        truth = [_label(doc, truth_field) for doc in docs]
        scores = pairwise_scores(truth, assignment.cluster.tolist())
        click.echo(
            f"against {truth_field}: precision {scores.precision:.4f}, recall {scores.recall:.4f}, F1 {scores.f1:.4f} "
            f"(pairs: {scores.tp + scores.fn:,} labelled, {scores.tp + scores.fp:,} clustered, {scores.tp:,} both)",
            err=True,
        )


def _label_check(field: str) -> Callable[[Incoming], None]:
    """The check of a line's label in ``field`` (see :func:`_label`): absent, null, a string or a number."""

    def check(doc: Incoming) -> None:
        value = doc.source.get(field)
        if value is not None and (isinstance(value, bool) or not isinstance(value, str | int | float)):
            raise DocumentError(f"the label in {field!r} must be a string or a number, not {type(value).__name__}")

    return check


def _label(doc: InputDoc, field: str) -> tuple[str, Any]:
    """A document's group for scoring: its label (a number and the same number as text are one label, ``3`` and
    ``3.0`` too), or its own id when it has none (null or "").

    >>> docs = [InputDoc(1, Incoming("a", "x", source={"g": 3})), InputDoc(2, Incoming("b", "y", source={"g": "3"})),
    ...         InputDoc(3, Incoming("c", "z", source={"g": 3.0})), InputDoc(4, Incoming("d", "w", source={"g": ""}))]
    >>> [_label(d, "g") for d in docs]
    [('label', '3'), ('label', '3'), ('label', '3'), ('alone', 'd')]
    """
    value = doc.doc.source.get(field)
    if value is None or value == "":
        return ("alone", doc.id)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return ("label", str(value))


@click.group()
def idf() -> None:
    """Inverse document frequencies for the weights."""


@idf.command("fit")
@click.argument("input_path", metavar="INPUT.jsonl", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--text-field", default="text", show_default=True)
@click.option("--skip-invalid", is_flag=True, help="Skip bad lines instead of stopping.")
def idf_fit(input_path: Path, output: Path, text_field: str, skip_invalid: bool) -> None:
    """Learn an IDF table (jieba's idf.txt format) from a JSON-lines corpus."""
    seg = Segmenter.default()
    try:
        with open(input_path, "rb") as handle:  # decoded line by line (read_jsonl)
            lines = list(read_jsonl(handle, DocumentFields(text=text_field), skip_invalid))
    except OSError as exc:
        fail(f"cannot read {input_path}: {exc.strerror}", 2)
    except UsageError as exc:
        fail(str(exc), 2)
    docs = [d for d in lines if isinstance(d, InputDoc)]
    table: IdfTable = fit_idf(
        seg.segment(normalize(d.doc.text or "", FingerprintConfig.fold_script)).words for d in docs
    )
    with written_whole(output) as out:
        out.write(table.dump())
    click.echo(f"{len(table.values)} words from {len(docs)} documents → {output}", err=True)


@click.command("eval")
@click.option(
    "--set",
    "which",
    type=click.Choice(["news", "poems", "records", "metadata", "all"]),
    default="all",
    show_default=True,
)
@click.option(
    "--seeds", default=",".join(map(str, DEFAULT_SEEDS)), show_default=True, help="Build one set per random seed."
)
@click.option(
    "--groups",
    type=click.IntRange(0),
    default=DEFAULT_GROUPS,
    show_default=True,
    help="News originals with variants per set.",
)
@click.option(
    "--singles", type=click.IntRange(0), default=DEFAULT_SINGLES, show_default=True, help="News singletons per set."
)
@click.option("--only", multiple=True, help="Run only methods whose name contains this.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Also write JSON.")
def eval_cmd(which: str, seeds: str, groups: int, singles: int, only: tuple[str, ...], output: Path | None) -> None:
    """Pairwise precision / recall of neardup and baselines on labelled sets from real text."""
    try:
        seed_list = [int(s) for s in seeds.split(",") if s.strip()]
    except ValueError:
        seed_list = []
    if not seed_list:
        raise click.BadParameter(f"{seeds!r}: whole numbers separated by commas", param_hint="--seeds")
    if which in ("news", "all") and groups + singles == 0:
        raise click.BadParameter("the news sets need documents: --groups or --singles above 0", param_hint="--groups")
    with written_whole(output) if output is not None else nullcontext() as out:  # unwritable: refused before the run
        # a corpus that cannot be fetched or built (npm, network), or its cache under NEARDUP_HOME: a message
        report = reports_errors(run_eval)(which, seed_list, groups, singles, list(only), Settings.from_env().home)
        click.echo(report.table())
        if out is not None:
            out.write(report.json_text())

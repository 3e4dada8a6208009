"""The ``neardup`` ingest pipeline: its id and body, installing it, and making it an index's default.

The pipeline runs the ``neardup`` processor of neardup's Elasticsearch plugin (``neardup/node/plugin``),
which writes the ``neardup.*`` fingerprint fields inside Elasticsearch. An index whose
``index.default_pipeline`` is this one fingerprints every document any client writes to it (a plain
``helpers.bulk`` included), without neardup's service in the path. The plugin must be installed on every
ingest node; the embedded node always has it.

With ``flag=True`` the processor also assigns clusters inside Elasticsearch (``"flag": true``: a candidate search
per document, the node's window of documents written moments ago, the offline clustering's rule); that pipeline is
``neardup-flag``. Settings other than the defaults get pipelines of their own (:func:`pipeline_id`).

>>> config = pipeline_body()["processors"][0][PROCESSOR]
>>> config["field"], config["title_field"], config["target_field"] == schema.ROOT, "flag" in config
('text', 'title', True, False)
>>> config["max_chars"] == Settings().max_text_chars
True
>>> flagging = pipeline_body(flag=True)["processors"][0][PROCESSOR]
>>> flagging["flag"], flagging["max_candidates"], flagging["min_shared"], flagging["window_seconds"]
(True, 500, 1, 5)
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from elasticsearch import BadRequestError, Elasticsearch, NotFoundError

from neardup.config import Settings
from neardup.errors import ClusterFingerprintFailed, NeardupError, UsageError
from neardup.incoming.documents import DocumentFields
from neardup.ingest.fingerprint import Record
from neardup.mappings import DEFAULT_PIPELINE_SETTING, schema

from .client import default_pipelines, install_index_template, read_record_config, validate_index_name

__all__ = [
    "FLAG_PIPELINE_ID",
    "NO_PIPELINE",
    "PIPELINE_ID",
    "PROCESSOR",
    "PipelineMissing",
    "PluginMissing",
    "check_pipeline",
    "fingerprint_in_pipeline",
    "install_pipeline",
    "is_neardup_pipeline",
    "nodes_without_processor",
    "other_version",
    "pipeline_body",
    "pipeline_id",
    "text_pipeline",
    "text_pipeline_problem",
    "use_pipeline",
]

#: the pipeline's id, and what ``index.default_pipeline`` names
PIPELINE_ID = "neardup"
#: the pipeline that also assigns clusters (``"flag": true``)
FLAG_PIPELINE_ID = "neardup-flag"
#: the processor type the plugin registers
PROCESSOR = "neardup"
#: the pipeline name that skips an index's default pipeline: for writes that carry their neardup fields already
NO_PIPELINE = "_none"
#: bumped when the body changes, so ``GET _ingest/pipeline`` tells an old definition from the current one
PIPELINE_VERSION = 2


class PluginMissing(NeardupError):
    """The cluster cannot run the pipeline: ``nodes`` are the ingest nodes without the neardup processor."""

    def __init__(self, nodes: list[str]) -> None:
        where = f"on node(s) {', '.join(nodes)}" if nodes else "on this cluster"
        super().__init__(
            f"there is no {PROCESSOR!r} ingest processor {where}: install the neardup plugin on every node "
            "(`neardup plugin build` prints the zip's path; then "
            "`bin/elasticsearch-plugin install file:///PATH/neardup-plugin-VERSION.zip` and restart the node)"
        )
        self.nodes = nodes


class PipelineMissing(NeardupError):
    """A write named a pipeline the cluster does not have (deleted since it was put); nothing was written."""

    def __init__(self, pipeline: str) -> None:
        super().__init__(f"the cluster has no ingest pipeline {pipeline!r}")
        self.pipeline = pipeline


def pipeline_id(flag: bool = False, settings: Settings | None = None) -> str:
    """The id of the fingerprinting pipeline, or of the flagging one, for ``settings`` (the defaults unless given):
    ``neardup`` and ``neardup-flag`` with the processor settings of the defaults, else that id and a digest of the
    processor's settings. Why: a pipeline is the cluster's, and a service or a CLI run with other settings
    (``NEARDUP_MAX_CANDIDATES`` say) putting its body under the same id would change what every other writer's
    documents get; under ids of their own they do not meet.

    >>> pipeline_id(), pipeline_id(flag=True), pipeline_id(True, Settings(es_url="http://elsewhere:9200"))
    ('neardup', 'neardup-flag', 'neardup-flag')
    >>> other = pipeline_id(True, Settings(max_candidates=100))
    >>> is_neardup_pipeline(other), other.startswith("neardup-flag-")
    (True, True)
    >>> other == pipeline_id(True, Settings(max_candidates=100))
    True
    >>> other != pipeline_id(True, Settings(min_shared=2)), pipeline_id(False, Settings(max_candidates=100))
    (True, 'neardup')
    """
    base = FLAG_PIPELINE_ID if flag else PIPELINE_ID
    processor = _processor(flag, settings or Settings())
    if processor == _processor(flag, Settings()):
        return base
    digest = hashlib.sha256(json.dumps(processor, sort_keys=True).encode()).hexdigest()[:8]
    return f"{base}-{digest}"


def is_neardup_pipeline(pipeline: str) -> bool:
    """Is ``pipeline`` an id :func:`pipeline_id` gives?

    >>> is_neardup_pipeline("neardup-flag-0a1b2c3d"), is_neardup_pipeline("neardup-mine")
    (True, False)
    """
    return _PIPELINE_IDS.fullmatch(pipeline) is not None


_PIPELINE_IDS = re.compile(rf"(?:{re.escape(PIPELINE_ID)}|{re.escape(FLAG_PIPELINE_ID)})(?:-[0-9a-f]{{8}})?")


def pipeline_body(flag: bool = False, settings: Settings | None = None) -> dict[str, Any]:
    """The pipeline's body as ``PUT _ingest/pipeline/neardup`` takes it: the processor reading the fields neardup's
    own writes use (``text``, ``title``) with the service's text limit (``max_text_chars``); with ``flag`` it also
    assigns clusters as the service does (``max_candidates``, ``min_shared``; the node's window of documents it
    assigned moments ago is ``recent_seconds``). ``settings``: the defaults unless given (the CLI gives the
    environment's)."""
    processor = _processor(flag, settings or Settings())
    what = "the neardup.* fingerprint fields of each document's text and title"
    if flag:
        what += ", and its near-duplicate cluster"
    return {
        "description": f"neardup: {what}",
        "processors": [{PROCESSOR: processor}],
        "version": PIPELINE_VERSION,
        "_meta": {"managed_by": "neardup"},
    }


def _processor(flag: bool, settings: Settings) -> dict[str, Any]:
    """The ``neardup`` processor's definition in :func:`pipeline_body`."""
    fields = DocumentFields()
    window = settings.recent_seconds
    processor: dict[str, Any] = {
        "field": fields.text,
        "title_field": fields.title,
        "target_field": schema.ROOT,
        "ignore_missing": False,
        "max_chars": settings.max_text_chars,
    }
    if flag:
        processor |= {
            "flag": True,
            "max_candidates": settings.max_candidates,
            "min_shared": settings.min_shared,
            "window_seconds": int(window) if window == int(window) else window,
        }
    return processor


def fingerprint_in_pipeline(
    client: Elasticsearch, docs: Sequence[tuple[str, str | None]], version: str, settings: Settings | None = None
) -> list[Record]:
    """The fingerprints of (text, title) pairs as the cluster's ``neardup`` processor computes them: one
    ``_ingest/pipeline/_simulate`` request with this pipeline's body (nothing is written, no pipeline needs to
    be installed). Raises :class:`~neardup.errors.ClusterFingerprintFailed` when the cluster has no processor,
    when its fingerprint version is not ``version`` (its plugin was built from other tables than this process's,
    so it would not give the same fingerprints), or when the processor refuses a document."""
    if not docs:
        return []
    fields = DocumentFields()
    sources = [{fields.text: text} | ({fields.title: title} if title is not None else {}) for text, title in docs]
    try:
        resp = client.ingest.simulate(pipeline=pipeline_body(settings=settings), docs=[{"_source": s} for s in sources])
    except BadRequestError as exc:
        if _no_processor(exc):
            raise ClusterFingerprintFailed(str(PluginMissing([]))) from exc
        reason = _error(exc).get("reason")
        raise ClusterFingerprintFailed(
            f"the cluster's neardup processor refused the pipeline: {reason or exc.message}"
        ) from exc
    out: list[Record] = []
    for k, item in enumerate(resp["docs"]):
        if "error" in item:
            raise ClusterFingerprintFailed(f"the neardup processor refused document {k}: {item['error'].get('reason')}")
        record = schema.record_of(item["doc"]["_source"][schema.ROOT])
        if record.version != version:
            raise other_version([record.version], version)
        out.append(record)
    return out


def other_version(theirs: Iterable[str], ours: str) -> ClusterFingerprintFailed:
    """The error for a cluster whose neardup plugin fingerprints as ``theirs``, not as this process (``ours``)."""
    return ClusterFingerprintFailed(
        f"the cluster's neardup plugin fingerprints as {', '.join(sorted(set(theirs)))}, this process as {ours}: "
        "install the plugin built from this version (`neardup plugin build`)"
    )


def nodes_without_processor(client: Elasticsearch) -> list[str]:
    """The names of the ingest nodes that have no ``neardup`` processor (all of them: the plugin is missing)."""
    info = client.nodes.info(
        metric="ingest", filter_path=["nodes.*.name", "nodes.*.roles", "nodes.*.ingest.processors.type"]
    )
    missing = []
    for node in (info.body.get("nodes") or {}).values():
        if "ingest" not in node.get("roles", ["ingest"]):
            continue  # a node that never runs pipelines does not need the plugin
        types = {p.get("type") for p in (node.get("ingest") or {}).get("processors", [])}
        if PROCESSOR not in types:
            missing.append(str(node.get("name")))
    return sorted(missing)


def check_pipeline(client: Elasticsearch, index: str) -> None:
    """Everything that would stop :func:`install_pipeline` and :func:`use_pipeline` on ``index``, checked before
    anything changes: :class:`PluginMissing`, or :class:`UsageError` for an index whose documents are records (the
    processor fingerprints a text) or that already runs another default pipeline."""
    validate_index_name(index)
    missing = nodes_without_processor(client)
    if missing:
        raise PluginMissing(missing)
    if read_record_config(client, index):
        raise UsageError(
            f"index {index!r} holds records read by a field configuration; the {PROCESSOR!r} processor fingerprints "
            "a text field, so it cannot be the index's pipeline"
        )
    other = _other_default_pipelines(client, index)
    if other:
        raise UsageError(
            f"index {index!r} already runs default pipeline {', '.join(other)}; neardup does not replace it: add the "
            f"processor {_processor_json()} to that pipeline instead"
        )


def text_pipeline(client: Elasticsearch, index: str) -> str | None:
    """The pipeline a write to ``index`` runs by default that has neardup's processor (``neardup setup --pipeline``
    made it the default, or a user added the processor to theirs), if any: it fingerprints the field ``text`` and
    refuses a document without one, so with a field configuration every record another client writes would fail
    there. (:func:`check_pipeline` refuses the other order: a pipeline for an index of records.)"""
    for pipeline in default_pipelines(client, index):
        if is_neardup_pipeline(pipeline) or _has_processor(client, pipeline):
            return pipeline
    return None


def text_pipeline_problem(index: str, pipeline: str) -> str:
    """What to say of :func:`text_pipeline`'s ``pipeline`` when records are to be kept in ``index``."""
    return (
        f"index {index!r} runs the ingest pipeline {pipeline!r} by default (`neardup setup {index} --pipeline` makes "
        f"it so): its {PROCESSOR!r} processor fingerprints the field 'text' and refuses a document without one, so "
        "every record another client writes to the index would fail there. Keep the records in another index, or "
        f'take the pipeline off this one first (in Elasticsearch: PUT {index}/_settings {{"index.default_pipeline": '
        "null})"
    )


def _has_processor(client: Elasticsearch, pipeline: str) -> bool:
    """Does ``pipeline`` (a user's) run neardup's processor itself?"""
    try:
        found = client.ingest.get_pipeline(id=pipeline).body
    except NotFoundError:
        return False
    processors = (found.get(pipeline) or {}).get("processors") or []
    return any(PROCESSOR in p for p in processors if isinstance(p, dict))


def install_pipeline(client: Elasticsearch, flag: bool = False, settings: Settings | None = None) -> str:
    """``PUT _ingest/pipeline/ID`` (idempotent) with :func:`pipeline_body`, ID being :func:`pipeline_id` of the same
    arguments; the ID, which is the one to write through (with other ``settings`` than the defaults it is not
    ``neardup-flag``); :class:`PluginMissing` when Elasticsearch refuses it for want of the processor."""
    pipeline = pipeline_id(flag, settings)
    try:
        client.ingest.put_pipeline(id=pipeline, body=pipeline_body(flag, settings))
    except BadRequestError as exc:
        error = _error(exc)
        if _no_processor(exc):
            raise PluginMissing([]) from exc
        if error.get("processor_type") == PROCESSOR:  # there, but it refuses the definition (another version?)
            raise UsageError(
                f"the cluster's neardup processor refused the pipeline {pipeline}: {error.get('reason')}; its plugin "
                f"may be of another neardup version than this one (neardup plugin build, then install that zip)"
            ) from exc
        raise
    return pipeline


def _error(exc: BadRequestError) -> dict[str, Any]:
    """The ``error`` object of Elasticsearch's answer (empty when it gave none)."""
    error = exc.body.get("error") if isinstance(exc.body, dict) else None
    return error if isinstance(error, dict) else {}


def _no_processor(exc: BadRequestError) -> bool:
    """Did Elasticsearch refuse a pipeline for want of the neardup processor (no plugin on some node)?"""
    text = str(exc.body) if exc.body is not None else str(exc)
    return f"No processor type exists with name [{PROCESSOR}]" in text or f"[{PROCESSOR}] is not installed" in text


def use_pipeline(client: Elasticsearch, index: str, pipeline: str) -> None:
    """Make ``pipeline`` (the id :func:`install_pipeline` returned) ``index``'s ``index.default_pipeline``: a write to
    it that names no pipeline runs it. Its index template names it too, so an ``index`` created again from the
    template runs it as well."""
    install_index_template(client, index, pipeline)
    client.indices.put_settings(index=index, settings={DEFAULT_PIPELINE_SETTING: pipeline})


def _other_default_pipelines(client: Elasticsearch, index: str) -> list[str]:
    if not client.indices.exists(index=index):
        return []
    found = client.indices.get_settings(index=index, name=DEFAULT_PIPELINE_SETTING, flat_settings=True).body
    names = {s.get("settings", {}).get(DEFAULT_PIPELINE_SETTING) for s in found.values()}
    return sorted(n for n in names if n and n != NO_PIPELINE and not is_neardup_pipeline(n))


def _processor_json() -> str:
    processor = pipeline_body()["processors"][0][PROCESSOR]
    fields = ", ".join(f'"{k}": "{v}"' for k, v in processor.items() if isinstance(v, str))
    return f'{{"{PROCESSOR}": {{{fields}}}}}'

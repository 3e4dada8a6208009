"""Helpers the blueprints share: the one index check every endpoint and the web page make, and the
index set-up a write checks (never remembers)."""

from __future__ import annotations

from flask import g

from neardup.config import Settings
from neardup.errors import UsageError
from neardup.es.client import (
    IndexInfo,
    index_allowed,
    inspect_index,
    is_internal_index,
    not_written_to,
    setup_index,
    validate_index_name,
)
from neardup.es.shown import Shown

from ..auth import WRITE, access, check_read_key
from ..errors import ApiError
from ..state import state

__all__ = ["check_text_length", "checked_index", "ensure_index", "index_info", "shown"]


def checked_index(index: str) -> str:
    """``index`` when this request may use it, else the JSON error saying why. A write (a view under
    :func:`..auth.requires_key`, which checked the key) or a read (any other) of it must pass, in order:

    - a read only: 401 ``unauthorized`` without the API key when ``NEARDUP_PROTECT_READS`` is set;
    - 400 ``invalid_index_name``: not a name Elasticsearch takes;
    - 403 ``internal_index``: neardup's own (``neardup-jobs``, ``neardup-imports``) or a "." index,
      by its name or behind an alias;
    - 403 ``index_not_allowed``: outside ``NEARDUP_INDEX_PATTERNS``, by its name or behind an alias;
    - 400 ``not_an_index``: a data stream; for a write, an alias (neardup writes to an index by its name);
    - a read only: 404 ``index_not_found``, and 404 ``not_a_neardup_index`` when an index it reads lacks
      the neardup mapping (an index made directly in Elasticsearch): a write sets that up instead.

    What the name is in Elasticsearch costs one request (two for a name that is not a neardup index).
    """
    if access() != WRITE:
        check_read_key()
    try:
        validate_index_name(index)
    except UsageError as exc:
        raise ApiError(400, "invalid_index_name", str(exc)) from exc
    settings = state().settings
    _allowed(index, index, settings)
    info = index_info(index)
    for name in info.indices:
        _allowed(name, index, settings)
    if info.kind == "data_stream" or (info.kind == "alias" and access() == WRITE):
        raise ApiError(400, "not_an_index", not_written_to(info))
    if access() == WRITE:
        return index
    if info.kind == "missing":
        raise ApiError(404, "index_not_found", f"no index {index!r}")
    if info.problems:
        name, problem = min(info.problems.items())
        raise _not_neardup(404, info, name, problem)
    return index


def _not_neardup(status: int, info: IndexInfo, name: str, problem: str) -> ApiError:
    where = f"index {name!r}" if name == info.name else f"index {name!r} (behind {info.name!r})"
    remedy = (
        "its neardup fields were not made by neardup (an index auto-created by a write?): reindex it into "
        "one neardup sets up (PUT /v1/indices/<new>)"
        if name in info.conflicting
        else f"PUT /v1/indices/{name} or POST /v1/indices/{name}/dedupe adds the neardup fields"
    )
    return ApiError(
        status,
        "not_a_neardup_index",
        f"{where} is not a neardup index: it {problem}. neardup uses only indices it set up; {remedy}",
        detail={"index": name, "problem": problem},
    )


def _allowed(name: str, asked: str, settings: Settings) -> None:
    via = "" if name == asked else f" (behind {asked!r})"
    if is_internal_index(name):
        raise ApiError(403, "internal_index", f"index {name!r}{via} is internal to neardup or Elasticsearch")
    patterns = settings.index_pattern_list()
    if not index_allowed(name, patterns):
        raise ApiError(
            403,
            "index_not_allowed",
            f"index {name!r}{via} is not one this service may use (NEARDUP_INDEX_PATTERNS={','.join(patterns)})",
        )


def index_info(index: str) -> IndexInfo:
    """What ``index`` is, asked once per request (kept in ``g``)."""
    seen: dict[str, IndexInfo] = g.setdefault("neardup_indices", {})
    if index not in seen:
        seen[index] = inspect_index(state().client, index)
    return seen[index]


def shown(index: str) -> Shown:
    """How the reading side searches and shows ``index``'s documents: texts, or records by its field configuration;
    as texts behind an alias whose indices keep different configurations (no one way reads them all)."""
    try:
        return Shown.of(state().record_configs.get(index))
    except UsageError:
        return Shown.of(None)


def check_text_length(text: str) -> None:
    """413 when a posted text is longer than ``NEARDUP_MAX_TEXT_CHARS``."""
    limit = state().settings.max_text_chars
    if len(text) > limit:
        raise ApiError(413, "text_too_long", f"text has {len(text)} characters; limit {limit}")


def ensure_index(index: str, force: bool = False) -> bool:
    """Make ``index`` (passed through :func:`checked_index`) a neardup index before a write; True if
    created now. Checked on every call, never remembered: the index may have been deleted or changed
    in Elasticsearch since. When it is a ready neardup index that costs one cheap request; otherwise
    (or with ``force``) the idempotent set-up runs: templates installed, the index created or the
    neardup fields added to it. An index whose neardup fields have other types (auto-created by a
    write) is a 409: no set-up can change them."""
    seen: dict[str, IndexInfo] = g.setdefault("neardup_indices", {})
    seen.pop(index, None)  # what checked_index saw may be a moment old: look again right before writing
    info = index_info(index)
    if info.ready and not force:
        return False
    if index in info.conflicting:  # neardup fields of other types: no set-up can change them
        raise _not_neardup(409, info, index, info.indices[index])
    created = setup_index(state().client, index)
    seen.pop(index, None)
    return created

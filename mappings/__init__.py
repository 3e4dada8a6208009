"""The Elasticsearch mappings neardup ships: a component template with every ``neardup.*`` field
and an index template that composes it. Both are plain JSON files installed with the package.

>>> sorted(neardup_fields())[:4]
['b0', 'b1', 'b2', 'b3']
>>> component_template()["template"]["mappings"]["properties"]["neardup"]["properties"]["cluster"]
{'type': 'keyword'}
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from .schema import ROOT

__all__ = [
    "COMPONENT_NAME",
    "DEFAULT_PIPELINE_SETTING",
    "component_template",
    "index_template",
    "index_template_name",
    "missing_fields",
    "neardup_fields",
]

COMPONENT_NAME = "neardup-fields"
#: the index setting naming the pipeline a write runs when it names none
DEFAULT_PIPELINE_SETTING = "index.default_pipeline"
_COMPONENT_FILE = "neardup-fields.component.json"


@cache
def _load(name: str) -> dict[str, Any]:
    text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def component_template() -> dict[str, Any]:
    """The component template body (a fresh copy the caller may change).

    What each field keeps is what neardup reads of it; indexing the block fields is most of what the neardup
    fields cost Elasticsearch (``bench/results/field_cost.md``).

    - The block fields are searched by their terms only: no doc values, and norms on. A keyword field with
      neither doc values nor norms adds, for every value, one more field to the document: its own name in
      ``_field_names`` (how Elasticsearch answers ``exists`` for it), 64 extra indexed values a document. One
      norm per field and document replaces them.
    - Nothing neardup sends queries the 16 fingerprints (the second check reads seed 0's ``hex``; the Hamming
      script filter, a brute-force peer in the benchmarks, reads their doc values), so they are kept as doc
      values only, not indexed as points. A query on them still works, by doc values; ``hex`` is the indexed
      one to look a document up by.

    >>> fields = component_template()["template"]["mappings"]["properties"]["neardup"]["properties"]
    >>> fields["b0"], fields["fingerprint"]
    ({'type': 'keyword', 'doc_values': False, 'norms': True}, {'type': 'long', 'index': False})
    """
    return copy.deepcopy(_load(_COMPONENT_FILE))


def index_template(index: str, default_pipeline: str | None = None) -> dict[str, Any]:
    """The index template body that applies the neardup fields to exactly ``index``; with
    ``default_pipeline``, an index created from it (say, by a bulk write after the index was deleted) runs
    that pipeline as the index it replaces did.

    The template's merge policy keeps fewer segments than Elasticsearch's default (segments up to 100 MB
    merged as one tier, 5 segments per tier instead of 10): every lookup, and so every document flagged at
    ingest, seeks its 64 block tokens in every segment.

    >>> index_template("news", "neardup")["template"]["settings"][DEFAULT_PIPELINE_SETTING]
    'neardup'
    >>> index_template("news")["template"]["settings"]["index.merge.policy.segments_per_tier"]
    5
    """
    body = copy.deepcopy(_load("neardup-index.template.json"))
    body["index_patterns"] = [index]
    if default_pipeline is not None:
        body["template"]["settings"][DEFAULT_PIPELINE_SETTING] = default_pipeline
    return body


def index_template_name(index: str) -> str:
    """The index template's name for ``index``.

    >>> index_template_name("news")
    'neardup-news'
    """
    return f"neardup-{index}"


def _shipped_fields() -> dict[str, dict[str, Any]]:
    """The component template's ``neardup.*`` field mappings, shared: callers read them, never change them."""
    props: dict[str, dict[str, Any]] = _load(_COMPONENT_FILE)["template"]["mappings"]["properties"][ROOT]["properties"]
    return props


def neardup_fields() -> dict[str, dict[str, Any]]:
    """Field name (under ``neardup.``) → its mapping (a fresh copy the caller may change)."""
    return copy.deepcopy(_shipped_fields())


def missing_fields(mapped: Mapping[str, Any], doc_values: bool = True) -> dict[str, dict[str, Any]]:
    """The ``neardup.*`` fields to put on an index whose ``neardup`` object maps ``mapped`` already (field
    name → its mapping, as Elasticsearch returns it): those it lacks, maps as another type, or (with
    ``doc_values``) maps without the doc values neardup reads. Elasticsearch refuses the last two, naming
    the field. What an older mapping keeps beyond what neardup reads is no reason: doc values on the block
    fields (their terms are searched, their doc values never read), block fields without norms, fingerprints
    indexed as points. None of these can change on an existing index, and each costs only indexing time.

    >>> sorted(missing_fields({}))[:2]
    ['b0', 'b1']
    >>> fields = neardup_fields()
    >>> "b0" in missing_fields({**fields, "b0": {"type": "keyword"}})
    False
    >>> missing_fields({**fields, "cluster": {"type": "text"}})
    {'cluster': {'type': 'keyword'}}
    >>> missing_fields({**fields, "fingerprint": {"type": "long", "doc_values": False}})
    {'fingerprint': {'type': 'long', 'index': False}}
    """
    return {
        name: copy.deepcopy(spec)
        for name, spec in _shipped_fields().items()  # not copied whole: this runs for every request the service answers
        if (got := mapped.get(name) or {}).get("type") != spec["type"]
        or (doc_values and _has_doc_values(spec) and not _has_doc_values(got))
    }


def _has_doc_values(spec: Mapping[str, Any]) -> bool:
    """Whether a field of this mapping keeps doc values (Elasticsearch's default: all but ``binary``)."""
    return bool(spec.get("doc_values", spec.get("type") != "binary"))

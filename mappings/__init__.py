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

__all__ = [
    "COMPONENT_NAME",
    "component_template",
    "index_template",
    "index_template_name",
    "missing_fields",
    "neardup_fields",
]

COMPONENT_NAME = "neardup-fields"


@cache
def _load(name: str) -> dict[str, Any]:
    text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def component_template() -> dict[str, Any]:
    """The component template body (a fresh copy the caller may change)."""
    return copy.deepcopy(_load("neardup-fields.component.json"))


def index_template(index: str) -> dict[str, Any]:
    """The index template body that applies the neardup fields to exactly ``index``."""
    body = copy.deepcopy(_load("neardup-index.template.json"))
    body["index_patterns"] = [index]
    return body


def index_template_name(index: str) -> str:
    """The index template's name for ``index``.

    >>> index_template_name("news")
    'neardup-news'
    """
    return f"neardup-{index}"


def neardup_fields() -> dict[str, dict[str, Any]]:
    """Field name (under ``neardup.``) → its mapping."""
    props: dict[str, dict[str, Any]] = component_template()["template"]["mappings"]["properties"]["neardup"][
        "properties"
    ]
    return props


def missing_fields(mapped: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The ``neardup.*`` fields to add to an index whose ``neardup`` object already maps ``mapped``
    (field name → its mapping, as Elasticsearch returns it).

    A field is added when the index lacks it, or maps it as another type: Elasticsearch then refuses the
    change and names the field. A field of the right type whose other parameters differ is left alone,
    since those parameters cannot change on an existing index and neardup reads either (an index made by
    an earlier release kept doc values on the block fields, which nothing reads).

    >>> sorted(missing_fields({}))[:2]
    ['b0', 'b1']
    >>> fields = neardup_fields()
    >>> "b0" in missing_fields({**fields, "b0": {"type": "keyword"}})
    False
    >>> missing_fields({**fields, "cluster": {"type": "text"}})
    {'cluster': {'type': 'keyword'}}
    """
    return {name: spec for name, spec in neardup_fields().items() if mapped.get(name, {}).get("type") != spec["type"]}

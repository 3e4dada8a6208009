"""Structured records: per-field modes and weights.

Each field of a record has a mode:

- ``text``: segmented and weighted like a document body; its words' weights are multiplied by the
  field's ``weight`` (a ``title: true`` text field also gives its words the title factor);
- ``value``: one feature ``field=value`` whose weight is ``weight`` times the record's median word
  weight (so "weight 2" means "twice a typical word", whatever the text's length; the seed gives
  short fields weight 2);
- ``set``: a list of tags/keywords/references, compared by metadata MinHash, not hashed into SimHash;
- ``ignore``: left out (ids, timestamps, an office address printed on every row).

Missing, null and empty fields contribute nothing; fields not in the configuration are ignored.

>>> cfg = RecordConfig.parse({"fields": {"text": {"mode": "text"}, "category": {"mode": "value", "weight": 2},
...                                      "tags": {"mode": "set"}}})
>>> parts = split_record({"text": "正文", "category": "环保", "tags": ["a", "b"], "other": 1}, cfg)
>>> parts.texts, parts.values, parts.sets
([('text', '正文', 1.0, False)], [('category=环保', 2.0)], {'tags': ['a', 'b']})
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from .verify import VerifyConfig

__all__ = ["MAX_WEIGHT", "MODES", "FieldSpec", "RecordConfig", "RecordError", "RecordParts", "split_record"]

Mode = Literal["text", "value", "set", "ignore"]
#: a field's modes, and the bound its weight stays under: what :meth:`RecordConfig.parse` takes
MODES: tuple[Mode, ...] = ("text", "value", "set", "ignore")
MAX_WEIGHT = 1000
#: what parts the elements of a set given as one string: the comma, in ASCII or full width (folded alike)
_LIST_SEPARATOR = re.compile("[,，]")
_TOP_KEYS = frozenset({"fields", "mu", "min_combined"})
_FIELD_KEYS = frozenset({"mode", "weight", "title"})
#: how a record becomes features and characters (part of :meth:`RecordConfig.describe`): 2 reads the fields in the
#: order of their names, parts each field's characters from the next, writes whole numbers one way and folds set
#: elements as values are folded
_SCHEME = 2


class RecordError(ValueError):
    """A record or a configuration that cannot be used; ``field`` names the culprit."""

    def __init__(self, message: str, field_name: str | None = None) -> None:
        super().__init__(message)
        self.field = field_name

    def __reduce__(self) -> tuple[type[RecordError], tuple[str, str | None]]:  # keeps ``field`` across processes
        return (RecordError, (str(self), self.field))


@dataclass(frozen=True)
class FieldSpec:
    mode: Mode
    weight: float = 1.0
    title: bool = False


@dataclass(frozen=True)
class RecordConfig:
    """Per-field configuration; ``mu`` weighs content against metadata in the combined score and
    ``min_combined`` is the score a pair needs when records carry metadata."""

    fields: dict[str, FieldSpec]
    # defaults from `neardup eval --set metadata` (seeds 2-4): μ 0.8 is the seed's lower end; at 0.85/0.9
    # a threshold that keeps template look-alikes apart loses 3-6 points of recall
    mu: float = 0.8
    min_combined: float = VerifyConfig.min_combined

    @classmethod
    def parse(cls, data: Mapping[str, Any], strict: bool = True) -> RecordConfig:
        """From a mapping ``{"fields": {name: {"mode", "weight"?, "title"?}}, "mu"?, "min_combined"?}``. ``strict``
        (a configuration given now): a key none of these, or a ``title`` that is no boolean, is refused; a stored
        one is read as it was taken.

        >>> try:
        ...     RecordConfig.parse({"fields": {"body": {"mode": "text", "wieght": 5}}})
        ... except RecordError as exc:
        ...     print(exc)
        field 'body': unknown key 'wieght' (a field takes mode, weight, title)
        """
        if not isinstance(data, Mapping):
            raise RecordError(f"the configuration must be an object with a [fields] table, not {type(data).__name__}")
        raw = data.get("fields")
        if not isinstance(raw, Mapping) or not raw:
            raise RecordError("the configuration needs a non-empty [fields] table")
        unknown = sorted(set(data) - _TOP_KEYS)
        if strict and unknown:
            raise RecordError(
                f"unknown key {unknown[0]!r} (the configuration takes {', '.join(sorted(_TOP_KEYS))}; in TOML, mu and "
                "min_combined go before the [fields] tables)"
            )
        specs: dict[str, FieldSpec] = {}
        for name, spec in raw.items():
            if not isinstance(spec, Mapping) or spec.get("mode") not in MODES:
                raise RecordError(f"field {name!r}: mode must be one of {', '.join(MODES)}", name)
            extra = sorted(set(spec) - _FIELD_KEYS)
            if strict and extra:
                raise RecordError(f"field {name!r}: unknown key {extra[0]!r} (a field takes mode, weight, title)", name)
            weight = spec.get("weight", 1.0)
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 < weight < MAX_WEIGHT:
                raise RecordError(f"field {name!r}: weight must be a number in (0, {MAX_WEIGHT})", name)
            title = spec.get("title", False)
            if strict and not isinstance(title, bool):
                raise RecordError(f"field {name!r}: title must be true or false, not {title!r}", name)
            specs[str(name)] = FieldSpec(spec["mode"], float(weight), bool(title))
        if not any(s.mode in {"text", "value"} for s in specs.values()):
            raise RecordError("at least one field must be 'text' or 'value' (sets alone give no fingerprint)")
        mu = data.get("mu", cls.mu)
        min_combined = data.get("min_combined", cls.min_combined)
        for key, value in (("mu", mu), ("min_combined", min_combined)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise RecordError(f"{key} must be a number in [0, 1]")
        return cls(specs, float(mu), float(min_combined))

    @classmethod
    def load(cls, path: Path) -> RecordConfig:
        """From a TOML (``.toml``) or JSON file."""
        try:
            text = path.read_text(encoding="utf-8")
            data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
            raise RecordError(f"cannot read the field configuration {path}: {exc}") from exc
        return cls.parse(data)

    def describe(self) -> str:
        """Stable text form (part of the fingerprint version)."""
        items = sorted((n, s.mode, s.weight, s.title) for n, s in self.fields.items())
        return f"fields={items};mu={self.mu};min_combined={self.min_combined};scheme={_SCHEME}"

    def as_data(self) -> dict[str, Any]:
        """This configuration as the JSON that gives it (what :meth:`parse` reads, and a ``PUT /v1/indices/{index}``
        body holds).

        >>> data = RecordConfig.parse({"fields": {"a": {"mode": "value", "weight": 2}}, "mu": 0.7}).as_data()
        >>> data["fields"], RecordConfig.parse(data).mu
        ({'a': {'mode': 'value', 'weight': 2.0, 'title': False}}, 0.7)
        """
        return {
            "fields": {n: {"mode": s.mode, "weight": s.weight, "title": s.title} for n, s in self.fields.items()},
            "mu": self.mu,
            "min_combined": self.min_combined,
        }

    @property
    def has_sets(self) -> bool:
        return any(s.mode == "set" for s in self.fields.values())

    def verify_config(self, base: VerifyConfig) -> VerifyConfig:
        """``base`` with this configuration's combined score when it has set fields."""
        if not self.has_sets:
            return base
        return replace(base, mu=self.mu, min_combined=self.min_combined)


@dataclass
class RecordParts:
    """A record split by mode: texts ``(field, text, weight, is_title)``, value features
    ``(feature, weight)`` with the values as given (``value_texts``, without the field's name) and sets
    ``{field: [elements]}``."""

    texts: list[tuple[str, str, float, bool]] = field(default_factory=list)
    values: list[tuple[str, float]] = field(default_factory=list)
    value_texts: list[str] = field(default_factory=list)
    sets: dict[str, list[str]] = field(default_factory=dict)


def _scalar(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        value = int(value)  # 3.0 as 3: a number is the same value however a source spells it
    if isinstance(value, (str, int, float)):
        text = str(value).strip()
        return text or None
    raise RecordError(f"field {name!r}: expected a string or a number, got {type(value).__name__}", name)


def split_record(record: Mapping[str, Any], config: RecordConfig) -> RecordParts:
    """The record's configured fields by mode, in the order of their names (a configuration listing them in
    another order gives the same fingerprints); raises :class:`RecordError` naming a field of the wrong type."""
    parts = RecordParts()
    for name, spec in sorted(config.fields.items()):
        value = record.get(name)
        if spec.mode == "ignore" or value is None:
            continue
        if spec.mode == "text":
            if not isinstance(value, str):
                raise RecordError(f"field {name!r}: text must be a string, got {type(value).__name__}", name)
            if value.strip():
                parts.texts.append((name, value, spec.weight, spec.title))
        elif spec.mode == "value":
            text = _scalar(name, value)
            if text is not None:
                parts.values.append((f"{name}={text}", spec.weight))
                parts.value_texts.append(text)
        else:
            if isinstance(value, Mapping):
                raise RecordError(f"field {name!r}: a set is a list of strings or numbers, not an object", name)
            if isinstance(value, (list, tuple, set)):
                items = list(value)
            else:
                items = _LIST_SEPARATOR.split(_scalar(name, value) or "")
            elements = [e for e in (_scalar(name, v) for v in items) if e is not None]
            if elements:
                parts.sets[name] = elements
    return parts

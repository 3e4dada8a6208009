"""Client documents: the one validation every document passes before neardup fingerprints or writes
it, whether it comes from a JSON-lines file (the CLI) or a request body (the service).

>>> validate_document({"id": 7, "text": "一段正文", "lang": "zh"}, DocumentFields()).source
{'lang': 'zh'}
>>> validate_document({"text": "x", "neardup.anything": "c"}, DocumentFields(), default_id="1")
Traceback (most recent call last):
...
neardup.incoming.documents.DocumentError: field 'neardup.anything' is reserved for neardup's own fields
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from neardup.errors import NeardupError
from neardup.mappings import schema

__all__ = [
    "MAX_FIELDS",
    "MAX_ID_BYTES",
    "MAX_OBJECT_DEPTH",
    "DocumentError",
    "DocumentFields",
    "Incoming",
    "check_not_reserved",
    "record_text",
    "text_value",
    "validate_document",
]

#: Elasticsearch refuses longer ids
MAX_ID_BYTES = 512
#: Elasticsearch's default ``index.mapping.depth.limit``: objects nested deeper are refused
MAX_OBJECT_DEPTH = 20
#: Elasticsearch's default ``index.mapping.total_fields.limit``
MAX_FIELDS = 1000


class DocumentError(NeardupError):
    """A client document neardup refuses; the message names the field and says what is wrong."""

    exit_code = 2


def text_value(value: Any) -> str | None:
    """A stored document's text or title as neardup reads it: a string, else nothing (a user's own index may hold
    anything under those names).

    >>> text_value("正文"), text_value({"en": "text"}), text_value(None)
    ('正文', None, None)
    """
    return value if isinstance(value, str) else None


def record_text(record: Mapping[str, Any]) -> str:
    """The strings of a record's fields together, each field's value and the strings of a list (a set field):
    what ``NEARDUP_MAX_TEXT_CHARS`` holds a record to, as it holds a document's text, whether the record is
    written or looked up. (A field configuration reads no deeper, and numbers are short.)

    >>> record_text({"complaint": "正文", "category": "环保", "tags": ["a", 5, "b"], "n": 7})
    '正文环保ab'
    """
    parts: list[str] = []
    for value in record.values():
        for item in value if isinstance(value, list) else (value,):
            if isinstance(item, str):
                parts.append(item)
    return "".join(parts)


@dataclass(frozen=True)
class Incoming:
    """One document to ingest: its id, title, text and the user's other fields (stored as given)."""

    id: str
    text: str | None  # None for a structured record (its fields are all in ``source``)
    title: str | None = None
    source: dict[str, Any] = field(default_factory=dict)

    def check_storable(self) -> None:
        """:class:`DocumentError` when :meth:`body` would lose a field: the text and title are stored as
        ``text`` and ``title``, so a document read from other fields may not have fields of those names too."""
        for name, value in (("text", self.text), ("title", self.title)):
            if value is not None and name in self.source:
                raise DocumentError(
                    f"field {name!r} would be replaced by the document's {name}, which neardup stores as {name!r}: "
                    "rename one of them"
                )

    def body(self) -> dict[str, Any]:
        """The ``_source`` neardup writes, before its own fields are added (see :meth:`check_storable`)."""
        body = dict(self.source)
        if self.text is not None:
            body["text"] = self.text
        if self.title is not None:
            body["title"] = self.title
        return body


@dataclass(frozen=True)
class DocumentFields:
    """Where a client document keeps its id, text and title. ``text`` None: the documents are
    structured records, read by the index's field configuration (no text is required)."""

    id: str = "id"
    text: str | None = "text"
    title: str = "title"


def check_not_reserved(key: str) -> None:
    """A :class:`DocumentError` when a client's field name ``key`` is one of neardup's own fields
    (:func:`~neardup.mappings.schema.is_reserved`).

    >>> check_not_reserved("neardup")
    Traceback (most recent call last):
    ...
    neardup.incoming.documents.DocumentError: field 'neardup' is reserved for neardup's own fields
    """
    if schema.is_reserved(key):
        raise DocumentError(f"field {key!r} is reserved for neardup's own fields")


def validate_document(
    obj: Any, fields: DocumentFields, max_chars: int | None = None, default_id: str | None = None
) -> Incoming:
    """The :class:`Incoming` document of a decoded JSON value, or :class:`DocumentError`.

    A missing id takes ``default_id`` (an error when that is None too). ``max_chars`` bounds a text's characters,
    and a record's (``fields.text`` None) in its fields together (:func:`record_text`)."""
    if not isinstance(obj, dict):
        raise DocumentError(f"expected a JSON object, got {type(obj).__name__}")
    for key in obj:
        check_not_reserved(key)
        if isinstance(key, str) and key.startswith("_"):
            raise DocumentError(f"field {key!r}: names starting with '_' are Elasticsearch's metadata fields")
    if _fields(obj, "", 1) > MAX_FIELDS:
        raise DocumentError(f"the document has more than {MAX_FIELDS} fields (Elasticsearch's limit per index)")
    doc_id = _doc_id(obj.get(fields.id), fields.id, default_id)
    if fields.text is None:
        source = {k: v for k, v in obj.items() if k != fields.id}
        chars = len(record_text(source))
        if max_chars is not None and chars > max_chars:
            raise DocumentError(f"the record's fields have {chars} characters together; the limit is {max_chars}")
        return Incoming(doc_id, None, None, source)
    text = obj.get(fields.text)
    if text is None:
        raise DocumentError(f"field {fields.text!r} is missing")
    if not isinstance(text, str):
        raise DocumentError(f"field {fields.text!r} must be a string, got {type(text).__name__}")
    if max_chars is not None and len(text) > max_chars:
        raise DocumentError(f"field {fields.text!r} has {len(text)} characters; the limit is {max_chars}")
    title = obj.get(fields.title)
    if title is not None and not isinstance(title, str):
        raise DocumentError(f"field {fields.title!r} must be a string, got {type(title).__name__}")
    rest = {k: v for k, v in obj.items() if k not in {fields.id, fields.text, fields.title}}
    return Incoming(doc_id, text, title, rest)


def _fields(value: Any, path: str, depth: int) -> int:
    """How many leaf fields ``value`` adds; :class:`DocumentError` for what Elasticsearch would refuse
    (a field name it cannot map, an object nested too deep, a number that is not finite)."""
    if isinstance(value, dict):
        if depth > MAX_OBJECT_DEPTH:
            raise DocumentError(f"field {path!r} nests objects deeper than {MAX_OBJECT_DEPTH} levels")
        count = 0
        for key, inner in value.items():
            if not key.strip() or key.startswith(".") or key.endswith(".") or ".." in key:
                raise DocumentError(f"field name {key!r} (in {path or 'the document'}) cannot be mapped")
            count += _fields(inner, f"{path}.{key}" if path else key, depth + 1)
        return count
    if isinstance(value, list):
        return max((_fields(v, path, depth) for v in value), default=1)
    if isinstance(value, float) and not math.isfinite(value):
        raise DocumentError(f"field {path!r} is {value}, not a finite number")
    return 1


def _doc_id(raw: Any, name: str, default: str | None) -> str:
    if raw is None:
        if default is None:
            raise DocumentError(f"field {name!r} is missing")
        return default
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise DocumentError(f"field {name!r} must be a string or an integer, got {type(raw).__name__}")
    doc_id = str(raw)
    if not doc_id or len(doc_id.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES or doc_id.startswith("_"):
        raise DocumentError(f"field {name!r} must be 1-{MAX_ID_BYTES} bytes and not start with '_'")
    return doc_id

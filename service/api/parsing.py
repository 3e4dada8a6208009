"""Parse the body of ``POST /v1/indices/{index}/documents``: one JSON object, a JSON array of them,
or NDJSON (one object a line). Everything is checked before anything is written; the first problem
is reported with the item (or line) it is in."""

from __future__ import annotations

import json
import uuid
from typing import Any

from neardup.es.documents import DocumentError, DocumentFields, Incoming, validate_document

from ..errors import ApiError

__all__ = ["parse_documents"]

_TEXT = DocumentFields()
_RECORDS = DocumentFields(text=None)


def _bad(message: str, where: str) -> ApiError:
    return ApiError(400, "invalid_document", f"{where}: {message}", detail={"at": where})


def _document(obj: Any, where: str, max_chars: int, records: bool) -> Incoming:
    try:
        return validate_document(obj, _RECORDS if records else _TEXT, max_chars, default_id=uuid.uuid4().hex)
    except DocumentError as exc:
        raise _bad(str(exc), where) from exc


def parse_documents(
    body: bytes, content_type: str, max_docs: int, max_chars: int, records: bool = False
) -> list[Incoming]:
    """The documents of a request body, or :class:`ApiError` 400 naming the first bad item.
    With ``records`` the items are structured records (no ``text`` required)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(400, "invalid_body", f"the body is not UTF-8 (byte {exc.start})") from exc
    mime = content_type.split(";")[0].strip().lower()
    items: list[tuple[Any, str]] = []
    if mime in {"application/x-ndjson", "application/ndjson", "application/jsonl"}:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append((json.loads(line), f"line {number}"))
            except json.JSONDecodeError as exc:
                raise _bad(f"not valid JSON ({exc.msg})", f"line {number}") from exc
    elif mime == "application/json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ApiError(
                400, "invalid_json", f"the body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            ) from exc
        items = [(d, f"item {k}") for k, d in enumerate(data)] if isinstance(data, list) else [(data, "document")]
    else:
        raise ApiError(
            415, "unsupported_media_type", "send application/json (an object or an array) or application/x-ndjson"
        )
    if not items:
        raise ApiError(400, "invalid_body", "no documents in the body")
    if len(items) > max_docs:
        raise ApiError(413, "too_many_documents", f"{len(items)} documents; the limit per request is {max_docs}")
    docs = [_document(obj, where, max_chars, records) for obj, where in items]
    seen: dict[str, str] = {}
    for doc, (_, where) in zip(docs, items, strict=True):
        if doc.id in seen:
            raise _bad(f"id {doc.id!r} also appears at {seen[doc.id]}", where)
        seen[doc.id] = where
    return docs

"""Parse the body of ``POST /v1/indices/{index}/documents``: one JSON object, a JSON array of them,
or NDJSON (one object a line). Everything is checked before anything is written; the first problem
is reported with the item (or line) it is in."""

from __future__ import annotations

import json
import uuid
from typing import Any

from neardup.flagging import Incoming

from ..errors import ApiError

__all__ = ["parse_documents"]

_MAX_ID_BYTES = 512


def _bad(message: str, where: str) -> ApiError:
    return ApiError(400, "invalid_document", f"{where}: {message}", detail={"at": where})


def _document(obj: Any, where: str, max_chars: int, records: bool) -> Incoming:
    if not isinstance(obj, dict):
        raise _bad(f"expected a JSON object, got {type(obj).__name__}", where)
    if records:  # fields are checked by the index's field configuration
        if "neardup" in obj:
            raise _bad("field 'neardup' is reserved for neardup's own fields", where)
        return Incoming(_doc_id(obj, where), None, None, {k: v for k, v in obj.items() if k != "id"})
    if "text" not in obj or obj["text"] is None:
        raise _bad("field 'text' is missing", where)
    text = obj["text"]
    if not isinstance(text, str):
        raise _bad(f"field 'text' must be a string, got {type(text).__name__}", where)
    if len(text) > max_chars:
        raise _bad(f"field 'text' has {len(text)} characters; the limit is {max_chars}", where)
    title = obj.get("title")
    if title is not None and not isinstance(title, str):
        raise _bad(f"field 'title' must be a string, got {type(title).__name__}", where)
    if "neardup" in obj:
        raise _bad("field 'neardup' is reserved for neardup's own fields", where)
    source = {k: v for k, v in obj.items() if k not in {"id", "text", "title"}}
    return Incoming(_doc_id(obj, where), text, title, source)


def _doc_id(obj: dict[str, Any], where: str) -> str:
    raw_id = obj.get("id")
    if raw_id is None:
        doc_id = uuid.uuid4().hex
    elif isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)):
        raise _bad(f"field 'id' must be a string or an integer, got {type(raw_id).__name__}", where)
    else:
        doc_id = str(raw_id)
        if not doc_id or len(doc_id.encode()) > _MAX_ID_BYTES or doc_id.startswith("_"):
            raise _bad(f"field 'id' must be 1-{_MAX_ID_BYTES} bytes and not start with '_'", where)
    return doc_id


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

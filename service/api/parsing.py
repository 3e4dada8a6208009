"""The body of ``POST /v1/indices/{index}/documents`` (:func:`parse_documents`): one JSON object, a JSON
array of them, or NDJSON (one object a line). Everything is checked before anything is written;
the first problem is reported with the item (or line) it is in."""

from __future__ import annotations

import uuid
from typing import Any

from neardup.incoming.documents import DocumentError, DocumentFields, Incoming, validate_document
from neardup.incoming.json_input import JSONRefused, decode_text

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
        # lines end at "\n" (a "\r" before it is JSON whitespace); str.splitlines() also split at
        # U+2028, U+0085 and others, which a JSON string may hold as they are
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                items.append((decode_text(line, from_utf8=True), f"line {number}"))
            except JSONRefused as exc:
                # a line that is not JSON is one bad document of the batch, refused as any other (the body
                # itself is JSON lines); its other refusals (too deep, a lone surrogate) keep their own kind
                kind = "invalid_document" if exc.kind == "invalid_json" else exc.kind
                where = f"line {number}"
                raise ApiError(400, kind, f"{where}: {exc}", detail={"at": where}) from exc
    elif mime == "application/json":
        try:
            data = decode_text(text, from_utf8=True)
        except JSONRefused as exc:
            raise ApiError(400, exc.kind, f"the body is {exc}") from exc
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

"""The service's errors: every failure of the API is JSON ``{"error": {"type", "message", "detail"?}}`` (the web
page answers its own as a page: ``service/web``).

:class:`ApiError` is the one exception views raise on purpose; Elasticsearch failures are mapped
here too (unreachable → 503, missing index → 404), so no view needs its own try/except.
"""

from __future__ import annotations

from typing import Any

from apiflask import APIFlask, HTTPError
from elasticsearch import ApiError as ESApiError
from elasticsearch import ConnectionError as ESConnectionError
from elasticsearch import ConnectionTimeout
from flask import Response, jsonify

from neardup.errors import BatchNotUndone, ClusterFingerprintFailed, SearchFailed, UsageError
from neardup.es.client import ESUnavailable, refusal_reason

__all__ = [
    "COMMON_ERRORS",
    "ERROR_SCHEMA",
    "ES_OUTAGES",
    "ES_OUTAGE_MESSAGE",
    "RETRY_AFTER",
    "ApiError",
    "error_body",
    "error_response",
    "es_refusal",
    "passing_answer",
    "register_error_handlers",
]

#: what Elasticsearch going away raises: the client's own errors, and neardup's (a set-up that lost it)
ES_OUTAGES: tuple[type[Exception], ...] = (ESConnectionError, ConnectionTimeout, ESUnavailable)
#: what the client is told then (never where Elasticsearch is: that is the operator's to know)
ES_OUTAGE_MESSAGE = "Elasticsearch is unreachable; retry later"

_TYPES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    411: "length_required",
    413: "request_too_large",
    414: "uri_too_long",
    415: "unsupported_media_type",
    417: "expectation_failed",
    422: "invalid_input",
    429: "elasticsearch_busy",
    431: "header_too_large",
    500: "internal_error",
    501: "not_implemented",
    502: "elasticsearch_error",
    503: "elasticsearch_unavailable",
}


#: the error answer in OpenAPI's terms: the one shape every refusal of the API has (APIFlask would describe its own)
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["type", "message"],
            "properties": {
                "type": {"type": "string", "description": "machine-readable, e.g. index_not_found"},
                "message": {"type": "string"},
                "detail": {"description": "what the refusal is about, where there is more to say"},
            },
        }
    },
}
#: what any endpoint of the API may answer besides its own, with the reason OpenAPI shows
COMMON_ERRORS = {
    "400": "bad input: the error names it",
    "401": "the API key is needed (NEARDUP_API_KEY; reads too with NEARDUP_PROTECT_READS)",
    "503": "Elasticsearch is unreachable (detail.written: documents that may stay written), or a shard has no copy "
    "or a write got no answer for the moment (Retry-After)",
}


class ApiError(HTTPError):
    """An HTTP error with a machine-readable ``type`` and optional ``detail`` (e.g. the bad line)."""

    def __init__(
        self, status: int, kind: str, message: str, detail: Any = None, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(status, message, detail=detail, headers=headers, extra_data={"type": kind})


def error_body(status: int, kind: str | None, message: str, detail: Any = None) -> dict[str, Any]:
    """The one error shape, ``{"error": {"type", "message", "detail"?}}``; ``kind`` None: the status's
    default type. The server layer (``server.py``) writes it too, for what gunicorn refuses itself."""
    body: dict[str, Any] = {"type": kind or _TYPES.get(status, "error"), "message": message}
    if detail:
        body["detail"] = detail
    return {"error": body}


def error_response(status: int, kind: str, message: str, detail: Any = None) -> tuple[Response, int]:
    return jsonify(error_body(status, kind, message, detail)), status


def register_error_handlers(app: APIFlask) -> None:
    @app.error_processor
    def _http_error(error: HTTPError) -> tuple[Response, int, Any]:
        kind = (error.extra_data or {}).get("type") or _TYPES.get(error.status_code, "error")
        if error.status_code == 422:  # APIFlask's input validation: a client error like any other
            kind = "invalid_input"
        resp, status = error_response(error.status_code, kind, str(error.message), error.detail)
        return resp, status, error.headers

    def _es_down(exc: Exception) -> tuple[Response, int]:
        return error_response(503, "elasticsearch_unavailable", ES_OUTAGE_MESSAGE)

    for outage in ES_OUTAGES:
        app.register_error_handler(outage, _es_down)

    @app.errorhandler(BatchNotUndone)
    def _not_undone(exc: BatchNotUndone) -> tuple[Response, int]:
        return error_response(503, "elasticsearch_unavailable", str(exc), {"written": exc.written})

    app.register_error_handler(ESApiError, es_refusal)
    app.register_error_handler(SearchFailed, es_refusal)

    @app.errorhandler(UsageError)
    def _usage(exc: UsageError) -> tuple[Response, int]:
        return error_response(400, "bad_request", str(exc))

    @app.errorhandler(ClusterFingerprintFailed)
    def _no_fingerprints(exc: ClusterFingerprintFailed) -> tuple[Response, int]:
        return error_response(502, "fingerprint_in_es_failed", str(exc))


def es_refusal(exc: ESApiError | SearchFailed) -> tuple[Response, int]:
    """The answer to a request Elasticsearch refused or failed (the web page shows the same as a page)."""
    if isinstance(exc, SearchFailed):
        return _es_failure(exc.status, str(exc.error.get("type", "")), str(exc))
    return _es_failure(exc.meta.status, str(exc.error), refusal_reason(exc))


#: the header of an answer telling the client to send the request again (in seconds)
RETRY_AFTER = {"Retry-After": "1"}


def passing_answer(status: int | None) -> int | None:
    """The answer to an Elasticsearch ``status`` that passes within seconds, with :data:`RETRY_AFTER`: a busy node's
    429 (a full queue) stays 429, a shard without a copy for the moment (502-504) is 503; None for any other.

    >>> [passing_answer(s) for s in (429, 503, 504, 400, 500, None)]
    [429, 503, 503, None, None, None]
    """
    if status == 429:
        return 429
    if status is not None and 502 <= status <= 504:
        return 503
    return None


def _es_failure(status: int, kind: str, reason: str) -> tuple[Response, int]:
    """Elasticsearch said no: a missing index is 404, a request it refused 400 (a block on the index, 403,
    included), its own failure 502, and so is a refusal of the service's credentials (401, or 403 for a missing
    privilege: the operator's to mend, not the client's). A busy
    node (429: a full queue) and a shard without a copy for the moment (502-504) pass within seconds, so
    the client is told to retry: 429 and 503, with ``Retry-After``."""
    if status == 404 and "index_not_found" in kind:
        return error_response(404, "index_not_found", reason)
    if status == 401 or (status == 403 and "security_exception" in kind):  # the service's credentials or privileges
        return error_response(
            502,
            "elasticsearch_refused_service",
            f"Elasticsearch refused the service's credentials or privileges ({status}): {reason}",
        )
    answer = passing_answer(status)
    if answer is not None:
        resp, _ = error_response(answer, _TYPES[answer], reason)
        resp.headers.update(RETRY_AFTER)
        return resp, answer
    if 400 <= status < 500:
        return error_response(400, "elasticsearch_rejected", reason)
    return error_response(502, "elasticsearch_error", reason)

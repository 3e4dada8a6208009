"""The neardup HTTP service: ``create_app(config=None)`` builds a Flask (APIFlask) app with one
Elasticsearch client, the fingerprinter and the settings in ``app.extensions["neardup"]``.

Configuration comes from ``NEARDUP_*`` environment variables (:class:`neardup.config.Settings`);
``config`` (a Settings, or a mapping of its field names) overrides them, for tests and embedding.

What a request may be, checked before any view runs, each refusal in the JSON error shape:

- the body: at most ``NEARDUP_MAX_BODY_BYTES`` (413), however it arrives: with Content-Length, or
  chunked (then read up to the limit, and refused at the first byte past it, never cut there);
- a JSON body is decoded once, by :func:`neardup.incoming.json_input.decode_json` (the app's JSON provider), which
  refuses nesting deeper than 100 levels and lone surrogates (400);
- the request line: at most :data:`MAX_REQUEST_LINE_BYTES` (414); a header field: at most
  :data:`MAX_HEADER_FIELD_BYTES` (431). gunicorn (``server.py``) lets them through to here, up to
  twice these limits (over that it refuses them itself, in the same JSON shape);
- the query string of an API endpoint: only the parameters the endpoint takes, and ``pretty`` (indented JSON),
  as Elasticsearch's own API; a misspelt one (``?refesh=wait_for``) is a 400, never silently ignored. The web
  page takes what a browser adds.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping
from typing import IO, Any, cast

from apiflask import APIFlask
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from flask import Request, Response, current_app, request
from flask.json.provider import DefaultJSONProvider
from gunicorn.http.errors import ParseException
from werkzeug.routing import PathConverter
from werkzeug.utils import cached_property
from werkzeug.wsgi import LimitedStream

from neardup.config import Settings
from neardup.es.client import RecordConfigs, make_client
from neardup.es.indexing import IngestConfig
from neardup.incoming.json_input import JSONRefused, decode_json
from neardup.ingest.fingerprint import Fingerprinter
from neardup.recent.journal import Journal
from neardup.recent.writes import RecentWrites

from . import web
from .api import clusters, documents, indices, jobs, meta, search
from .auth import check_view_key
from .docs import serve_docs_assets
from .errors import COMMON_ERRORS, ERROR_SCHEMA, ApiError, register_error_handlers
from .schemas import DocumentIn
from .state import ServiceState

__all__ = ["MAX_HEADER_FIELD_BYTES", "MAX_REQUEST_LINE_BYTES", "create_app"]

#: The longest request line (``GET /v1/...?q=... HTTP/1.1``) the service takes; longer is a 414. Room
#: for the documented limits: a ``q`` of 2,000 characters is at most 24,000 bytes percent-encoded
#: (12 a character), an index name 765, a document id 1,536.
MAX_REQUEST_LINE_BYTES = 32 * 1024
#: The longest header field (``Name: value``) the service takes; longer is a 431.
MAX_HEADER_FIELD_BYTES = 16 * 1024


class _BodyLimit(LimitedStream):
    """A body without Content-Length, read up to ``limit`` bytes; a byte past it is a 413. (Werkzeug's
    own stream for this case stops at the limit and returns what it read: a longer body was cut.)"""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        super().__init__(stream, limit + 1, is_max=True)
        self.source = stream
        self.max_bytes = limit

    def readinto(self, b: Any) -> int | None:
        try:
            n = super().readinto(b)
            if self.tell() > self.max_bytes:
                raise _too_large(self.source, self.max_bytes, self.max_bytes)
        except ParseException as exc:  # the server's own reading of the chunks: a client's malformed body
            raise ApiError(400, "invalid_body", f"the chunked body is malformed: {exc}") from exc
        return n

    def on_disconnect(self, error: Exception | None = None) -> None:
        if error is not None:  # the chunks stopped before the last one: a client that stopped sending
            raise ApiError(400, "incomplete_body", "the chunked body ended before its last chunk; nothing was done")
        super().on_disconnect(error)


class _WholeBody(LimitedStream):
    """A body with Content-Length, read to that length: one that ends sooner (the client stopped sending) is a 400,
    never taken for the whole. Werkzeug hands over the server's stream as it is when the server ends it itself (as
    gunicorn does), and gunicorn ends a short body without a word: half a batch would be written as if it were all."""

    def __init__(self, stream: IO[bytes], length: int) -> None:
        super().__init__(stream, length)
        self.length = length

    def on_disconnect(self, error: Exception | None = None) -> None:
        raise ApiError(
            400,
            "incomplete_body",
            f"the body ended after {self.tell()} of the {self.length} bytes its Content-Length announced; "
            "nothing was done",
        )


def _too_large(source: IO[bytes], limit: int, rest: int) -> ApiError:
    """The 413 for a body over ``limit``, once ``rest`` more bytes of it are read and dropped (the
    callers keep that to twice the limit in all): most clients send their whole body before they read
    the answer, and would see the connection closed under them instead of the 413. A longer body is
    refused without that, and its client may see only the closed connection."""
    while rest > 0 and (chunk := source.read(min(rest, 64 * 1024))):
        rest -= len(chunk)
    return ApiError(413, "request_too_large", f"the body is over the limit of {limit} bytes (NEARDUP_MAX_BODY_BYTES)")


class _Request(Request):
    """Flask's request, with the body limit a refusal however the body arrives, and the JSON decoder's
    refusals as API errors."""

    @cached_property
    def stream(self) -> IO[bytes]:
        limit = self.max_content_length
        length = self.content_length  # None when chunked
        source: IO[bytes] = self.environ["wsgi.input"]
        if limit is not None and length is not None and length > limit:
            raise _too_large(source, limit, length if length <= 2 * limit else 0)
        if length is not None and not self.shallow:
            return cast(IO[bytes], _WholeBody(source, length))
        if length is None and not self.shallow:
            if "wsgi.input_terminated" in self.environ:  # the server ends the stream (gunicorn does)
                if limit is not None:
                    return cast(IO[bytes], _BodyLimit(source, limit))
            elif self.environ.get("HTTP_TRANSFER_ENCODING"):  # Werkzeug would read it as empty
                raise ApiError(
                    411, "length_required", "this server cannot read a body without Content-Length; send one"
                )
        return super().stream

    def on_json_loading_failed(self, e: ValueError | None) -> Any:
        if isinstance(e, JSONRefused):
            raise ApiError(400, e.kind, f"the body is {e}") from e
        return super().on_json_loading_failed(e)


class _DocumentId(PathConverter):
    """``<doc_id:...>`` in a URL rule: a document id, "/" anywhere in it (first, doubled, last; sent as
    it is or as %2F, which the server decodes before routing): the whole stretch of the path up to the
    rule's next fixed part. Werkzeug's ``path`` cannot start with "/"."""

    regex = ".+?"
    part_isolating = False  # it spans "/" (Werkzeug infers this from a "/" in the regex)


class _JSONProvider(DefaultJSONProvider):
    """The app's JSON: what it decodes (``request.get_json``) goes through :func:`decode_json`."""

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return decode_json(s)


def _check_request() -> None:
    """Before any view: the request line and header fields within their limits, and a JSON body
    decoded by the app's decoder (``@input`` bodies are decoded again by webargs' own
    ``json.loads``; this makes sure that only ever sees JSON the decoder took)."""
    environ = request.environ
    target = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    if target is None:
        query = environ.get("QUERY_STRING", "")
        target = urllib.parse.quote(environ.get("PATH_INFO", "")) + (f"?{query}" if query else "")
    line = len(environ.get("REQUEST_METHOD", "")) + len(target) + len(environ.get("SERVER_PROTOCOL", "")) + 2
    if line > MAX_REQUEST_LINE_BYTES:
        raise ApiError(
            414,
            "uri_too_long",
            f"the request line has {line} bytes; the limit is {MAX_REQUEST_LINE_BYTES} "
            "(room for a q of 2,000 characters)",
        )
    for key, value in environ.items():
        if key.startswith("HTTP_") or key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            name = key.removeprefix("HTTP_").replace("_", "-").title()
            size = len(name) + 2 + len(value)  # WSGI gives header values as latin-1: one char a byte
            if size > MAX_HEADER_FIELD_BYTES:
                raise ApiError(
                    431,
                    "header_too_large",
                    f"header field {name} has {size} bytes; the limit is {MAX_HEADER_FIELD_BYTES} a field",
                )
    if request.is_json and request.get_data(cache=True).strip():
        request.get_json(cache=True)


#: the blueprints whose views are the JSON API (the web page's, ``web``, is not)
_API_BLUEPRINTS = frozenset(module.bp.name for module in (meta, indices, documents, search, clusters, jobs))
#: what every API endpoint takes besides its own parameters
_COMMON_PARAMETERS = frozenset({"pretty"})


def _query_parameters(view: Any) -> frozenset[str]:
    """The query parameters ``view`` declares (the names of its ``location="query"`` input schema)."""
    names: set[str] = set()
    for schema, location in getattr(view, "_spec", {}).get("args") or ():
        if location == "query":
            fields = (schema() if isinstance(schema, type) else schema).fields
            names.update(f.data_key or name for name, f in fields.items())
    return frozenset(names)


def _check_parameters() -> None:
    """Before an API view: every query parameter one it takes, each once (see the module doc)."""
    if request.blueprint not in _API_BLUEPRINTS or request.endpoint is None:
        return
    known = _query_parameters(current_app.view_functions[request.endpoint]) | _COMMON_PARAMETERS
    repeated = sorted(name for name in set(request.args) if len(request.args.getlist(name)) > 1)
    if repeated:  # which one was meant cannot be told: the first would be taken, the others dropped unread
        raise ApiError(
            400,
            "repeated_parameter",
            f"query parameter{'s' if len(repeated) > 1 else ''} {', '.join(map(repr, repeated))} given more than "
            "once; give each once",
            detail={"repeated": repeated},
        )
    unknown = sorted(set(request.args) - known)
    if unknown:
        takes = ", ".join(sorted(known))
        raise ApiError(
            400,
            "unknown_parameter",
            f"unknown query parameter{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
            f"{request.method} {request.url_rule} takes {takes}",
            detail={"unknown": unknown, "known": sorted(known)},
        )


def _pretty(response: Response) -> Response:
    """An API answer indented when asked with ``?pretty`` (as Elasticsearch answers)."""
    asked = request.args.get("pretty")
    if request.blueprint in _API_BLUEPRINTS and asked is not None and asked != "false" and response.is_json:
        body = response.get_json(silent=True)
        if body is not None:
            response.set_data(json.dumps(body, ensure_ascii=False, indent=2) + "\n")
    return response


def create_app(config: Settings | Mapping[str, Any] | None = None) -> APIFlask:
    """The service app (see the module doc)."""
    settings = config if isinstance(config, Settings) else Settings.from_env(**dict(config or {}))
    app = APIFlask(__name__, title="neardup", version="1", docs_path="/docs")
    app.request_class = _Request
    app.json = _JSONProvider(app)
    app.url_map.converters["doc_id"] = _DocumentId
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    app.config["VALIDATION_ERROR_STATUS_CODE"] = 400
    app.config["JSON_AS_ASCII"] = False
    app.json.ensure_ascii = False
    app.security_schemes = {"ApiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"}}
    app.config["HTTP_ERROR_SCHEMA"] = ERROR_SCHEMA
    app.config["VALIDATION_ERROR_SCHEMA"] = ERROR_SCHEMA
    client = make_client(settings)
    app.extensions["neardup"] = ServiceState(
        settings=settings,
        client=client,
        fingerprinter=Fingerprinter.default(),
        ingest=IngestConfig.from_settings(settings),
        record_configs=RecordConfigs(client, settings.index_cache_seconds),
        recent=RecentWrites(
            settings.recent_seconds, journal=Journal(settings.recent_journal) if settings.recent_journal else None
        ),
    )
    register_error_handlers(app)
    serve_docs_assets(app)
    app.before_request(check_view_key)  # first: a client without the key is refused before its request is read
    app.before_request(_check_request)
    app.before_request(_check_parameters)
    app.after_request(_pretty)
    for module in (meta, indices, documents, search, clusters, jobs, web):
        app.register_blueprint(module.bp)

    @app.spec_processor
    def _documents_body(spec: Any) -> Any:
        """The documents body is parsed by hand (object, array or NDJSON); describe it here."""
        ref = {"$ref": "#/components/schemas/DocumentIn"}
        spec.setdefault("components", {}).setdefault("schemas", {})["DocumentIn"] = _schema_of(DocumentIn)
        op = spec["paths"]["/v1/indices/{index}/documents"]["post"]
        op["requestBody"] = {
            "required": True,
            "content": {
                "application/json": {"schema": {"oneOf": [ref, {"type": "array", "items": ref}]}},
                "application/x-ndjson": {"schema": {"type": "string", "description": "one DocumentIn per line"}},
            },
        }
        error = {"application/json": {"schema": {"$ref": "#/components/schemas/HTTPError"}}}
        for path, operations in spec["paths"].items():
            for operation in operations.values():
                answers = operation.setdefault("responses", {})
                for status, reason in COMMON_ERRORS.items():
                    if path != "/healthz" or status == "503":
                        answers.setdefault(status, {"description": reason, "content": error})
                if path != "/healthz":  # reads take the key too (NEARDUP_PROTECT_READS), so the docs page can send it
                    operation.setdefault("security", [{"ApiKey": []}, {}])
        return spec

    return app


def _schema_of(schema: type) -> dict[str, Any]:
    spec = APISpec("x", "1", "3.0.3", plugins=[MarshmallowPlugin()])
    spec.components.schema("DocumentIn", schema=schema)
    out: dict[str, Any] = spec.to_dict()["components"]["schemas"]["DocumentIn"]
    return out

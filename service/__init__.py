"""The neardup HTTP service: ``create_app(config=None)`` builds a Flask (APIFlask) app with one
Elasticsearch client, the fingerprinter and the settings in ``app.extensions["neardup"]``.

Configuration comes from ``NEARDUP_*`` environment variables (:class:`neardup.config.Settings`);
``config`` (a Settings, or a mapping of its field names) overrides them, for tests and embedding.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apiflask import APIFlask

from neardup.config import Settings
from neardup.es.client import RecordConfigs, make_client
from neardup.es.indexing import IngestConfig
from neardup.ingest.fingerprint import Fingerprinter

from . import web
from .api import clusters, documents, indices, jobs, meta, search
from .errors import register_error_handlers
from .schemas import DocumentIn
from .state import ServiceState

__all__ = ["create_app"]


def create_app(config: Settings | Mapping[str, Any] | None = None) -> APIFlask:
    """The service app (see the module doc)."""
    settings = config if isinstance(config, Settings) else Settings.from_env(**dict(config or {}))
    app = APIFlask(__name__, title="neardup", version="1", docs_path="/docs")
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    app.config["VALIDATION_ERROR_STATUS_CODE"] = 400
    app.config["JSON_AS_ASCII"] = False
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    app.security_schemes = {"ApiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"}}
    client = make_client(settings)
    app.extensions["neardup"] = ServiceState(
        settings=settings,
        client=client,
        fingerprinter=Fingerprinter.default(),
        ingest=IngestConfig(max_candidates=settings.max_candidates),
        record_configs=RecordConfigs(client, settings.index_cache_seconds),
    )
    register_error_handlers(app)
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
        return spec

    return app


def _schema_of(schema: type) -> dict[str, Any]:
    from apispec import APISpec
    from apispec.ext.marshmallow import MarshmallowPlugin

    spec = APISpec("x", "1", "3.0.3", plugins=[MarshmallowPlugin()])
    spec.components.schema("DocumentIn", schema=schema)
    out: dict[str, Any] = spec.to_dict()["components"]["schemas"]["DocumentIn"]
    return out

"""The ``/docs`` page's Swagger UI, served by the service itself from the files the ``flask-swagger-ui`` package
ships: APIFlask's default loads them from a CDN, and a service without access to the internet (the usual place
for one next to Elasticsearch) would show a blank page."""

from __future__ import annotations

from importlib.resources import files

from apiflask import APIFlask
from flask import Blueprint

__all__ = ["serve_docs_assets"]

#: where the page finds Swagger UI's files
ASSETS_PATH = "/docs/assets"

bp = Blueprint(
    "docs_assets", __name__, static_folder=str(files("flask_swagger_ui") / "dist"), static_url_path=ASSETS_PATH
)


def serve_docs_assets(app: APIFlask) -> None:
    """Serve Swagger UI's files under :data:`ASSETS_PATH` and point ``app``'s docs page at them. The page names them
    relative to itself (``/docs`` → ``docs/assets/…``), so they are found behind a proxy that adds a path prefix."""
    app.register_blueprint(bp)
    here = ASSETS_PATH.lstrip("/")
    app.config["SWAGGER_UI_CSS"] = f"{here}/swagger-ui.css"
    app.config["SWAGGER_UI_BUNDLE_JS"] = f"{here}/swagger-ui-bundle.js"
    app.config["SWAGGER_UI_STANDALONE_PRESET_JS"] = f"{here}/swagger-ui-standalone-preset.js"
    app.config["DOCS_FAVICON"] = f"{here}/favicon-32x32.png"

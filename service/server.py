"""The production server: gunicorn with several worker processes, each with its own app
(and so its own Elasticsearch client)."""

from __future__ import annotations

from typing import Any

from gunicorn.app.base import BaseApplication

from neardup.config import Settings

from . import create_app

__all__ = ["serve"]


class _Gunicorn(BaseApplication):  # type: ignore[misc]
    def __init__(self, settings: Settings, options: dict[str, Any]) -> None:
        self.settings = settings
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        return create_app(self.settings)


def serve(settings: Settings, host: str, port: int, workers: int) -> None:
    """Serve until interrupted."""
    options = {
        "bind": f"{host}:{port}",
        "workers": workers,
        "threads": 4,
        "timeout": 120,
        "accesslog": "-",
        "errorlog": "-",
    }
    _Gunicorn(settings, options).run()

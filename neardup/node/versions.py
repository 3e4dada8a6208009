"""The Elasticsearch version the embedded node runs and the plugin is built for (one place for both builds)."""

from __future__ import annotations

__all__ = ["ES_VERSION"]

ES_VERSION = "8.19.21"

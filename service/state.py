"""Per-app state: one Elasticsearch client, the fingerprinter and the settings, kept in
``app.extensions["neardup"]``; views reach it through :func:`state`."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from elasticsearch import Elasticsearch
from flask import current_app

from neardup.config import Settings
from neardup.es.client import RecordConfigs
from neardup.es.indexing import IngestConfig
from neardup.ingest.fingerprint import Fingerprinter

__all__ = ["ServiceState", "state"]


@dataclass
class ServiceState:
    settings: Settings
    client: Elasticsearch
    fingerprinter: Fingerprinter
    ingest: IngestConfig
    record_configs: RecordConfigs
    lock: threading.Lock = field(default_factory=threading.Lock)


def state() -> ServiceState:
    s: ServiceState = current_app.extensions["neardup"]
    return s

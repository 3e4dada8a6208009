"""Per-app state: one Elasticsearch client, the fingerprinter and the settings, kept in
``app.extensions["neardup"]``; views reach it through :func:`state`."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from elasticsearch import Elasticsearch
from flask import current_app
from neardup.ingest.fingerprint import Fingerprinter

from neardup.config import Settings
from neardup.flagging import IngestConfig

__all__ = ["ServiceState", "state"]


@dataclass
class ServiceState:
    settings: Settings
    client: Elasticsearch
    fingerprinter: Fingerprinter
    ingest: IngestConfig
    ready_indices: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)


def state() -> ServiceState:
    s: ServiceState = current_app.extensions["neardup"]
    return s

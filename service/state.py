"""Per-app state: one Elasticsearch client, the fingerprinter and the settings, kept in
``app.extensions["neardup"]``; views reach it through :func:`state`."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from elasticsearch import Elasticsearch
from flask import current_app

from neardup.config import Settings
from neardup.es.client import RecordConfigs
from neardup.es.indexing import IngestConfig
from neardup.es.lookup import has_verify_script
from neardup.es.pipeline import fingerprint_in_pipeline
from neardup.es.recent import RecentWrites
from neardup.ingest.fingerprint import Fingerprinter, Record

__all__ = ["ServiceState", "state"]


@dataclass
class ServiceState:
    settings: Settings
    client: Elasticsearch
    fingerprinter: Fingerprinter
    ingest: IngestConfig
    record_configs: RecordConfigs
    recent: RecentWrites
    lock: threading.Lock = field(default_factory=threading.Lock)
    _in_es: bool | None = None

    def fingerprint(self, docs: Sequence[tuple[str, str | None]]) -> list[Record]:
        """Fingerprints of (text, title) pairs: by the cluster's processor with ``NEARDUP_FINGERPRINT_IN_ES``,
        else here; the same records either way."""
        if self.settings.fingerprint_in_es:
            return fingerprint_in_pipeline(self.client, docs, self.fingerprinter.version, self.settings)
        records: list[Record] = self.fingerprinter.fingerprint_many(docs)
        return records

    def verify_in_es(self) -> bool:
        """Does the cluster run neardup's native ``verify`` script? Asked once, when first needed."""
        if self._in_es is None:
            self._in_es = has_verify_script(self.client)
        return self._in_es


def state() -> ServiceState:
    s: ServiceState = current_app.extensions["neardup"]
    return s

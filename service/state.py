"""Per-app state: one Elasticsearch client, the fingerprinter and the settings, kept in
``app.extensions["neardup"]``; views reach it through :func:`state`."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from elasticsearch import ApiError, Elasticsearch
from flask import current_app

from neardup.config import Settings
from neardup.errors import ClusterFingerprintFailed
from neardup.es.client import RecordConfigs
from neardup.es.indexing import IngestConfig
from neardup.es.lookup import has_verify_script
from neardup.es.pipeline import PluginMissing, fingerprint_in_pipeline, install_pipeline, pipeline_id
from neardup.ingest.fingerprint import Fingerprinter, Record
from neardup.recent.writes import RecentWrites

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
    _flag_pipeline: str | None = None

    def fingerprint(self, docs: Sequence[tuple[str, str | None]]) -> list[Record]:
        """Fingerprints of (text, title) pairs: by the cluster's processor with either ``*_IN_ES`` setting,
        else here; the same records either way."""
        if self.settings.fingerprints_in_es:
            return fingerprint_in_pipeline(self.client, docs, self.fingerprinter.version, self.settings)
        records: list[Record] = self.fingerprinter.fingerprint_many(docs)
        return records

    def flag_pipeline(self, again: bool = False) -> str:
        """The id of the cluster's flagging pipeline (``NEARDUP_FLAG_IN_ES``), put there with this service's
        settings when first needed (``again``: once more, it was found missing), once its processor has been seen
        to fingerprint as this process does. :class:`~neardup.errors.ClusterFingerprintFailed` when it cannot be:
        no plugin, another version, or the cluster refusing the pipeline."""
        if self._flag_pipeline is not None and not again:
            return self._flag_pipeline
        with self.lock:
            if self._flag_pipeline is None or again:
                fingerprint_in_pipeline(self.client, [("版本", None)], self.fingerprinter.version, self.settings)
                pipeline = pipeline_id(True, self.settings)
                try:
                    install_pipeline(self.client, flag=True, settings=self.settings)
                except PluginMissing as exc:
                    raise ClusterFingerprintFailed(str(exc)) from exc
                except ApiError as exc:
                    raise ClusterFingerprintFailed(f"the cluster refused the {pipeline!r} pipeline: {exc}") from exc
                self._flag_pipeline = pipeline
            return self._flag_pipeline

    def verify_in_es(self) -> bool:
        """Does the cluster run neardup's native ``verify`` script? Asked once, when first needed."""
        if self._in_es is None:
            self._in_es = has_verify_script(self.client)
        return self._in_es


def state() -> ServiceState:
    s: ServiceState = current_app.extensions["neardup"]
    return s

"""Documents this process wrote moments ago, which a search cannot see until the index refreshes.

Flagging asks Elasticsearch for a new document's candidates; a document written a moment before is not
searchable until the next refresh (every second by default, later under load). Instead of writing with
``refresh=wait_for`` (up to a refresh interval per request), each process remembers what it wrote in
the last few seconds and offers those documents as candidates too. Documents written by *another*
process in that moment are not seen (near-duplicates sent to two service workers within a second of each
other); ``neardup reconcile`` or ``refresh=wait_for`` covers that case.

>>> import numpy as np
>>> clock = iter([0.0, 1.0, 9.0]).__next__
>>> recent = RecentWrites(seconds=5.0, clock=clock)
>>> doc = Stored("a", (1,), np.zeros(0, np.uint32), "x", "ok", "v1", "a", "2024-01-01T00:00:00.000000000Z")
>>> recent.remember("news", [doc])
>>> [d.id for d in recent.documents("news")], recent.documents("news")
(['a'], [])
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable

from neardup.mappings.schema import Stored

__all__ = ["RecentWrites"]


class RecentWrites:
    """Per index, the documents written through this object in the last ``seconds`` (at most
    ``max_documents`` of them, the newest kept; ``Settings.recent_seconds`` says how long). Thread-safe: a
    service worker's threads share one."""

    def __init__(
        self, seconds: float, max_documents: int = 20_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.seconds = seconds
        self.max_documents = max_documents
        self._clock = clock
        self._lock = threading.Lock()
        self._by_index: dict[str, OrderedDict[str, tuple[float, Stored]]] = {}

    def remember(self, index: str, documents: Iterable[Stored]) -> None:
        now = self._clock()
        with self._lock:
            entries = self._by_index.setdefault(index, OrderedDict())
            for doc in documents:
                entries.pop(doc.id, None)
                entries[doc.id] = (now, doc)
            while len(entries) > self.max_documents:
                entries.popitem(last=False)

    def clear(self, index: str) -> None:
        """Forget everything written to ``index`` (it was deleted and created again)."""
        with self._lock:
            self._by_index.pop(index, None)

    def documents(self, index: str) -> list[Stored]:
        """The documents still within the window, oldest first."""
        cutoff = self._clock() - self.seconds
        with self._lock:
            entries = self._by_index.get(index)
            if not entries:
                return []
            while entries and next(iter(entries.values()))[0] < cutoff:
                entries.popitem(last=False)
            return [doc for _, doc in entries.values()]

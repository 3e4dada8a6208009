"""Errors of the edge layer (CLI, Elasticsearch I/O). Each carries the data a caller needs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["BatchNotUndone", "EmbeddedESError", "NeardupError", "SearchFailed", "UsageError", "error_reason"]


class NeardupError(Exception):
    """Base of every error neardup raises on purpose; the CLI prints its message and exits 1."""

    exit_code = 1


class UsageError(NeardupError):
    """The user asked for something that cannot be done as asked (bad flag, bad input file)."""

    exit_code = 2


class EmbeddedESError(NeardupError):
    """Starting, stopping or finding the embedded Elasticsearch failed.

    ``log_tail`` holds the last lines the node wrote, when there is a log to show.
    """

    def __init__(self, message: str, log_tail: str = "") -> None:
        super().__init__(message)
        self.log_tail = log_tail


class ClusterFingerprintFailed(NeardupError):
    """The cluster could not fingerprint for us (``NEARDUP_FINGERPRINT_IN_ES``): it has no neardup processor,
    its plugin fingerprints as another version than this process, or the processor refused a document."""


def error_reason(error: Mapping[str, Any]) -> str:
    """What an Elasticsearch error object says: its reason (its type when it gives none), and for a closed index, which
    index and how to open it (Elasticsearch's reason is the one word "closed").

    >>> error_reason({"type": "illegal_argument_exception", "reason": "can't merge"})
    "can't merge"
    >>> error_reason({"type": "index_closed_exception", "reason": "closed", "index": "news"})
    'index [news] is closed (POST /news/_open opens it)'
    """
    index = error.get("index")
    if error.get("type") == "index_closed_exception" and isinstance(index, str):
        return f"index [{index}] is closed (POST /{index}/_open opens it)"
    return str(error.get("reason") or error.get("type") or dict(error))


class SearchFailed(NeardupError):
    """One search of a multi-search failed (a closed index, a shard failure, a rejected query).

    ``status`` is the HTTP status Elasticsearch gave that search; ``error`` its error object.
    """

    def __init__(self, status: int, error: dict[str, Any]) -> None:
        super().__init__(f"candidate search failed ({status}): {error_reason(error)}")
        self.status = status
        self.error = error


class BatchNotUndone(NeardupError):
    """An all-or-nothing batch had refused documents, and Elasticsearch went away before the written ones were
    undone: ``written`` may still be stored. Sending the batch again when Elasticsearch is back writes it whole."""

    def __init__(self, written: list[str]) -> None:
        shown = ", ".join(written[:5]) + (", …" if len(written) > 5 else "")
        super().__init__(
            "Elasticsearch became unreachable while a refused all-or-nothing batch was undone; "
            f"{len(written)} of its documents may still be written ({shown}): send the batch again"
        )
        self.written = written

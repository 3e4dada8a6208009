"""Errors of the edge layer (CLI, Elasticsearch I/O). Each carries the data a caller needs."""

from __future__ import annotations

__all__ = ["EmbeddedESError", "NeardupError", "UsageError"]


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

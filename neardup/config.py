"""All configuration in one place: typed defaults, read from ``NEARDUP_*`` environment variables.

Command-line flags override the environment; nothing else reads ``os.environ``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from neardup.errors import UsageError

__all__ = ["Settings", "default_home"]

ENV_PREFIX = "NEARDUP_"

#: the numbers a setting may take, (lowest, highest, whether the lowest itself is allowed); the candidate settings
#: are the plugin's ranges (Elasticsearch's result window, the 64 block tokens of a document, an hour's window)
_RANGES: dict[str, tuple[float, float, bool]] = {
    "es_timeout": (0, 86_400, False),
    "es_retries": (0, 100, True),
    "max_body_bytes": (1, 2**31 - 1, True),
    "max_documents_per_request": (1, 1_000_000, True),
    "max_text_chars": (1, 2**31 - 1, True),
    "max_candidates": (1, 10_000, True),
    "min_shared": (1, 64, True),
    "recent_seconds": (0, 3_600, False),
    "index_cache_seconds": (0, 86_400, True),
    "db_connect_timeout": (0, 3_600, False),
}
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def default_home() -> Path:
    """Where neardup keeps the embedded node's build and data (``NEARDUP_HOME`` overrides)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "neardup"


@dataclass(frozen=True)
class Settings:
    """Every setting neardup reads, with its default. Field ``es_url`` is ``NEARDUP_ES_URL``, etc."""

    es_url: str = "http://127.0.0.1:9200"
    es_username: str = ""
    es_password: str = field(default="", repr=False)
    es_api_key: str = field(default="", repr=False)
    es_timeout: float = 10.0
    es_retries: int = 3
    api_key: str = field(default="", repr=False)
    max_body_bytes: int = 16 * 1024 * 1024
    max_documents_per_request: int = 5000
    max_text_chars: int = 2_000_000
    max_candidates: int = 500
    #: how many (seed, block) tokens a lookup's candidate must share with the document
    min_shared: int = 1
    #: how long a service worker remembers the documents it wrote, which a search may not see yet: longer
    #: than the index's refresh interval
    recent_seconds: float = 5.0
    #: a file through which the processes of one host share what they wrote in the last ``recent_seconds``
    #: (:mod:`neardup.recent.journal`): ``neardup serve`` with several workers makes one for them when this is
    #: empty; set it to share one between several ``neardup serve`` of a host
    recent_journal: str = ""
    #: when true, the service has the cluster's neardup ingest processor fingerprint posted texts (the same
    #: fingerprints, computed in Java inside Elasticsearch) instead of Python
    fingerprint_in_es: bool = False
    #: when true, the service writes posted texts through the cluster's ``neardup-flag`` pipeline: the processor
    #: fingerprints and assigns each document inside Elasticsearch (the same rule, one window per node shared by
    #: every worker and client) and the service reads the assignment back; fingerprints as ``fingerprint_in_es``
    flag_in_es: bool = False
    #: how long the service keeps an index's field configuration before reading its mapping again
    index_cache_seconds: float = 30.0
    #: how long ``neardup import`` waits for a PostgreSQL or MySQL server to open a connection (a database URL
    #: naming its own ``connect_timeout`` wins): without it a host that drops packets holds the import for minutes
    db_connect_timeout: float = 10.0
    ui_index: str = "demo-news"
    #: the indices the service may read and write: comma-separated fnmatch patterns (``news-*,hr``);
    #: never its internal ones (``neardup-jobs``, ``neardup-imports``, any name starting with ".")
    index_patterns: str = "*"
    #: when true, reads (search, clusters, duplicates, jobs, the web page) need the API key too
    protect_reads: bool = False
    home: Path = field(default_factory=default_home)

    def __post_init__(self) -> None:
        for name, (low, high, low_allowed) in _RANGES.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise UsageError(f"{ENV_PREFIX}{name.upper()} must be a number, not {value!r}")
            above = value >= low if low_allowed else value > low
            if not (math.isfinite(value) and above and value <= high):
                bounds = f"{'[' if low_allowed else '('}{low:,}, {high:,}]"
                raise UsageError(f"{ENV_PREFIX}{name.upper()} must be in {bounds}, not {value!r}")

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides: Any) -> Settings:
        """Read ``NEARDUP_<FIELD>`` variables; keyword overrides (flags) win over the environment.

        >>> Settings.from_env({"NEARDUP_ES_URL": "http://es:9200", "NEARDUP_ES_RETRIES": "5"}).es_retries
        5
        """
        source = os.environ if env is None else env
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = source.get(ENV_PREFIX + f.name.upper())
            if raw is not None and raw != "":
                values[f.name] = _coerce(f.name, raw, type(getattr(cls(), f.name)))
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    @property
    def fingerprints_in_es(self) -> bool:
        """Do the cluster's processor's fingerprints serve this process (either ``*_in_es`` setting)?

        >>> Settings(flag_in_es=True).fingerprints_in_es, Settings().fingerprints_in_es
        (True, False)
        """
        return self.fingerprint_in_es or self.flag_in_es

    def index_pattern_list(self) -> tuple[str, ...]:
        """``index_patterns`` split at commas, blanks dropped.

        >>> Settings(index_patterns=" news-*, hr ,,").index_pattern_list()
        ('news-*', 'hr')
        """
        return tuple(p.strip() for p in self.index_patterns.split(",") if p.strip())


def _coerce(name: str, raw: str, kind: type) -> Any:
    """A variable's text as its setting's type; a :class:`UsageError` naming it when the text is none of that type.

    >>> _coerce("flag_in_es", "Off", bool), _coerce("es_timeout", "2.5", float)
    (False, 2.5)
    >>> home = type(Path())
    >>> _coerce("home", "~/nd", home) == Path.home() / "nd", _coerce("home", "nd", home) == Path.cwd() / "nd"
    (True, True)
    >>> _coerce("flag_in_es", "ture", bool)
    Traceback (most recent call last):
    ...
    neardup.errors.UsageError: NEARDUP_FLAG_IN_ES='ture' is not a boolean: use true or false (1/0, yes/no, on/off)
    """
    if issubclass(kind, Path):  # the default's own type (PosixPath): a home the same from any working directory
        return Path(raw).expanduser().absolute()
    if kind is bool:
        if raw.lower() in _TRUE | _FALSE:
            return raw.lower() in _TRUE
        raise UsageError(
            f"{ENV_PREFIX}{name.upper()}={raw!r} is not a boolean: use true or false (1/0, yes/no, on/off)"
        )
    convert: Any = kind  # int, float or str
    try:
        return convert(raw)
    except ValueError as exc:
        raise UsageError(f"{ENV_PREFIX}{name.upper()}={raw!r} is not a valid {kind.__name__}") from exc

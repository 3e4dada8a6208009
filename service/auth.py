"""The API key, and whether a view reads or writes.

When ``NEARDUP_API_KEY`` is set, writing endpoints (:func:`requires_key`) need it in ``X-API-Key: <key>``
or ``Authorization: ApiKey <key>``; with ``NEARDUP_PROTECT_READS=true`` reading ones
(:func:`requires_read_key`, and the web page through :func:`check_read_key`) need it too, and take it as the
password of ``Authorization: Basic`` credentials as well (any user name: what a browser sends for the web page once
it has asked for them). Writes do not: a browser attaches Basic credentials to any site's form posted to the service,
while the two headers above no other site can make it send. The key is compared in constant time.

The decorators only mark a view; :func:`check_view_key`, the app's first step of every request, checks the key it
needs before the request is read. They also say what the view does with the index it names: :func:`requires_key`
marks a write, anything else is a read; :func:`.api.common.checked_index` checks the index accordingly."""

from __future__ import annotations

import base64
import binascii
import hmac
from collections.abc import Callable
from typing import Any, TypeVar

from flask import current_app, g, request

from .errors import ApiError
from .state import state

__all__ = [
    "READ",
    "WRITE",
    "access",
    "check_key",
    "check_read_key",
    "check_view_key",
    "requires_key",
    "requires_read_key",
]

F = TypeVar("F", bound=Callable[..., Any])
READ = "read"
WRITE = "write"


def access() -> str:
    """:data:`WRITE` in a view decorated with :func:`requires_key`, else :data:`READ`."""
    mode: str = g.get("neardup_access", READ)
    return mode


def _presented(basic: bool) -> str:
    key = request.headers.get("X-API-Key", "")
    if key:
        return key
    auth = request.headers.get("Authorization", "")
    if auth[:6].lower() == "basic ":
        return _basic_password(auth[6:]) if basic else ""
    # ASCII blanks only: a header's bytes come as latin-1, where a UTF-8 key's last byte may read as a blank (\xa0)
    return auth[7:].strip(" \t") if auth[:7].lower() == "apikey " else ""


def _basic_password(credentials: str) -> str:
    """The password of Basic ``credentials`` (base64 of ``user:password``), its bytes as latin-1 code points, as a
    header's bytes come; "" when they do not decode.

    >>> _basic_password(base64.b64encode("reader:s3cr:t".encode()).decode()), _basic_password("not base64!")
    ('s3cr:t', '')
    """
    try:
        raw = base64.b64decode(credentials.strip(" \t"), validate=True)
    except (binascii.Error, ValueError):
        return ""
    _, colon, password = raw.partition(b":")
    return password.decode("latin-1") if colon else ""


def _key_matches(expected: str, basic: bool = False) -> bool:
    """The key presented is ``expected``, sent in UTF-8 or in latin-1 (as Python's own HTTP client sends a header):
    WSGI hands a header's bytes over as latin-1 code points, so the first reads them back as sent. ``basic``: as the
    password of Basic credentials too (a read's check)."""
    presented = _presented(basic)
    as_sent = presented.encode("latin-1", errors="replace")
    key = expected.encode()
    return hmac.compare_digest(as_sent, key) | hmac.compare_digest(presented.encode(), key)


def check_key() -> None:
    """401 unless no key is set or the request carries it (a writing view's check)."""
    expected = state().settings.api_key
    if expected and not _key_matches(expected):
        raise ApiError(401, "unauthorized", "this endpoint needs the API key (X-API-Key header)")


def check_view_key() -> None:
    """Before the request's body or parameters are read: the key the view to run needs (a client without it is
    refused before anything of its request is decoded or validated), as its decorator marked it; and what the view
    does with its index (:func:`access`)."""
    if request.method == "OPTIONS":  # what a client may ask of an endpoint, which Flask answers itself
        return
    view = current_app.view_functions.get(request.endpoint) if request.endpoint else None
    needs = getattr(view, _NEEDS, None)
    g.neardup_access = WRITE if needs == WRITE else READ
    if needs == WRITE:
        check_key()
    elif needs == READ:
        check_read_key()


#: the attribute a decorated view says what it needs with (kept through the decorators above it)
_NEEDS = "neardup_needs"


def requires_key(view: F) -> F:
    """A writing view: it needs the key when one is set (checked by :func:`check_view_key`, before the request is
    read)."""
    setattr(view, _NEEDS, WRITE)
    return view


def check_read_key() -> None:
    """401 unless reads are open or the request carries the key (``NEARDUP_PROTECT_READS``). Protected
    reads without a configured key are refused too: the setting never leaves them open by mistake."""
    settings = state().settings
    if not settings.protect_reads:
        return
    if not settings.api_key:
        raise ApiError(
            401, "unauthorized", "reads need the API key (NEARDUP_PROTECT_READS), but no NEARDUP_API_KEY is set"
        )
    if not _key_matches(settings.api_key, basic=True):
        raise ApiError(
            401,
            "unauthorized",
            "reads need the API key here (NEARDUP_PROTECT_READS): send it in the X-API-Key header (a browser: as the"
            " password, with any user name)",
        )


def requires_read_key(view: F) -> F:
    """A reading view: it needs the key when ``NEARDUP_PROTECT_READS`` is set (checked by :func:`check_view_key`)."""
    setattr(view, _NEEDS, READ)
    return view

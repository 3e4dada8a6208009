"""API key for writes: when ``NEARDUP_API_KEY`` is set, writing endpoints need it in
``X-API-Key: <key>`` or ``Authorization: ApiKey <key>``; compared in constant time."""

from __future__ import annotations

import hmac
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import request

from .errors import ApiError
from .state import state

__all__ = ["requires_key"]

F = TypeVar("F", bound=Callable[..., Any])


def _presented() -> str:
    key = request.headers.get("X-API-Key", "")
    if key:
        return key
    auth = request.headers.get("Authorization", "")
    return auth[7:].strip() if auth[:7].lower() == "apikey " else ""


def requires_key(view: F) -> F:
    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        expected = state().settings.api_key
        if expected and not hmac.compare_digest(_presented().encode(), expected.encode()):
            raise ApiError(401, "unauthorized", "this endpoint needs the API key (X-API-Key header)")
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]

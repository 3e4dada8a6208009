"""Helpers the blueprints share: the index name check and lazy index set-up."""

from __future__ import annotations

from neardup.errors import UsageError
from neardup.es.client import setup_index, validate_index_name

from ..errors import ApiError
from ..state import state

__all__ = ["check_text_length", "checked_index", "ensure_index"]


def checked_index(index: str) -> str:
    try:
        return validate_index_name(index)
    except UsageError as exc:
        raise ApiError(400, "invalid_index_name", str(exc)) from exc


def check_text_length(text: str) -> None:
    """413 when a posted text is longer than ``NEARDUP_MAX_TEXT_CHARS``."""
    limit = state().settings.max_text_chars
    if len(text) > limit:
        raise ApiError(413, "text_too_long", f"text has {len(text)} characters; limit {limit}")


def ensure_index(index: str) -> bool:
    """Create ``index`` with the neardup mappings unless this process already did; True if created."""
    st = state()
    if index in st.ready_indices:
        return False
    created = setup_index(st.client, index)
    with st.lock:
        st.ready_indices.add(index)
    return created

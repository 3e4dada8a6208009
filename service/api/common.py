"""Helpers the blueprints share: the index name check and lazy index set-up."""

from __future__ import annotations

from neardup.errors import UsageError
from neardup.store import setup_index, validate_index_name

from ..errors import ApiError
from ..state import state

__all__ = ["checked_index", "ensure_index"]


def checked_index(index: str) -> str:
    try:
        return validate_index_name(index)
    except UsageError as exc:
        raise ApiError(400, "invalid_index_name", str(exc)) from exc


def ensure_index(index: str) -> bool:
    """Create ``index`` with the neardup mappings unless this process already did; True if created."""
    st = state()
    if index in st.ready_indices:
        return False
    created = setup_index(st.client, index)
    with st.lock:
        st.ready_indices.add(index)
    return created

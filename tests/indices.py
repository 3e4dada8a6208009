"""Removing what a test made in Elasticsearch: indices, and the index templates neardup made for them."""

from __future__ import annotations

from elasticsearch import Elasticsearch

from neardup import mappings

__all__ = ["remove_indices"]


def remove_indices(es: Elasticsearch, *names: str) -> None:
    """Delete the indices ``names`` (those there are) and neardup's index template of each."""
    for name in names:
        es.indices.delete(index=name, ignore_unavailable=True)
        es.options(ignore_status=404).indices.delete_index_template(name=mappings.index_template_name(name))

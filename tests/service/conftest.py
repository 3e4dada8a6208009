"""Fixtures shared by the service's test modules; a module that needs other settings defines its own."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from neardup.service import create_app
from tests.service.http_helpers import serve_one_worker


@pytest.fixture(scope="module")
def api(es_url: str) -> FlaskClient:
    """A test client of the service with its default settings, one a module."""
    return create_app({"es_url": es_url}).test_client()


@pytest.fixture(scope="module")
def served(neardup_serve: Callable[..., Any]) -> Iterator[str]:
    """A real ``neardup serve`` (gunicorn, one worker) with the default settings, one a module; its base URL."""
    with serve_one_worker(neardup_serve) as url:
        yield url


@pytest.fixture
def index(es: Elasticsearch) -> Iterator[str]:
    """One fixed index name, absent when the test starts and removed when it ends."""
    name = "test-refused-documents"
    es.indices.delete(index=name, ignore_unavailable=True)
    yield name
    es.indices.delete(index=name, ignore_unavailable=True)

"""Clients may not write neardup's own ``neardup.*`` fields in any spelling, dotted keys or a ``neardup`` object."""

from __future__ import annotations

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from tests.service.refusal_helpers import assert_refused_first

pytestmark = pytest.mark.es


@pytest.mark.parametrize(
    "extra",
    [
        {"neardup.cluster": "EVIL", "neardup.is_duplicate": True},  # dotted spelling of neardup's fields
        {"neardup": {"cluster": "EVIL"}},
    ],
    ids=["dotted-neardup", "neardup-object"],
)
def test_a_document_writing_neardup_fields_is_refused_first_and_nothing_is_written(
    api: FlaskClient, es: Elasticsearch, index: str, extra: dict[str, object]
) -> None:
    assert_refused_first(api, es, index, extra)

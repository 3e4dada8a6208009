"""``neardup demo --if-missing`` (what Docker compose runs on every ``up``) keeps a demo index that exists."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from elasticsearch import Elasticsearch

from neardup.cli.demo import DEMO_INDEX

pytestmark = pytest.mark.es


@pytest.fixture
def demo_index(es: Elasticsearch) -> Iterator[str]:
    es.indices.delete(index=DEMO_INDEX, ignore_unavailable=True)
    yield DEMO_INDEX
    es.indices.delete(index=DEMO_INDEX, ignore_unavailable=True)


def test_an_existing_demo_index_is_kept(es: Elasticsearch, es_url: str, demo_index: str) -> None:
    es.index(index=demo_index, id="mine", document={"text": "posted since the first up"}, refresh=True)
    env = {k: v for k, v in os.environ.items() if k != "NEARDUP_ES_URL"}
    result = subprocess.run(
        [sys.executable, "-m", "neardup", "demo", "--no-serve", "--if-missing", "--es-url", es_url],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "kept as it is" in result.stdout
    assert es.count(index=demo_index)["count"] == 1 and es.exists(index=demo_index, id="mine")

"""``neardup demo --if-missing`` (what Docker compose runs on every ``up``) keeps a demo index that exists, unless
its own load was cut short."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from elasticsearch import Elasticsearch

from neardup.cli.demo import DEMO_INDEX, LOAD_META
from neardup.es.client import read_index_meta, setup_index, write_index_meta

pytestmark = pytest.mark.es


@pytest.fixture
def demo_index(es: Elasticsearch) -> Iterator[str]:
    es.indices.delete(index=DEMO_INDEX, ignore_unavailable=True)
    yield DEMO_INDEX
    es.indices.delete(index=DEMO_INDEX, ignore_unavailable=True)


def _demo_if_missing(es_url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "NEARDUP_ES_URL"}
    return subprocess.run(
        [sys.executable, "-m", "neardup", "demo", "--no-serve", "--if-missing", "--es-url", es_url],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_an_existing_demo_index_is_kept(es: Elasticsearch, es_url: str, demo_index: str) -> None:
    es.index(index=demo_index, id="mine", document={"text": "posted since the first up"}, refresh=True)
    result = _demo_if_missing(es_url)
    assert result.returncode == 0, result.stderr
    assert "kept as it is" in result.stdout
    assert es.count(index=demo_index)["count"] == 1 and es.exists(index=demo_index, id="mine")


def test_a_demo_load_cut_short_is_loaded_again_and_then_kept(es: Elasticsearch, es_url: str, demo_index: str) -> None:
    """An ``up`` stopped mid-load leaves the index marked as loading: the next ``up`` loads it whole."""
    setup_index(es, demo_index)
    write_index_meta(es, demo_index, LOAD_META, "loading")
    es.index(index=demo_index, id="first-batch-only", document={"text": "一批"}, refresh=True)
    result = _demo_if_missing(es_url)
    assert result.returncode == 0, result.stderr
    assert "cut short" in result.stdout and "indexed 603 documents" in result.stdout, result.stdout
    assert es.count(index=demo_index)["count"] == 603 and not es.exists(index=demo_index, id="first-batch-only")
    assert read_index_meta(es, demo_index, LOAD_META) == "loaded"
    again = _demo_if_missing(es_url)
    assert again.returncode == 0 and "kept as it is" in again.stdout, again.stdout

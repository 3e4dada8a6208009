"""``neardup dedupe`` on an index whose documents lack the text field: it names the field and ``--text-field``
(subprocesses, real Elasticsearch)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from elasticsearch import Elasticsearch, helpers

from neardup.evaluation.corpus import load_peoples_daily

pytestmark = pytest.mark.es


def _dedupe(index: str, *args: str, es_url: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"NEARDUP_ES_URL": es_url}
    return subprocess.run(
        [sys.executable, "-m", "neardup", "dedupe", index, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_dedupe_refuses_an_index_without_its_text_field_then_counts_what_lacks_it(
    es_url: str, es: Elasticsearch, index_name: str
) -> None:
    arts = load_peoples_daily()[:4]
    helpers.bulk(
        es, ({"_index": index_name, "_id": f"d{k}", "body": a.text} for k, a in enumerate(arts[:3])), refresh=True
    )
    mapping = es.indices.get_mapping(index=index_name)[index_name]["mappings"]
    refused = _dedupe(index_name, es_url=es_url)
    assert es.indices.get_mapping(index=index_name)[index_name]["mappings"] == mapping  # no neardup fields added
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert "none of the 3 documents" in refused.stderr and "'text'" in refused.stderr, refused.stderr
    assert "--text-field" in refused.stderr
    es.indices.refresh(index=index_name)
    assert es.count(index=index_name, query={"exists": {"field": "neardup"}})["count"] == 0

    es.index(index=index_name, id="t", document={"text": arts[3].text}, refresh=True)
    partly = _dedupe(index_name, es_url=es_url)
    assert partly.returncode == 0, partly.stderr
    assert "fingerprinted=1 " in partly.stdout and "no_text=3" in partly.stdout and "documents=1 " in partly.stdout
    assert "3 documents have no text in field 'text'" in partly.stderr and "--text-field" in partly.stderr

    right = _dedupe(index_name, "--text-field", "body", es_url=es_url)
    assert right.returncode == 0, right.stderr
    assert "fingerprinted=3 " in right.stdout and "no_text=1" in right.stdout and "documents=3 " in right.stdout
    assert "1 document has no text in field 'body'" in right.stderr

"""Near-duplicates posted to different service processes before the index refreshes: through the journal
of recent writes they share, a process finds what another wrote moments ago; apart, it cannot."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from neardup.evaluation.corpus import load_peoples_daily
from neardup.service import create_app

pytestmark = pytest.mark.es


def _texts() -> tuple[str, list[str]]:
    """An article and reprint-like variants of it (its last sentence replaced by a line of their own)."""
    text = next(a.text for a in load_peoples_daily() if 800 <= len(a.text) <= 2000)
    body = text[: text.rstrip("。").rfind("。") + 1]
    return text, [f"{body}本报编辑部第{k}次转载时补记。" for k in range(12)]


def _post(api: FlaskClient, index: str, doc_id: str, text: str) -> Any:
    resp = api.post(f"/v1/indices/{index}/documents", json={"id": doc_id, "text": text})
    assert resp.status_code == 200, resp.json
    return resp.json["items"][0]["cluster"]


def _unrefreshed(api: FlaskClient, es: Elasticsearch, index: str) -> None:
    assert api.put(f"/v1/indices/{index}").status_code in (200, 201)
    es.indices.put_settings(index=index, settings={"index": {"refresh_interval": "-1"}})


def test_processes_sharing_a_journal_find_each_others_unrefreshed_writes(
    es_url: str, es: Elasticsearch, index_name: str, tmp_path: Path
) -> None:
    journal = str(tmp_path / "recent.sqlite3")
    first = create_app({"es_url": es_url, "recent_journal": journal}).test_client()
    second = create_app({"es_url": es_url, "recent_journal": journal}).test_client()
    apart = create_app({"es_url": es_url}).test_client()
    original, variants = _texts()
    _unrefreshed(first, es, index_name)
    assert _post(first, index_name, "orig", original) == "orig"
    assert _post(second, index_name, "v0", variants[0]) == "orig"
    assert _post(apart, index_name, "v1", variants[1]) == "v1"  # no journal and no refresh: nothing to find
    es.indices.refresh(index=index_name)
    assert _post(apart, index_name, "copy", original) == "orig"  # once searchable, it is found


def test_serve_with_two_workers_flags_every_copy_before_any_refresh(
    neardup_serve: Callable[..., Any], es: Elasticsearch, index_name: str
) -> None:
    original, variants = _texts()
    with neardup_serve(workers=2) as srv:

        def post(doc_id: str, text: str) -> Any:
            body = json.dumps({"id": doc_id, "text": text}, ensure_ascii=False).encode()
            req = urllib.request.Request(
                f"{srv.url}/v1/indices/{index_name}/documents", body, {"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(req, timeout=60) as resp:
                return json.load(resp)["items"][0]["cluster"]

        req = urllib.request.Request(f"{srv.url}/v1/indices/{index_name}", method="PUT")
        urllib.request.urlopen(req, timeout=60).close()
        es.indices.put_settings(index=index_name, settings={"index": {"refresh_interval": "-1"}})
        assert post("orig", original) == "orig"
        with ThreadPoolExecutor(4) as pool:  # requests at once, so that both workers take some
            found = list(pool.map(post, [f"v{k}" for k in range(len(variants))], variants))
    assert found == ["orig"] * len(variants)

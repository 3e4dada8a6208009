"""Helpers of the index-access tests (``test_internal_indices``, ``test_read_access``)."""

from __future__ import annotations

import html
import re
from typing import Any

TEXT = "国务院今天召开常务会议，部署进一步推动经济稳定增长的措施，会议指出要扩大内需。"


def error_of(resp: Any, status: int) -> dict[str, Any]:
    """The refusal's type and message: the API's JSON error, or a page's error heading."""
    assert resp.status_code == status, (resp.status_code, resp.get_data(as_text=True)[:300])
    if resp.mimetype == "text/html":
        page = resp.get_data(as_text=True)
        found = re.search(r'<h1 class="error" data-type="([^"]*)">(.*?)</h1>', page, re.S)
        assert found is not None, page[:300]
        body: dict[str, Any] = {"type": found.group(1), "message": html.unescape(found.group(2))}
    else:
        body = resp.json["error"]
    assert body["type"] and body["message"]
    return body


def every_request(index: str) -> list[tuple[str, str, dict[str, Any]]]:
    """Every endpoint and page that names an index: method, URL and the test client's keyword arguments."""
    return [
        ("post", f"/v1/indices/{index}/documents", {"json": {"id": "x", "text": TEXT}}),
        ("put", f"/v1/indices/{index}", {}),
        ("post", f"/v1/indices/{index}/dedupe", {"json": {}}),
        ("post", f"/v1/indices/{index}/reconcile", {}),
        ("get", f"/v1/indices/{index}/search", {}),
        ("get", f"/v1/indices/{index}/clusters", {}),
        ("get", f"/v1/indices/{index}/clusters/x", {}),
        ("get", f"/v1/indices/{index}/documents/x/duplicates", {}),
        ("post", f"/v1/indices/{index}/duplicates", {"json": {"text": TEXT}}),
        ("get", f"/?index={index}", {}),
        ("get", f"/clusters?index={index}", {}),
        ("get", f"/overview?index={index}", {}),
    ]

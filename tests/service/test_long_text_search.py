"""One document longer than Elasticsearch's highlight limit (1,000,000 characters), up to the longest text the
service accepts, does not break search: through a real ``neardup serve``, with and without ``hide_duplicates``,
it is found and highlighted."""

from __future__ import annotations

import json
import urllib.parse

import pytest

from neardup.config import Settings
from tests.service.http_helpers import http_json

pytestmark = pytest.mark.es

SHORT = "国务院召开常务会议，部署经济工作。"
LIMIT = Settings.from_env().max_text_chars  # as the served service reads it: the same environment


def _long_text(chars: int) -> str:
    text = "国务院召开常务会议。" + "经济稳定增长的政策措施。" * (chars // 12 + 1)
    return text[:chars]


@pytest.mark.parametrize("chars", [1_200_000, LIMIT], ids=["1.2M-characters", "the-text-length-limit"])
def test_search_finds_a_text_longer_than_the_highlight_limit(served: str, index_name: str, chars: int) -> None:
    long_text = _long_text(chars)
    assert 1_000_000 < len(long_text) == chars <= LIMIT
    docs = [{"id": "long", "text": long_text}, {"id": "short", "text": SHORT}]
    status, body = http_json(
        served,
        "POST",
        f"/v1/indices/{index_name}/documents?refresh=true",
        json.dumps(docs, ensure_ascii=False).encode("utf-8"),
        {"Content-Type": "application/json"},
    )
    assert status == 200 and [i["status"] for i in body["items"]] == ["created", "created"], body
    q = urllib.parse.quote("国务院")
    for hide in ("false", "true"):
        status, found = http_json(served, "GET", f"/v1/indices/{index_name}/search?q={q}&hide_duplicates={hide}")
        assert status == 200, found
        assert {h["id"] for h in found["hits"]} == {"long", "short"}, (hide, [h["id"] for h in found["hits"]])
        long_hit = next(h for h in found["hits"] if h["id"] == "long")
        assert "<em>国</em>" in "".join(long_hit["highlight"]["text"])

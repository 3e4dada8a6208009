"""Property test of ``POST /v1/indices/{index}/documents`` against a real ``neardup serve`` (gunicorn, two
workers) and the real Elasticsearch: arbitrary JSON values, any unicode (lone surrogates too), deep nesting
and sizes around every limit. Whatever is posted: never a 5xx, never a worker restart, and afterwards
Elasticsearch holds exactly the documents the service acknowledged.

The limits are set small (``NEARDUP_MAX_*``) so that generated requests reach them.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.es

MAX_BODY = 64 * 1024
MAX_DOCS = 20
MAX_CHARS = 3000
INDEX = "test-documents-fuzz"


@dataclass
class Server:
    url: str
    acknowledged: set[str] = field(default_factory=set)
    requests: int = 0
    statuses: dict[int, int] = field(default_factory=dict)


@pytest.fixture(scope="module")
def server(neardup_serve: Callable[..., Any], es: Elasticsearch) -> Iterator[Server]:
    es.indices.delete(index=INDEX, ignore_unavailable=True)
    limits = {"max_body_bytes": str(MAX_BODY), "max_documents_per_request": str(MAX_DOCS)}
    with neardup_serve(workers=2, max_text_chars=str(MAX_CHARS), **limits) as served:
        srv = Server(served.url)
        yield srv
    print(
        f"\nfuzz: {srv.requests} requests, statuses {dict(sorted(srv.statuses.items()))}, "
        f"{len(srv.acknowledged)} documents acknowledged"
    )
    assert served.log.count("Booting worker") == 2, served.log[-3000:]  # no worker was ever restarted
    assert "WORKER TIMEOUT" not in served.log and "Worker exited" not in served.log, served.log[-3000:]
    es.indices.delete(index=INDEX, ignore_unavailable=True)


def _post(srv: Server, body: bytes, content_type: str) -> tuple[int, Any]:
    req = urllib.request.Request(
        f"{srv.url}/v1/indices/{INDEX}/documents?refresh=true",
        data=body,
        headers={"Content-Type": content_type},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            status, raw = resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    srv.requests += 1
    srv.statuses[status] = srv.statuses.get(status, 0) + 1
    return status, json.loads(raw)  # every answer is JSON, errors too


#: any code point, lone surrogates (which JSON can carry as \\ud800 escapes) often
any_char = st.one_of(st.characters(codec=None, exclude_categories=()), st.sampled_from(["\ud800", "\udfff", "\udbff"]))
json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(any_char, max_size=40),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)
texts = st.one_of(
    st.text(any_char, max_size=200),
    st.sampled_from(["国务院今天召开常务会议，部署推动经济稳定增长的措施。", "好", "", "，。！"]),
    st.integers(MAX_CHARS - 2, MAX_CHARS + 2).map(lambda n: ("新闻" * n)[:n]),  # around the text limit
)


def _deep(depth: int) -> Any:
    value: Any = {"leaf": 1}
    for _ in range(depth):
        value = {"o": value}
    return value


documents = st.fixed_dictionaries(
    {"text": texts},
    optional={
        "id": st.one_of(st.text(any_char, max_size=30), st.integers(), json_value),
        "title": st.one_of(st.text(any_char, max_size=30), json_value),
        "extra": json_value,
        "deep": st.integers(15, 30).map(_deep),  # around Elasticsearch's object depth limit (20)
        "neardup.cluster": st.just("EVIL"),
    },
)
bodies = st.one_of(
    st.lists(documents, min_size=0, max_size=MAX_DOCS + 3),  # around the documents-per-request limit
    documents,
    json_value,
)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=bodies, ndjson=st.booleans(), pad=st.integers(0, MAX_BODY + 4096))
@example(body=[{"id": "s1", "text": "国务院\ud800今天召开常务会议，部署推动经济稳定增长的措施。"}], ndjson=False, pad=0)
@example(body=[{"id": "s\udfff", "text": "国务院今天召开常务会议", "title": "\udbff"}], ndjson=True, pad=0)
@example(body=b'{"o":' * 5000 + b"1" + b"}" * 5000, ndjson=False, pad=0)
@example(body=b"[" * 100_000 + b"]" * 100_000, ndjson=False, pad=0)
def test_any_documents_body_never_fails_the_service(server: Server, body: Any, ndjson: bool, pad: int) -> None:
    if isinstance(body, bytes):  # nesting too deep for json.dumps itself
        raw, content_type = body, "application/json"
    elif ndjson and isinstance(body, list):
        raw = "\n".join(json.dumps(d) for d in body).encode()
        content_type = "application/x-ndjson"
    else:
        raw = json.dumps(body).encode()
        content_type = "application/json"
    if pad > MAX_BODY - 200 and isinstance(body, list):  # bodies around the byte limit
        raw = raw + b" " * max(0, pad - len(raw))
    status, answer = _post(server, raw, content_type)
    assert status < 500, answer
    assert isinstance(answer, dict)
    if status == 200:
        server.acknowledged |= {i["id"] for i in answer["items"] if i["status"] in ("created", "updated")}
    else:
        assert set(answer) == {"error"} and {"type", "message"} <= set(answer["error"])


def test_elasticsearch_holds_exactly_the_acknowledged_documents(server: Server, es: Elasticsearch) -> None:
    assert server.requests > 0
    if not es.indices.exists(index=INDEX):
        assert server.acknowledged == set()
        return
    es.indices.refresh(index=INDEX)
    stored = {h["_id"] for h in es.search(index=INDEX, size=10_000, source=False)["hits"]["hits"]}
    assert stored == server.acknowledged

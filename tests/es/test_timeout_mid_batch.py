"""A bulk request Elasticsearch carries out but whose answer never reaches the client in time (a slow network, a
long GC pause): its documents may be written, and the client cannot know. Through a proxy that holds back the
answer to one ``_bulk`` request: an all-or-nothing batch is undone whole, those documents included, and a partial
batch answers them as not known to be written."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest
from elasticsearch import Elasticsearch

from neardup.es.client import setup_index
from neardup.es.documents import Incoming
from neardup.es.indexing import IngestConfig, index_batch
from neardup.ingest.fingerprint import Fingerprinter
from tests.es.batch_helpers import distinct_docs, stored_ids

pytestmark = pytest.mark.es

CHUNK = 5
DOCS = 12
TIMEOUT = 2.0


class _HoldingProxy(ThreadingHTTPServer):
    """Forwards every request to ``target``; the answer to the ``hold``-th ``_bulk`` request (counting from 1) comes
    only after ``TIMEOUT`` and more, when the client has given up on it; with ``refuse``, that request is not
    forwarded, and every item of it is refused (503, as a shard without a copy would)."""

    daemon_threads = True

    def __init__(self, target: str, hold: int, refuse: bool = False) -> None:
        super().__init__(("127.0.0.1", 0), _Forward)
        self.target = urlsplit(target)
        self.hold = hold
        self.refuse = refuse
        self.bulks = 0
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Forward(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HoldingProxy

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        held = False
        if "_bulk" in self.path:
            with self.server.lock:
                self.server.bulks += 1
                held = self.server.bulks == self.server.hold
        if held and self.server.refuse:
            self._answer(200, [("Content-Type", "application/json")], _refusal(body))
            return
        target = self.server.target
        conn = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        conn.request(self.command, self.path, body=body, headers=headers)
        answer = conn.getresponse()
        data = answer.read()
        conn.close()
        if held:  # carried out by Elasticsearch; the client hears nothing in time
            time.sleep(TIMEOUT * 2)
            self.close_connection = True
            return
        self._answer(answer.status, answer.getheaders(), data)

    def _answer(self, status: int, headers: list[tuple[str, str]], data: bytes) -> None:
        self.send_response(status)
        for k, v in headers:
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _forward


def _refusal(bulk: bytes) -> bytes:
    """A bulk answer refusing every item of ``bulk`` (NDJSON of action and source lines)."""
    lines = [json.loads(line) for line in bulk.decode("utf-8").splitlines() if line.strip()]
    items = [
        {
            op: {
                "_index": meta.get("_index"),
                "_id": meta.get("_id"),
                "status": 503,
                "error": {"type": "unavailable", "reason": "refused by the test's proxy"},
            }
        }
        for action in lines[::2]
        for op, meta in action.items()
    ]
    return json.dumps({"took": 1, "errors": True, "items": items}).encode("utf-8")


@pytest.fixture(params=[False])
def proxied(es_url: str, request: pytest.FixtureRequest) -> Iterator[tuple[Elasticsearch, _HoldingProxy]]:
    proxy = _HoldingProxy(es_url, hold=2, refuse=request.param)  # the batch's second chunk, or its second pass
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    client = Elasticsearch(proxy.url, request_timeout=TIMEOUT, max_retries=0, retry_on_timeout=False)
    yield client, proxy
    client.close()
    proxy.shutdown()
    proxy.server_close()


def test_an_all_or_nothing_batch_is_undone_with_the_documents_no_answer_came_for(
    proxied: tuple[Elasticsearch, _HoldingProxy], es: Elasticsearch, index_name: str
) -> None:
    client, proxy = proxied
    setup_index(es, index_name)
    es.index(index=index_name, id="d6", document={"text": "an older copy"}, refresh=True)  # put back, not deleted
    results = index_batch(
        client, index_name, distinct_docs(DOCS), Fingerprinter.default(), IngestConfig(chunk_size=CHUNK, atomic=True)
    )
    assert proxy.bulks >= 2  # the held chunk was sent, and Elasticsearch carried it out
    assert [r.status for r in results] == ["not_written"] * CHUNK + ["error"] * (DOCS - CHUNK)
    assert stored_ids(es, index_name) == {"d6"}
    assert all(r.unanswered and "undone" in (r.error or "") for r in results[CHUNK:])
    assert es.get(index=index_name, id="d6")["_source"] == {"text": "an older copy"}


@pytest.mark.parametrize("proxied", [True], indirect=True)
def test_a_partial_batch_whose_second_pass_fails_asks_again_for_what_names_a_refused_document(
    proxied: tuple[Elasticsearch, _HoldingProxy], es: Elasticsearch, index_name: str
) -> None:
    """The first pass: r refused (a value its field's mapping cannot take), w written in r's cluster. The second pass,
    which writes w (and o) again without r, is refused: w is answered as an error, to be sent again."""
    client, proxy = proxied
    setup_index(es, index_name)
    es.indices.put_mapping(index=index_name, properties={"n": {"type": "integer"}})
    first, second = distinct_docs(2)
    text = first.text
    docs = [
        Incoming("r", text, None, {"n": "not a number"}),
        Incoming("w", text + "（完）"),
        Incoming("o", second.text),
    ]
    results = {
        r.id: r for r in index_batch(client, index_name, docs, Fingerprinter.default(), IngestConfig(atomic=False))
    }
    assert proxy.bulks >= 2  # the second pass was sent
    assert results["r"].status == "error" and results["r"].error_status == 400
    assert results["w"].status == "error" and "send it again" in (results["w"].error or ""), results["w"]
    assert "'r'" in (results["w"].error or "")
    assert results["o"].status == "created" and results["o"].cluster == "o"  # named no refused document: it stands


def test_a_partial_batch_says_which_documents_may_be_written(
    proxied: tuple[Elasticsearch, _HoldingProxy], es: Elasticsearch, index_name: str
) -> None:
    client, _ = proxied
    setup_index(es, index_name)
    results = index_batch(
        client, index_name, distinct_docs(DOCS), Fingerprinter.default(), IngestConfig(chunk_size=CHUNK, atomic=False)
    )
    assert [r.status for r in results] == ["created"] * CHUNK + ["error"] * (DOCS - CHUNK)
    for r in results[CHUNK:]:
        assert r.unanswered and "may be written" in (r.error or ""), r
    assert {f"d{k}" for k in range(CHUNK, 2 * CHUNK)} <= stored_ids(es, index_name)  # as the answers warn

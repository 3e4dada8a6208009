"""One real Elasticsearch per test session.

Chosen in this order: ``ES_URL`` if set; else, where Java and Maven are installed, the embedded runner
(``neardup es start`` machinery) on a free port with a throw-away data directory, which loads neardup's plugin
so that every test runs; else a testcontainers Elasticsearch when a Docker engine answers (Elastic's image,
without the plugin: its tests skip); else the embedded runner, which then says what it lacks. Its version is
printed in the session header. Tests get a fresh index name each.
"""

from __future__ import annotations

import functools
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from neardup import node as esnode
from neardup.ingest.fingerprint import Fingerprinter
from neardup.ingest.records import RecordConfig
from neardup.node.plugin_build import missing_build_tools
from tests.indices import remove_indices
from tests.nodes import new_node
from tests.ports import free_node_port


@dataclass
class ESHandle:
    url: str
    kind: str
    version: str
    stop: Callable[[], None]


_HANDLE: ESHandle | None = None


def _docker_answers() -> bool:
    """True when a Docker engine answers on DOCKER_HOST or the default unix socket."""
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if not host.startswith("unix://"):
        return True  # a remote engine was configured on purpose; testcontainers reports if it is down
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(3)
        try:
            sock.connect(host.removeprefix("unix://"))
            sock.sendall(b"GET /_ping HTTP/1.0\r\n\r\n")
            return sock.recv(16).startswith(b"HTTP/1.")
        except OSError:
            return False


def _server_version(url: str) -> str:
    with Elasticsearch(url, request_timeout=30) as client:
        version: str = client.info()["version"]["number"]
    return version


def _start() -> ESHandle:
    url = os.environ.get("ES_URL")
    if url:
        return ESHandle(url, "ES_URL", _server_version(url), lambda: None)
    if missing_build_tools() and _docker_answers():
        try:  # where testcontainers 4.15 and later keep it; its old module warns, and warnings fail the session
            from testcontainers.community.elasticsearch import ElasticSearchContainer
        except ImportError:
            from testcontainers.elasticsearch import ElasticSearchContainer  # type: ignore[no-redef]

        container = ElasticSearchContainer(f"docker.elastic.co/elasticsearch/elasticsearch:{esnode.ES_VERSION}")
        container.with_env("ES_JAVA_OPTS", "-Xms1g -Xmx1g").start()
        url = container.get_url()
        return ESHandle(url, "testcontainers", _server_version(url), container.stop)
    node = new_node("neardup-test-es-", heap="1g")
    url = node.start().url
    return ESHandle(url, "embedded", _server_version(url), node.remove)


def es_handle() -> ESHandle:
    global _HANDLE
    if _HANDLE is None:
        _HANDLE = _start()
    return _HANDLE


def pytest_report_header(config: pytest.Config) -> str:
    if os.environ.get("NEARDUP_TEST_NO_ES"):
        return "elasticsearch: not started (NEARDUP_TEST_NO_ES set); tests marked `es` are skipped"
    handle = es_handle()
    return f"elasticsearch: {handle.version} ({handle.kind}) at {handle.url}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("NEARDUP_TEST_NO_ES"):
        skip = pytest.mark.skip(reason="NEARDUP_TEST_NO_ES is set")
        for item in items:
            if "es" in item.keywords:
                item.add_marker(skip)


def pytest_unconfigure(config: pytest.Config) -> None:
    global _HANDLE
    if _HANDLE is not None:
        _HANDLE.stop()
        _HANDLE = None


@pytest.fixture(scope="session")
def es_url() -> str:
    return es_handle().url


@pytest.fixture(scope="session")
def es(es_url: str) -> Iterator[Elasticsearch]:
    client = Elasticsearch(es_url, request_timeout=60)
    yield client
    client.close()


@pytest.fixture
def index_name(es: Elasticsearch) -> Iterator[str]:
    """A fresh index name; the index and its neardup index template are removed afterwards."""
    name = f"test-{uuid.uuid4().hex[:12]}"
    yield name
    remove_indices(es, name)


@pytest.fixture(scope="session")
def fp() -> Fingerprinter:
    """The default fingerprinter (its tables load once per session)."""
    return Fingerprinter.default()


@pytest.fixture(scope="session")
def complaint_fields() -> RecordConfig:
    """A field configuration of complaint rows: text, two values ×2, an ignored notice, a tag set."""
    return RecordConfig.parse(
        {
            "fields": {
                "complaint": {"mode": "text"},
                "category": {"mode": "value", "weight": 2},
                "district": {"mode": "value", "weight": 2},
                "office": {"mode": "ignore"},
                "tags": {"mode": "set"},
            }
        }
    )


@dataclass
class Served:
    """A running ``neardup serve``: its base URL, and everything it printed once it has stopped."""

    url: str
    pid: int
    log: str = ""


@contextmanager
def _neardup_serve(es_url: str, workers: int = 2, **settings: str) -> Iterator[Served]:
    """A real ``neardup serve`` (gunicorn) on a free port, answering ``/healthz`` when entered, stopped
    when left; ``settings`` become ``NEARDUP_<NAME>`` variables."""
    env = os.environ | {"NEARDUP_ES_URL": es_url} | {f"NEARDUP_{k.upper()}": v for k, v in settings.items()}
    port = free_node_port()
    # the output goes to a file: a pipe read only at the end fills (gunicorn logs every request) and stalls it
    with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "neardup", "serve", "--port", str(port), "--workers", str(workers)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        served = Served(f"http://127.0.0.1:{port}", proc.pid)
        try:
            for _ in range(300):
                try:
                    with urllib.request.urlopen(served.url + "/healthz", timeout=5):
                        break
                except OSError:  # refused, reset or timed out while the workers boot
                    time.sleep(0.2)
            else:
                raise AssertionError("neardup serve did not come up")
            yield served
        finally:
            proc.terminate()
            proc.wait(timeout=60)
            log.seek(0)
            served.log = log.read()


@pytest.fixture(scope="session")
def neardup_serve(es_url: str) -> Callable[..., AbstractContextManager[Served]]:
    """``with neardup_serve(workers=2, max_text_chars="3000") as served:`` a real ``neardup serve`` against the
    session's Elasticsearch (see :func:`_neardup_serve`)."""
    return functools.partial(_neardup_serve, es_url)


def _finished_job(api: Any, job_id: str, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job: dict[str, Any] = api.get(f"/v1/jobs/{job_id}").json
        if job.get("state") != "running":
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} still running after {timeout}s")


@pytest.fixture(scope="session")
def wait_for_job() -> Callable[..., dict[str, Any]]:
    """``wait_for_job(api, job_id)``: the job's record once it is no longer running (a test client)."""
    return _finished_job

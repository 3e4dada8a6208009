"""The ``neardup`` ingest processor in a real node (the session's embedded Elasticsearch loads the plugin):
pipeline definitions, bulk requests naming the pipeline or getting it as the index default
(``neardup setup INDEX --pipeline``), every per-document failure, and the fingerprint fields against Python's.

Against ``ES_URL`` or a testcontainers cluster the module runs only when that cluster has the plugin.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from elasticsearch import BadRequestError, Elasticsearch

from neardup.config import Settings
from neardup.errors import ClusterFingerprintFailed, UsageError
from neardup.es import pipeline as pipeline_module
from neardup.es.client import setup_index
from neardup.es.indexing import IngestConfig, index_batch
from neardup.es.pipeline import (
    FLAG_PIPELINE_ID,
    PIPELINE_ID,
    fingerprint_in_pipeline,
    install_pipeline,
    nodes_without_processor,
    pipeline_body,
    pipeline_id,
)
from neardup.evaluation.corpus import load_peoples_daily
from neardup.incoming.documents import Incoming
from neardup.ingest.fingerprint import Fingerprinter
from neardup.mappings import schema
from tests.nodes import own_node

pytestmark = pytest.mark.es

NEARDUP = [sys.executable, "-m", "neardup"]
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$")


@pytest.fixture(scope="module")
def pipeline(es: Elasticsearch) -> str:
    """The neardup pipeline, installed; the module is skipped on a cluster that is not ours and lacks the plugin."""
    if nodes_without_processor(es):
        if es.info()["version"].get("build_type") == "embedded":
            pytest.fail("the embedded node did not load the neardup plugin")
        pytest.skip("this cluster has no neardup plugin")
    install_pipeline(es)
    return PIPELINE_ID


@pytest.fixture
def index(es: Elasticsearch, index_name: str) -> str:
    setup_index(es, index_name)
    return index_name


def _bulk(es: Elasticsearch, index: str, docs: dict[str, dict[str, Any]], **params: Any) -> dict[str, dict[str, Any]]:
    """Index ``docs`` (id → source) in one bulk request; each id's item result."""
    operations: list[dict[str, Any]] = []
    for doc_id, source in docs.items():
        operations += [{"index": {"_index": index, "_id": doc_id}}, source]
    resp = es.bulk(operations=operations, refresh=True, **params)
    return {item["index"]["_id"]: item["index"] for item in resp["items"]}


def _reason(item: dict[str, Any]) -> str:
    assert "error" in item, f"expected a failure, got {item}"
    return str(item["error"]["reason"])


def _put(es: Elasticsearch, definition: dict[str, Any], pipeline: str = "neardup-test") -> None:
    es.ingest.put_pipeline(id=pipeline, processors=[{"neardup": definition}])


def test_the_pipeline_is_installed_as_defined(es: Elasticsearch, pipeline: str) -> None:
    stored = es.ingest.get_pipeline(id=pipeline)[pipeline]
    body = pipeline_body()
    assert stored["processors"] == body["processors"]
    assert stored["version"] == body["version"] and stored["_meta"] == body["_meta"]
    install_pipeline(es)  # idempotent


def test_installing_with_other_settings_answers_the_id_to_write_through(es: Elasticsearch, pipeline: str) -> None:
    settings = Settings.from_env({}, recent_seconds=10)
    own = install_pipeline(es, flag=True, settings=settings)
    try:
        # not neardup-flag, whose window is the default's: writing there would not use these settings
        assert own == pipeline_id(True, settings) != FLAG_PIPELINE_ID
        processor = es.ingest.get_pipeline(id=own)[own]["processors"][0]["neardup"]
        assert processor["window_seconds"] == 10
    finally:
        es.ingest.delete_pipeline(id=own)


@pytest.mark.parametrize(
    ("definition", "prop", "reason"),
    [
        ({"title_field": "title"}, "field", "[field] required property is missing"),
        ({"field": 5}, "field", "[field] property isn't a string"),
        ({"field": "text", "title_field": ["a"]}, "title_field", "[title_field] property isn't a string"),
        ({"field": "text", "target_field": ""}, "target_field", "[target_field] must name a field"),
        ({"field": "text", "ignore_missing": "yes"}, "ignore_missing", "[ignore_missing] property isn't a boolean"),
        ({"field": "text", "flag": "no"}, "flag", "[flag] property isn't a boolean"),
        (
            {"field": "text", "flag": True, "min_shared": 0},
            "min_shared",
            "[min_shared] must be between 1 and 64",
        ),
    ],
)
def test_a_malformed_definition_is_refused_naming_the_property(
    es: Elasticsearch, pipeline: str, definition: dict[str, Any], prop: str, reason: str
) -> None:
    with pytest.raises(BadRequestError) as caught:
        _put(es, definition)
    error = caught.value.body["error"]
    assert caught.value.meta.status == 400
    assert error["reason"].startswith(reason), error
    assert error["property_name"] == prop and error["processor_type"] == "neardup"
    assert not es.options(ignore_status=404).ingest.get_pipeline(id="neardup-test").body


def test_an_unknown_key_is_refused(es: Elasticsearch, pipeline: str) -> None:
    with pytest.raises(BadRequestError) as caught:
        _put(es, {"field": "text", "target": "neardup"})
    assert caught.value.meta.status == 400
    reason = caught.value.body["error"]["reason"]
    assert reason == "processor [neardup] doesn't support one or more provided configuration parameters [target]"


def test_a_definition_the_processor_refuses_is_not_called_a_missing_plugin(
    es: Elasticsearch, pipeline: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As when the Python side is newer than the cluster's plugin: the processor is there and says what it refuses."""
    newer = {"processors": [{"neardup": {"field": "text", "from_a_newer_neardup": True}}]}
    monkeypatch.setattr(pipeline_module, "pipeline_body", lambda flag=False, settings=None: newer)
    with pytest.raises(UsageError) as caught:
        install_pipeline(es, settings=Settings(max_text_chars=1234))
    assert "refused the pipeline" in str(caught.value) and "[from_a_newer_neardup]" in str(caught.value)
    assert "install the plugin" not in str(caught.value)
    with pytest.raises(ClusterFingerprintFailed, match=r"refused the pipeline.*from_a_newer_neardup"):
        fingerprint_in_pipeline(es, [("正文", None)], "v", Settings())


def test_elasticsearch_handles_the_standard_keys(es: Elasticsearch, pipeline: str, index: str) -> None:
    """``tag``, ``description``, ``on_failure`` and ``ignore_failure`` are Elasticsearch's own. (So is ``if``; its
    scripts need Painless, and the embedded node has neither Painless nor the ``set`` processor, so the handler here
    is a neardup processor that lets the document through.)"""
    let_through = {"neardup": {"field": "nothing", "ignore_missing": True}}
    definition = {"field": "body", "tag": "fp", "description": "fingerprints", "on_failure": [let_through]}
    try:
        _put(es, definition)
        stored = es.ingest.get_pipeline(id="neardup-test")["neardup-test"]["processors"][0]["neardup"]
        assert stored["tag"] == "fp" and stored["description"] == "fingerprints"
        assert _bulk(es, index, {"a": {"title": "t"}}, pipeline="neardup-test")["a"]["result"] == "created"
        _put(es, {"field": "body", "ignore_failure": True})
        assert _bulk(es, index, {"b": {"title": "t"}}, pipeline="neardup-test")["b"]["result"] == "created"
        assert es.get(index=index, id="b")["_source"] == {"title": "t"}
    finally:
        es.options(ignore_status=404).ingest.delete_pipeline(id="neardup-test")


def test_every_document_failure_names_the_field_and_the_document(es: Elasticsearch, pipeline: str, index: str) -> None:
    limit = Settings().max_text_chars  # the Python service's limit, which the processor mirrors
    docs: dict[str, dict[str, Any]] = {
        "no-text": {"title": "只有标题"},
        "null-text": {"text": None},
        "number": {"text": 42},
        "array": {"text": ["一", "二"]},
        "title-number": {"text": "正文", "title": 7},
        "too-long": {"text": "a" * (limit + 1)},
        "target-string": {"text": "正文", "neardup": "mine"},
    }
    items = _bulk(es, index, docs, pipeline=pipeline)
    assert _reason(items["no-text"]).startswith(f"field [text] is missing in document [no-text] of index [{index}]")
    assert _reason(items["null-text"]).startswith(f"field [text] is null in document [null-text] of index [{index}]")
    assert (
        _reason(items["number"])
        == f"field [text] of document [number] of index [{index}] must be a string, not a number"
    )
    assert _reason(items["array"]).endswith("must be a string, not an array")
    assert _reason(items["title-number"]).startswith("field [title] of document [title-number]")
    assert _reason(items["too-long"]) == (
        f"field [text] of document [too-long] of index [{index}] has {limit + 1} characters; the limit is {limit}"
    )
    assert _reason(items["target-string"]).startswith("field [neardup] of document [target-string]")
    assert all(item["status"] == 400 for item in items.values())
    assert es.count(index=index)["count"] == 0


def test_a_text_at_the_limit_is_fingerprinted(es: Elasticsearch, pipeline: str, index: str) -> None:
    item = _bulk(es, index, {"at-limit": {"text": "a" * Settings().max_text_chars}}, pipeline=pipeline)["at-limit"]
    assert item.get("result") == "created", item


def test_ignore_missing_lets_a_document_through_unchanged(es: Elasticsearch, pipeline: str, index: str) -> None:
    es.ingest.put_pipeline(
        id="neardup-test-ignore", processors=[{"neardup": {"field": "body", "ignore_missing": True}}]
    )
    try:
        items = _bulk(es, index, {"a": {"title": "标题", "n": 1}, "b": {"body": 3}}, pipeline="neardup-test-ignore")
        assert items["a"]["result"] == "created"
        assert es.get(index=index, id="a")["_source"] == {"title": "标题", "n": 1}
        assert _reason(items["b"]).startswith("field [body] of document [b]")  # a wrong type is not "missing"
    finally:
        es.options(ignore_status=404).ingest.delete_pipeline(id="neardup-test-ignore")


def _setup(index: str, es_url: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*NEARDUP, "setup", index, "--pipeline", "--es-url", es_url],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=os.environ | env,
    )


def test_setup_pipeline_carries_the_services_text_limit(
    es: Elasticsearch, es_url: str, pipeline: str, index_name: str
) -> None:
    try:
        result = _setup(index_name, es_url, NEARDUP_MAX_TEXT_CHARS="100")
        assert result.returncode == 0, result.stderr
        items = _bulk(es, index_name, {"at": {"text": "字" * 100}, "over": {"text": "字" * 101}})
        assert items["at"].get("result") == "created", items["at"]
        assert _reason(items["over"]) == (
            f"field [text] of document [over] of index [{index_name}] has 101 characters; the limit is 100"
        )
    finally:
        install_pipeline(es)  # the module's pipeline, with the default limit, for the other tests


def test_setup_pipeline_makes_it_the_default_of_the_index(
    es: Elasticsearch, es_url: str, pipeline: str, index_name: str
) -> None:
    result = _setup(index_name, es_url)
    assert result.returncode == 0, result.stderr
    assert f"installed ingest pipeline neardup; it is the default pipeline of {index_name}" in result.stdout
    settings = es.indices.get_settings(index=index_name, name="index.default_pipeline", flat_settings=True)
    assert settings[index_name]["settings"]["index.default_pipeline"] == "neardup"
    # a plain bulk naming no pipeline runs it: the processor refuses a document without a text
    item = _bulk(es, index_name, {"x": {"title": "t"}})["x"]
    assert _reason(item).startswith(f"field [text] is missing in document [x] of index [{index_name}]")
    assert _setup(index_name, es_url).returncode == 0  # idempotent


def test_an_index_created_again_from_its_template_runs_the_pipeline(
    es: Elasticsearch, es_url: str, pipeline: str, index_name: str
) -> None:
    assert _setup(index_name, es_url).returncode == 0
    es.indices.delete(index=index_name)
    setup_index(es, index_name)  # what the service does before its first write to a missing index
    es.indices.delete(index=index_name)
    # a plain bulk creates the index from its template, and the pipeline fingerprints the document
    item = _bulk(es, index_name, {"y": {"text": "国务院今天召开常务会议，部署进一步推动经济稳定增长的措施。"}})["y"]
    assert item.get("result") == "created", item
    assert es.get(index=index_name, id="y")["_source"][schema.ROOT][schema.STATUS] == "ok"


def test_setup_pipeline_leaves_another_default_pipeline_alone(
    es: Elasticsearch, es_url: str, pipeline: str, index_name: str
) -> None:
    es.ingest.put_pipeline(id="theirs", processors=[{"neardup": {"field": "body"}}])
    try:
        es.indices.create(index=index_name, settings={"index.default_pipeline": "theirs"})
        result = _setup(index_name, es_url)
        assert result.returncode == 2
        assert f"index '{index_name}' already runs default pipeline theirs" in result.stderr
        settings = es.indices.get_settings(index=index_name, name="index.default_pipeline", flat_settings=True)
        assert settings[index_name]["settings"]["index.default_pipeline"] == "theirs"
    finally:
        es.indices.delete(index=index_name, ignore_unavailable=True)
        es.options(ignore_status=404).ingest.delete_pipeline(id="theirs")


@pytest.fixture(scope="module")
def bare_node() -> Iterator[str]:
    """A second embedded node without neardup's plugin, as a user's cluster before installing it."""
    with own_node("neardup-test-bare-", heap="384m", plugin=False) as node:
        yield node.start().url


def test_setup_pipeline_without_the_plugin_fails_clearly_and_changes_nothing(bare_node: str) -> None:
    result = _setup("news", bare_node)
    assert result.returncode == 1
    assert "there is no 'neardup' ingest processor on node(s) node-0: install the neardup plugin" in result.stderr
    assert "Traceback" not in result.stderr
    with Elasticsearch(bare_node) as client:
        assert not client.indices.exists(index="news")
        assert not client.options(ignore_status=404).ingest.get_pipeline(id=PIPELINE_ID).body


def _python_fields(fp: Fingerprinter, text: str, title: str | None) -> dict[str, Any]:
    return schema.record_fields(fp.fingerprint(text, title))


def test_a_bulk_through_the_default_pipeline_writes_the_fields(
    es: Elasticsearch, es_url: str, pipeline: str, index_name: str, fp: Fingerprinter
) -> None:
    assert _setup(index_name, es_url).returncode == 0
    docs = {"a": {"text": "国务院今天召开常务会议，部署进一步推动经济稳定增长的措施。", "title": "常务会议", "n": 1}}
    item = _bulk(es, index_name, docs)["a"]
    assert item.get("result") == "created", item
    source = es.get(index=index_name, id="a")["_source"]
    nd = source.pop(schema.ROOT)
    assert source == docs["a"]
    assert _TIMESTAMP.match(nd.pop(schema.INDEXED_AT))
    assert nd == _python_fields(fp, docs["a"]["text"], docs["a"]["title"])


def _pipeline_runs(es: Elasticsearch) -> int:
    stats = es.nodes.stats(metric="ingest", filter_path=[f"nodes.*.ingest.pipelines.{PIPELINE_ID}.count"])
    return sum(n["ingest"]["pipelines"][PIPELINE_ID]["count"] for n in stats["nodes"].values())


def test_neardups_own_writes_skip_the_default_pipeline(
    es: Elasticsearch, es_url: str, pipeline: str, index_name: str, fp: Fingerprinter
) -> None:
    """Flagging writes documents already fingerprinted and assigned: the index's default pipeline is not run
    on them (it would fingerprint again, or overwrite a record index's fields with a text fingerprint)."""
    assert _setup(index_name, es_url).returncode == 0
    before = _pipeline_runs(es)
    text = "国务院今天召开常务会议，部署进一步推动经济稳定增长的措施。"
    results = index_batch(es, index_name, [Incoming("a", text, None, {})], fp, IngestConfig(refresh="true"))
    assert results[0].status == "created"
    assert _pipeline_runs(es) == before
    assert es.get(index=index_name, id="a")["_source"][schema.ROOT][schema.CLUSTER] == "a"
    _bulk(es, index_name, {"b": {"text": text}})
    assert _pipeline_runs(es) == before + 1  # while a plain write runs it


def test_the_fields_equal_pythons_on_peoples_daily(
    es: Elasticsearch, pipeline: str, index: str, fp: Fingerprinter
) -> None:
    """Every ``neardup.*`` field the processor writes for 300 real articles is the value Python's
    ``record_fields`` gives, null fields included; ``indexed_at`` is set, distinct and in bulk order."""
    articles = load_peoples_daily()[:300]
    docs = {f"pd-{k:03d}": {"text": a.text, "title": a.title} for k, a in enumerate(articles)}
    items = _bulk(es, index, docs, pipeline=pipeline)
    failed = {i: item["error"]["reason"] for i, item in items.items() if "error" in item}
    assert not failed, list(failed.items())[:3]
    found = es.mget(index=index, ids=list(docs))["docs"]  # in bulk order
    assert all(d["found"] for d in found)
    times = []
    bad = []
    for hit in found:
        nd = dict(hit["_source"][schema.ROOT])
        times.append(nd.pop(schema.INDEXED_AT))
        want = _python_fields(fp, docs[hit["_id"]]["text"], docs[hit["_id"]]["title"])
        if nd != want:
            bad.append((hit["_id"], {k: (nd.get(k), v) for k, v in want.items() if nd.get(k) != v}))
    print(f"compared the neardup fields of {len(found)} People's Daily articles")
    assert not bad, bad[:3]
    assert all(_TIMESTAMP.match(t) for t in times) and times == sorted(set(times))

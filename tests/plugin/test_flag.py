"""Flagging inside Elasticsearch: the ``neardup`` processor with ``"flag": true`` in a real node (the session's
embedded Elasticsearch loads the plugin). A plain ``helpers.bulk`` through the flag pipeline stores the
assignments Python's offline clustering gives, with a refresh or without one (then only the node's window sees
the documents in flight), in bulks of any size; concurrent bulks stay close and ``reconcile`` makes them exact;
a failing candidate search fails its documents alone, quickly, naming them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from elasticsearch import BadRequestError, Elasticsearch, helpers

from neardup.config import Settings
from neardup.es.batch import reconcile
from neardup.es.client import setup_index
from neardup.es.pipeline import (
    FLAG_PIPELINE_ID,
    install_pipeline,
    nodes_without_processor,
    pipeline_body,
    pipeline_id,
)
from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.metrics import pairwise_scores
from neardup.evaluation.sets import Doc, news_set
from neardup.ingest.cluster import cluster_records
from neardup.ingest.fingerprint import Fingerprinter, Record
from neardup.ingest.verify import Match, VerifyConfig
from neardup.mappings import schema
from tests.indices import remove_indices

pytestmark = [pytest.mark.es, pytest.mark.timeout(600)]

#: a flag pipeline whose window outlasts a test, for ingests without any refresh
LONG_WINDOW = "neardup-test-flag-long"
#: a flag pipeline whose window forgets a document a millisecond after its assignment: only the search finds it
NO_WINDOW = "neardup-test-flag-none"
_ASSIGNMENT = (*schema.ASSIGNMENT_FIELDS, schema.IS_DUPLICATE)


@pytest.fixture(scope="module")
def flag_pipeline(es: Elasticsearch) -> Iterator[str]:
    """The flag pipeline as ``neardup setup --pipeline --flag`` installs it, and one with a 10-minute window."""
    if nodes_without_processor(es):
        if es.info()["version"].get("build_type") == "embedded":
            pytest.fail("the embedded node did not load the neardup plugin")
        pytest.skip("this cluster has no neardup plugin")
    install_pipeline(es, flag=True)
    long_window = pipeline_body(flag=True)
    long_window["processors"][0]["neardup"]["window_seconds"] = 600
    es.ingest.put_pipeline(id=LONG_WINDOW, body=long_window)
    no_window = pipeline_body(flag=True)
    no_window["processors"][0]["neardup"]["window_seconds"] = 0.001
    es.ingest.put_pipeline(id=NO_WINDOW, body=no_window)
    yield FLAG_PIPELINE_ID
    for pipeline in (LONG_WINDOW, NO_WINDOW):
        es.options(ignore_status=404).ingest.delete_pipeline(id=pipeline)


@pytest.fixture(scope="module")
def corpus(fp: Fingerprinter) -> tuple[list[Doc], list[Record]]:
    """A news set with planted reprints and three too-short texts (two equal), and their Python fingerprints."""
    docs = news_set(load_peoples_daily(), seed=5, groups=25, singles=50)
    shorts = [Doc(f"s{k}", "", text, f"short-{text}") for k, text in enumerate(["好的", "收到", "好的"])]
    docs = [*docs[:30], *shorts, *docs[30:]]
    return docs, fp.fingerprint_many([(d.text, d.title) for d in docs])


def _offline(docs: Sequence[Doc], records: Sequence[Record]) -> dict[str, dict[str, Any]]:
    """Per id, the assignment fields ``reconcile`` writes from the offline clustering of ``docs`` in this order."""
    a = cluster_records(records, lambda r: r.fingerprints, VerifyConfig())
    out = {}
    for k, d in enumerate(docs):
        dup = int(a.duplicate_of[k])
        match = Match(int(a.distance[k]), float(a.similarity[k])) if dup >= 0 else None
        out[d.id] = schema.assignment_fields(docs[int(a.cluster[k])].id, docs[dup].id if dup >= 0 else None, match)
    return out


def _actions(index: str, docs: Sequence[Doc]) -> list[dict[str, Any]]:
    return [{"_index": index, "_id": d.id, "text": d.text, "title": d.title} for d in docs]


def _stored(es: Elasticsearch, index: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per id, the stored ``neardup`` object."""
    es.indices.refresh(index=index)
    found = es.mget(index=index, ids=list(ids))["docs"]
    assert all(d["found"] for d in found), [d["_id"] for d in found if not d["found"]][:5]
    return {d["_id"]: d["_source"][schema.ROOT] for d in found}


def _assignments(stored: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {i: {f: nd.get(f) for f in _ASSIGNMENT} for i, nd in stored.items()}


def _differences(got: dict[str, dict[str, Any]], want: dict[str, dict[str, Any]]) -> list[tuple[str, Any, Any]]:
    return [(i, got.get(i), w) for i, w in want.items() if got.get(i) != w]


def _in_stored_order(
    docs: Sequence[Doc], records: Sequence[Record], stored: dict[str, dict[str, Any]]
) -> tuple[list[Doc], list[Record]]:
    """``docs`` in document order as stored (``indexed_at``, then id): the order reconcile clusters in."""
    order = sorted(range(len(docs)), key=lambda k: (stored[docs[k].id][schema.INDEXED_AT], docs[k].id))
    return [docs[k] for k in order], [records[k] for k in order]


@pytest.mark.parametrize(
    ("chunk", "refresh"), [(25, "on"), (500, "on"), (25, "off"), (500, "off"), (1, "every request, no window")]
)
def test_a_sequential_bulk_stores_exactly_the_offline_clusters(
    es: Elasticsearch,
    flag_pipeline: str,
    index_name: str,
    corpus: tuple[list[Doc], list[Record]],
    chunk: int,
    refresh: str,
) -> None:
    """One client, ``helpers.bulk`` in chunks: every stored assignment is the offline clustering's, field for field.
    Without refresh nothing is searchable while flagging: the window alone finds the earlier documents. With a
    refresh after every one-document request and a window of a millisecond, the search alone finds them (and the
    drift guard's canonicals come from ``mget``)."""
    docs, records = corpus
    setup_index(es, index_name)
    pipeline, params = flag_pipeline, {}
    if refresh == "off":
        es.indices.put_settings(index=index_name, settings={"refresh_interval": "-1"})
        pipeline = LONG_WINDOW
    elif refresh != "on":
        pipeline, params = NO_WINDOW, {"refresh": "true"}
    ok, errors = helpers.bulk(
        es, _actions(index_name, docs), pipeline=pipeline, chunk_size=chunk, raise_on_error=False, **params
    )
    assert not errors and ok == len(docs), errors[:3]
    stored = _stored(es, index_name, [d.id for d in docs])
    times = [stored[d.id][schema.INDEXED_AT] for d in docs]
    assert times == sorted(set(times)), "a sequential bulk gives document order = bulk order"
    want = _offline(docs, records)
    got = _assignments(stored)
    diff = _differences(got, want)
    clusters = len({w[schema.CLUSTER] for w in want.values()})
    print(
        f"chunk {chunk}, refresh {refresh}: {len(docs)} documents, {clusters} clusters, "
        f"{len(docs) - len(diff)} assignments = offline"
    )
    assert not diff, diff[:3]


def test_concurrent_bulks_stay_close_and_reconcile_makes_them_exact(
    es: Elasticsearch, flag_pipeline: str, index_name: str, corpus: tuple[list[Doc], list[Record]]
) -> None:
    """Two client threads at once: documents of both run through the same node's window, so pairwise precision and
    recall against the planted reprints stay within a small tolerance of a sequential run; reconcile then gives
    exactly the offline clusters of the stored document order."""
    docs, records = corpus
    truth = [d.group for d in docs]
    sequential = _offline(docs, records)
    seq_scores = pairwise_scores(truth, [sequential[d.id][schema.CLUSTER] for d in docs])
    setup_index(es, index_name)
    failed = [
        item
        for ok, item in helpers.parallel_bulk(
            es, _actions(index_name, docs), thread_count=2, chunk_size=25, pipeline=flag_pipeline, raise_on_error=False
        )
        if not ok
    ]
    assert not failed, failed[:3]
    stored = _stored(es, index_name, [d.id for d in docs])
    scores = pairwise_scores(truth, [stored[d.id][schema.CLUSTER] for d in docs])
    print(
        f"planted pairs: sequential P {seq_scores.precision:.3f} R {seq_scores.recall:.3f}; "
        f"2 threads P {scores.precision:.3f} R {scores.recall:.3f}"
    )
    assert scores.precision >= seq_scores.precision - 0.02
    assert scores.recall >= seq_scores.recall - 0.02
    ordered_docs, ordered_records = _in_stored_order(docs, records, stored)
    want = _offline(ordered_docs, ordered_records)
    before = _differences(_assignments(stored), want)
    summary = reconcile(es, index_name, records[0].version)
    after = _differences(_assignments(_stored(es, index_name, [d.id for d in docs])), want)
    print(f"2 threads: {len(before)} assignments differed from offline; reconcile changed {summary['changed']}")
    assert not after, after[:3]


def _bulk(es: Elasticsearch, index: str, docs: dict[str, str], pipeline: str) -> dict[str, dict[str, Any]]:
    operations: list[dict[str, Any]] = []
    for doc_id, text in docs.items():
        operations += [{"index": {"_index": index, "_id": doc_id}}, {"text": text}]
    resp = es.options(request_timeout=60).bulk(operations=operations, pipeline=pipeline)
    return {item["index"]["_id"]: item["index"] for item in resp["items"]}


def _reprint(text: str) -> str:
    return "（转载）" + text + "（完）"


def test_duplicates_in_one_bulk_and_in_back_to_back_bulks_are_caught(
    es: Elasticsearch, flag_pipeline: str, index_name: str
) -> None:
    articles = load_peoples_daily()
    original, other = articles[0].text, articles[1].text
    setup_index(es, index_name)
    es.indices.put_settings(index=index_name, settings={"refresh_interval": "-1"})
    first = _bulk(es, index_name, {"a": original, "b": other, "a2": _reprint(original)}, flag_pipeline)
    second = _bulk(es, index_name, {"a3": _reprint(_reprint(original)), "b2": _reprint(other)}, flag_pipeline)
    assert all(item["result"] == "created" for item in (first | second).values())
    stored = _stored(es, index_name, ["a", "b", "a2", "a3", "b2"])
    clusters = {i: nd[schema.CLUSTER] for i, nd in stored.items()}
    assert clusters == {"a": "a", "b": "b", "a2": "a", "a3": "a", "b2": "b"}
    assert stored["a"][schema.DUPLICATE_OF] is None and stored["a"][schema.IS_DUPLICATE] is False
    assert stored["a2"][schema.DUPLICATE_OF] == "a" and stored["a2"][schema.IS_DUPLICATE] is True
    assert stored["b2"][schema.DUPLICATE_OF] == "b"
    assert 0 < stored["a2"][schema.SIMILARITY] <= 1 and stored["a2"][schema.DISTANCE] >= 0


def test_a_document_written_again_stays_the_canonical_of_its_cluster(
    es: Elasticsearch, flag_pipeline: str, index_name: str
) -> None:
    original = load_peoples_daily()[0].text
    setup_index(es, index_name)
    _bulk(es, index_name, {"a": original}, flag_pipeline)
    _bulk(es, index_name, {"b": _reprint(original)}, flag_pipeline)
    es.indices.refresh(index=index_name)
    _bulk(es, index_name, {"a": original}, flag_pipeline)  # a client's retry
    stored = _stored(es, index_name, ["a", "b"])
    assert (stored["a"][schema.CLUSTER], stored["a"][schema.DUPLICATE_OF]) == ("a", None)
    assert stored["a"][schema.IS_DUPLICATE] is False
    assert (stored["b"][schema.CLUSTER], stored["b"][schema.DUPLICATE_OF]) == ("a", "a")


def test_a_document_sent_again_keeps_its_time_while_it_is_still_a_near_duplicate(
    es: Elasticsearch, flag_pipeline: str, index_name: str, fp: Fingerprinter
) -> None:
    """A client sending documents through the pipeline again (a retry, its ingest run again) without their neardup
    fields: each keeps the time of its earlier copy while it is still a near-duplicate of it, as the service does,
    so ``reconcile``, which orders by that time, leaves the canonical the canonical. The earlier copy is found by the
    candidate search ("a", whose window entry has gone) or, sent moments ago, in the node's window ("d", never made
    searchable); a text rewritten into another ("c") is a new document with a new time."""
    articles = load_peoples_daily()
    original = articles[0].text
    setup_index(es, index_name)
    es.indices.put_settings(index=index_name, settings={"refresh_interval": "-1"})

    def time_of(doc_id: str) -> str:
        return str(es.get(index=index_name, id=doc_id)["_source"][schema.ROOT][schema.INDEXED_AT])  # real time

    _bulk(es, index_name, {"a": original, "c": articles[1].text}, NO_WINDOW)
    _bulk(es, index_name, {"b": _reprint(original)}, NO_WINDOW)
    es.indices.refresh(index=index_name)
    first = {i: time_of(i) for i in ("a", "b", "c")}
    _bulk(es, index_name, {"a": original.replace("。", "！", 2), "c": articles[2].text}, NO_WINDOW)
    assert time_of("a") == first["a"] and time_of("c") > first["c"]
    _bulk(es, index_name, {"d": articles[3].text}, LONG_WINDOW)
    d_time = time_of("d")
    _bulk(es, index_name, {"d": articles[3].text, "a": original}, LONG_WINDOW)
    _bulk(es, index_name, {"a": original}, LONG_WINDOW)  # its copy of a moment ago is in the window
    assert (time_of("d"), time_of("a"), time_of("b")) == (d_time, first["a"], first["b"])
    reconcile(es, index_name, fp.version)
    stored = _stored(es, index_name, ["a", "b", "c", "d"])
    assert (stored["a"][schema.CLUSTER], stored["a"][schema.DUPLICATE_OF]) == ("a", None)
    assert (stored["b"][schema.CLUSTER], stored["b"][schema.DUPLICATE_OF]) == ("a", "a")
    # a stored copy whose fields do not read (written by another client) is no copy to keep a time from, not a failure
    broken = stored["c"] | {schema.HEX: "not hex"}
    es.index(index=index_name, id="c", document={"text": articles[2].text, schema.ROOT: broken}, pipeline="_none")
    es.indices.refresh(index=index_name)
    assert _bulk(es, index_name, {"c": articles[2].text}, NO_WINDOW)["c"]["status"] == 200
    assert time_of("c") > stored["c"][schema.INDEXED_AT]


def test_a_document_sent_again_with_its_time_takes_no_later_document(
    es: Elasticsearch, flag_pipeline: str, index_name: str
) -> None:
    """A document that comes back with its neardup fields (a reindex through the pipeline) keeps its ``indexed_at``.
    Its search then finds documents written after it, and it takes none of them, as reconcile offers it none: "b"
    (the original's first two thirds) stays the duplicate of "a", not of the nearer "c" ("b" and an ending)."""
    original = load_peoples_daily()[0].text
    part = original[: len(original) * 2 // 3]
    setup_index(es, index_name)
    for doc_id, text in (("a", original), ("b", part), ("c", part + "（完）")):
        _bulk(es, index_name, {doc_id: text}, flag_pipeline)
        es.indices.refresh(index=index_name)
    fields = (schema.CLUSTER, schema.DUPLICATE_OF, schema.INDEXED_AT)
    before = {i: tuple(nd.get(f) for f in fields) for i, nd in _stored(es, index_name, ["a", "b", "c"]).items()}
    assert {i: v[:2] for i, v in before.items()} == {"a": ("a", None), "b": ("a", "a"), "c": ("a", "b")}
    es.index(index=index_name, id="b", document=es.get(index=index_name, id="b")["_source"], pipeline=flag_pipeline)
    after = {i: tuple(nd.get(f) for f in fields) for i, nd in _stored(es, index_name, ["a", "b", "c"]).items()}
    assert after == before


def test_a_failing_search_fails_its_documents_alone_and_quickly(
    es: Elasticsearch, flag_pipeline: str, index_name: str
) -> None:
    """An index with a read block (``index.blocks.read``, as during a migration) takes writes but refuses searches:
    every document fails with a message naming it and the cause, the bulk answers at once, the node stays up and
    the next writes to another index flag as before."""
    articles = load_peoples_daily()
    setup_index(es, index_name)
    es.indices.put_settings(index=index_name, settings={"index.blocks.read": True})
    try:
        items = _bulk(es, index_name, {"x": articles[0].text, "y": _reprint(articles[0].text)}, flag_pipeline)
    finally:
        es.indices.put_settings(index=index_name, settings={"index.blocks.read": False})
    for doc_id, item in items.items():
        reason = item["error"]["reason"]
        assert reason.startswith(
            f"neardup flagging: the candidate search for document [{doc_id}] of index [{index_name}] failed:"
        ), reason
        assert "blocked" in reason, reason
    assert es.count(index=index_name)["count"] == 0
    items = _bulk(es, index_name, {"x": articles[0].text, "y": _reprint(articles[0].text)}, flag_pipeline)
    assert {i: item["result"] for i, item in items.items()} == {"x": "created", "y": "created"}
    stored = _stored(es, index_name, ["x", "y"])
    assert stored["y"][schema.CLUSTER] == "x"


def test_a_document_without_an_id_is_refused_clearly(es: Elasticsearch, flag_pipeline: str, index_name: str) -> None:
    setup_index(es, index_name)
    resp = es.bulk(
        operations=[{"index": {"_index": index_name}}, {"text": "国务院今天召开常务会议。"}], pipeline=flag_pipeline
    )
    reason = resp["items"][0]["index"]["error"]["reason"]
    assert reason.startswith("flagging needs the document's _id"), reason


def test_a_simulated_document_without_its_index_is_refused_clearly(es: Elasticsearch, flag_pipeline: str) -> None:
    """``_simulate`` gives a document without ``_index`` the index "_index", which no search can read."""
    resp = es.ingest.simulate(id=flag_pipeline, docs=[{"_id": "a", "_source": {"text": "国务院今天召开常务会议。"}}])
    reason = resp["docs"][0]["error"]["reason"]
    assert reason.startswith("flagging searches the document's index") and "_simulate" in reason, reason


@pytest.fixture
def rollover(es: Elasticsearch, index_name: str) -> Iterator[tuple[str, str, str]]:
    """Two neardup indices, older and newer, behind an alias (as rollover leaves them): writes go to the newer."""
    older, newer, alias = f"{index_name}-1", f"{index_name}-2", index_name
    for index in (older, newer):
        setup_index(es, index)
    es.indices.update_aliases(
        actions=[
            {"add": {"index": older, "alias": alias}},
            {"add": {"index": newer, "alias": alias, "is_write_index": True}},
        ]
    )
    yield older, newer, alias
    remove_indices(es, older, newer)


def test_writing_through_an_alias_of_indices_holding_one_id_twice(
    es: Elasticsearch, flag_pipeline: str, rollover: tuple[str, str, str]
) -> None:
    """A search through an alias of several indices (rollover) may find one id in two of them: it is one candidate."""
    text = load_peoples_daily()[0].text
    older, newer, alias = rollover
    for index in (older, newer):
        es.index(index=index, id="x", document={"text": text}, pipeline=flag_pipeline, refresh=True)
    written = _bulk(es, alias, {"y": _reprint(text)}, flag_pipeline)["y"]
    assert written.get("result") == "created", written
    stored = _stored(es, newer, ["y"])["y"]
    assert stored[schema.CLUSTER] == "x" and stored[schema.DUPLICATE_OF] == "x"


def test_the_drift_guard_reads_a_canonical_through_an_alias_of_several_indices(
    es: Elasticsearch, flag_pipeline: str, rollover: tuple[str, str, str], fp: Fingerprinter
) -> None:
    """The canonical a, no candidate of c and out of the window, is read through the alias c is written to; a real-time
    ``mget`` cannot read through an alias of several indices."""
    texts, want = _drift_chain(fp)
    older, newer, alias = rollover
    for doc_id in ("a", "b"):
        es.index(index=older, id=doc_id, document={"text": texts[doc_id]}, pipeline=NO_WINDOW, refresh=True)
    es.index(index=alias, id="c", document={"text": texts["c"]}, pipeline=NO_WINDOW, refresh=True)
    got = _assignments(_stored(es, older, ["a", "b"]) | _stored(es, newer, ["c"]))
    assert got == want


def test_an_index_neardup_did_not_set_up_says_how_to(es: Elasticsearch, flag_pipeline: str, index_name: str) -> None:
    """Its first write maps the neardup fields dynamically (the block fields as text); later writes say so."""
    articles = load_peoples_daily()
    first = _bulk(es, index_name, {"a": articles[0].text}, flag_pipeline)["a"]
    assert first.get("result") == "created", first
    es.indices.refresh(index=index_name)
    later = _bulk(es, index_name, {"b": articles[1].text}, flag_pipeline)["b"]
    assert "neardup setup" in later["error"]["reason"], later


@pytest.mark.parametrize(
    ("definition", "prop", "reason"),
    [
        ({"flag": True, "max_candidates": 0}, "max_candidates", "[max_candidates] must be between 1 and 10000"),
        ({"flag": True, "max_candidates": "many"}, "max_candidates", "[max_candidates]"),
        ({"flag": True, "min_shared": 65}, "min_shared", "[min_shared] must be between 1 and 64"),
        ({"flag": True, "window_seconds": 0}, "window_seconds", "[window_seconds] must be more than 0"),
        ({"flag": True, "window_seconds": "soon"}, "window_seconds", "[window_seconds] must be a number of seconds"),
        ({"min_shared": 2}, "min_shared", "[min_shared] applies only to flagging"),
    ],
)
def test_a_bad_flag_setting_is_refused_naming_it(
    es: Elasticsearch, flag_pipeline: str, definition: dict[str, Any], prop: str, reason: str
) -> None:
    with pytest.raises(BadRequestError) as caught:
        es.ingest.put_pipeline(id="neardup-test-bad", processors=[{"neardup": {"field": "text", **definition}}])
    error = caught.value.body["error"]
    assert caught.value.meta.status == 400
    assert error["reason"].startswith(reason), error
    assert error["property_name"] == prop and error["processor_type"] == "neardup"


def test_many_concurrent_copies_do_not_hang(es: Elasticsearch, flag_pipeline: str, index_name: str) -> None:
    """A bulk of 300 copies of one text: each waits for the assignments before it, none blocks a thread, all
    join the first one's cluster."""
    text = load_peoples_daily()[2].text
    setup_index(es, index_name)
    done: list[dict[str, dict[str, Any]]] = []
    worker = threading.Thread(
        target=lambda: done.append(_bulk(es, index_name, {f"c{k:03d}": text for k in range(300)}, flag_pipeline))
    )
    worker.start()
    worker.join(timeout=120)
    assert done, "the bulk did not answer within 2 minutes"
    stored = _stored(es, index_name, [f"c{k:03d}" for k in range(300)])
    assert {nd[schema.CLUSTER] for nd in stored.values()} == {"c000"}


def _drift_chain(fp: Fingerprinter) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    """Texts a, b, c where c matches b alone and the drift guard puts it apart from b's canonical a; the offline
    assignments."""
    x, y, z, w = (a.text for a in load_peoples_daily()[14:18])
    x, w = x[: len(y) // 3], w[: len(z) // 3]  # the shared parts three times the size of the others
    texts = {"a": x + y, "b": y + z, "c": z + w}
    records = [fp.fingerprint(t) for t in texts.values()]
    want = _offline([Doc(i, "", t, i) for i, t in texts.items()], records)
    unguarded = cluster_records(records, lambda r: r.fingerprints, VerifyConfig(), guard=False).cluster.tolist()
    assert [want[i][schema.CLUSTER] for i in texts] == ["a", "a", "c"] and unguarded == [0, 0, 0], (
        "the chain is not what this test needs"
    )
    return texts, want


@pytest.mark.parametrize("window", [True, False])
def test_the_drift_guard_reads_a_canonical_that_is_no_candidate(
    es: Elasticsearch, flag_pipeline: str, index_name: str, fp: Fingerprinter, window: bool
) -> None:
    """A chain a → b → c: b shares half of a, c half of b and nothing of a. c matches b (a member of a's cluster),
    but the drift guard compares it with the canonical a, which is no candidate of c: it comes from the window, or
    (a window of a millisecond) from an ``mget``. c starts its own cluster, as offline."""
    texts, want = _drift_chain(fp)
    setup_index(es, index_name)
    for doc_id, text in texts.items():
        if window:
            _bulk(es, index_name, {doc_id: text}, flag_pipeline)
        else:
            es.index(index=index_name, id=doc_id, document={"text": text}, pipeline=NO_WINDOW, refresh=True)
    got = _assignments(_stored(es, index_name, list(texts)))
    assert got == want


def test_setup_flag_makes_the_flag_pipeline_the_default(
    es: Elasticsearch, es_url: str, flag_pipeline: str, index_name: str
) -> None:
    """``neardup setup INDEX --pipeline --flag``: a plain bulk naming no pipeline is fingerprinted and flagged."""
    result = subprocess.run(
        [sys.executable, "-m", "neardup", "setup", index_name, "--pipeline", "--flag", "--es-url", es_url],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert f"installed ingest pipeline {FLAG_PIPELINE_ID}; it is the default pipeline of {index_name}" in result.stdout
    text = load_peoples_daily()[3].text
    helpers.bulk(es, [{"_index": index_name, "_id": i, "text": t} for i, t in (("p", text), ("q", _reprint(text)))])
    stored = _stored(es, index_name, ["p", "q"])
    assert (stored["p"][schema.CLUSTER], stored["q"][schema.CLUSTER], stored["q"][schema.DUPLICATE_OF]) == (
        "p",
        "p",
        "p",
    )


def test_the_first_bulk_into_a_new_index_flags_from_the_window(
    es: Elasticsearch, flag_pipeline: str, index_name: str
) -> None:
    """The index does not exist while the first bulk runs through the pipeline (Elasticsearch creates it after
    ingest): the search's ``index_not_found`` means no stored candidates, and the window still pairs the reprint."""
    text = load_peoples_daily()[4].text
    items = _bulk(es, index_name, {"n1": text, "n2": _reprint(text)}, flag_pipeline)
    assert {i: item.get("result") for i, item in items.items()} == {"n1": "created", "n2": "created"}, items
    stored = _stored(es, index_name, ["n1", "n2"])
    assert [stored["n1"][schema.CLUSTER], stored["n2"][schema.CLUSTER]] == ["n1", "n1"]


def test_setup_flag_with_other_settings_installs_a_pipeline_of_their_own(
    es: Elasticsearch, es_url: str, flag_pipeline: str, index_name: str
) -> None:
    """``NEARDUP_MIN_SHARED=2 neardup setup INDEX --pipeline --flag``: the index runs a pipeline with those settings,
    under an id of its own, and the default ``neardup-flag`` other indices run is left as it was; setting the index
    up again is not refused as "another default pipeline"."""
    own = pipeline_id(True, Settings(min_shared=2))
    es.options(ignore_status=404).ingest.delete_pipeline(id=own)
    before = es.ingest.get_pipeline(id=FLAG_PIPELINE_ID)[FLAG_PIPELINE_ID]
    command = [sys.executable, "-m", "neardup", "setup", index_name, "--pipeline", "--flag", "--es-url", es_url]
    env = os.environ | {"NEARDUP_MIN_SHARED": "2"}
    for _ in range(2):
        result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False, env=env)
        assert result.returncode == 0, result.stderr
        assert f"installed ingest pipeline {own}; it is the default pipeline of {index_name}" in result.stdout
    settings = es.indices.get_settings(index=index_name, name="index.default_pipeline", flat_settings=True)
    assert settings[index_name]["settings"]["index.default_pipeline"] == own != FLAG_PIPELINE_ID
    assert es.ingest.get_pipeline(id=own)[own]["processors"][0]["neardup"]["min_shared"] == 2
    assert es.ingest.get_pipeline(id=FLAG_PIPELINE_ID)[FLAG_PIPELINE_ID] == before

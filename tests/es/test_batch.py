"""Batch dedupe against a real Elasticsearch: an interrupted run, run again, gives the clusters of an
uninterrupted one."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest
from elasticsearch import BadRequestError, Elasticsearch, helpers

from neardup.es import batch
from neardup.es.batch import BatchConfig, dedupe, scan
from neardup.es.client import setup_index
from neardup.es.pipeline import nodes_without_processor
from neardup.evaluation.corpus import load_peoples_daily
from neardup.ingest.fingerprint import Fingerprinter
from neardup.mappings import schema

pytestmark = pytest.mark.es


class Interrupted(Exception):
    """Stands for the process being killed in the middle of the fingerprint stage."""


def _documents() -> list[dict[str, str]]:
    """Originals ``b<k>`` written first, then their reprints ``a<k>``: scan order is write order, document
    order (time, then id) puts every reprint first. A dedupe that stops after the originals and gives the
    rest a later time on resume would make the originals canonical instead."""
    arts = load_peoples_daily()[:30]
    originals = [{"_id": f"b{k:02d}", "text": a.text} for k, a in enumerate(arts)]
    reprints = [
        {"_id": f"a{k:02d}", "text": "来源：人民日报\n" + "\n".join(a.paragraphs[:-1] or a.paragraphs)}
        for k, a in enumerate(arts[:10])
    ]
    return originals + reprints


def _assignments(es: Elasticsearch, index: str) -> dict[str, tuple[object, ...]]:
    es.indices.refresh(index=index)
    hits = es.search(index=index, size=100, query={"match_all": {}})["hits"]["hits"]
    return {h["_id"]: schema.assignment_of(h["_source"]) for h in hits}


@pytest.fixture
def twin(es: Elasticsearch, index_name: str) -> Iterator[str]:
    name = index_name + "-twin"
    yield name
    es.indices.delete(index=name, ignore_unavailable=True)


@pytest.fixture(params=[False, True], ids=["python", "in-es"])
def in_es(request: pytest.FixtureRequest, es: Elasticsearch) -> bool:
    """Whether dedupe fingerprints in Elasticsearch (the neardup processor) or here."""
    if request.param and nodes_without_processor(es):
        pytest.skip("this cluster has no neardup plugin")
    return bool(request.param)


def _load(es: Elasticsearch, docs: list[dict[str, object]], *indices: str) -> None:
    for index in indices:
        es.indices.create(index=index, settings={"number_of_shards": 1})
        helpers.bulk(es, ({"_index": index, **d} for d in docs), refresh=True)
        setup_index(es, index)  # what `neardup dedupe` does first


def test_a_dedupe_killed_halfway_and_run_again_gives_the_same_clusters(
    es: Elasticsearch, index_name: str, twin: str, fp: Fingerprinter, in_es: bool
) -> None:
    _load(es, [*_documents()], index_name, twin)
    config = BatchConfig(slices=1, page_size=10, fingerprint_in_es=in_es)

    def stop_after_the_originals(stage: str, done: int, total: int | None) -> None:
        if stage == "fingerprint" and done >= 30:
            raise Interrupted

    with pytest.raises(Interrupted):
        dedupe(es, index_name, fp, config, stop_after_the_originals)
    resumed = dedupe(es, index_name, fp, config)
    assert resumed["fingerprinted"] == 10  # only what the first run left
    whole = dedupe(es, twin, fp, config)
    assert whole["fingerprinted"] == 40

    got, want = _assignments(es, index_name), _assignments(es, twin)
    assert got == want
    assert want["a03"][0] == "a03" and want["b03"][0] == "a03"  # the reprint comes first in document order
    assert dedupe(es, index_name, fp, config)["changed"] == 0


def _neardup_fields(es: Elasticsearch, index: str) -> dict[str, dict[str, object]]:
    """Every document's ``neardup.*`` fields but its time (each dedupe gives the documents its own start); none
    where it has none."""
    es.indices.refresh(index=index)
    hits = es.search(index=index, size=100, query={"match_all": {}})["hits"]["hits"]
    return {
        h["_id"]: {k: v for k, v in h["_source"].get(schema.ROOT, {}).items() if k != schema.INDEXED_AT} for h in hits
    }


def test_a_dedupe_fingerprinting_in_elasticsearch_writes_what_python_writes(
    es: Elasticsearch, index_name: str, twin: str, fp: Fingerprinter, monkeypatch: pytest.MonkeyPatch
) -> None:
    if nodes_without_processor(es):
        pytest.skip("this cluster has no neardup plugin")
    odd: list[dict[str, object]] = [
        {
            "_id": "title",
            "title": "國務院常務會議",
            "text": "国务院今天召开常务会议，部署进一步推动经济稳定增长的措施。",
        },
        {"_id": "short", "text": "短"},
        {"_id": "empty", "text": ""},
        {"_id": "no-text", "title": "只有标题"},
        {"_id": "number", "text": 12345, "title": ["not", "a string"]},
    ]
    _load(es, [*_documents(), *odd], index_name, twin)
    monkeypatch.setattr(batch, "_SIMULATE_CHARS", 3000)  # most pages take several requests
    here = dedupe(es, index_name, fp, BatchConfig(slices=2, page_size=7))
    there = dedupe(es, twin, fp, BatchConfig(slices=2, page_size=7, fingerprint_in_es=True))
    assert (here["fingerprinted_by"], there["fingerprinted_by"]) == ("python", "elasticsearch")
    assert here["fingerprinted"] == there["fingerprinted"] == 43
    assert here["no_text"] == there["no_text"] == 2
    python_fields, es_fields = _neardup_fields(es, index_name), _neardup_fields(es, twin)
    assert len(es_fields) == 45
    assert es_fields == python_fields
    assert (es_fields["short"]["status"], es_fields["empty"]["status"]) == ("too_short", "empty")
    assert es_fields["no-text"] == es_fields["number"] == {}


def test_a_document_rewritten_after_dedupe_read_it_keeps_its_new_text_without_the_old_fingerprints(
    es: Elasticsearch, index_name: str, fp: Fingerprinter, in_es: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = _documents()[:12]
    _load(es, [*docs], index_name)
    rewritten = "国务院今天召开常务会议，部署进一步推动经济稳定增长的措施，会议由总理主持。"
    page_records = batch._page_records

    def another_writer_between_read_and_write(*args: object, **kwargs: object) -> object:
        """Another client rewrites b03 (a plain write, no neardup fields) after its page was read."""
        if es.get(index=index_name, id="b03")["_source"]["text"] != rewritten:
            es.index(index=index_name, id="b03", document={"text": rewritten})
        return page_records(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(batch, "_page_records", another_writer_between_read_and_write)
    first = dedupe(es, index_name, fp, BatchConfig(slices=1, page_size=50, fingerprint_in_es=in_es))
    assert (first["fingerprint_skipped"], first["fingerprinted"], first["fingerprint_failures"]) == (1, 11, 0)
    now = es.get(index=index_name, id="b03")["_source"]
    assert now == {"text": rewritten}  # not the fingerprints of the text it held when read

    monkeypatch.setattr(batch, "_page_records", page_records)
    second = dedupe(es, index_name, fp, BatchConfig(slices=1, page_size=50, fingerprint_in_es=in_es))
    assert (second["fingerprint_skipped"], second["fingerprinted"]) == (0, 1)
    stored = es.get(index=index_name, id="b03")["_source"][schema.ROOT]
    want = schema.record_fields(fp.fingerprint(rewritten))
    del want[schema.VERSION]  # dedupe's version also names the fields it read
    assert {k: stored[k] for k in want} == want


@pytest.mark.parametrize("what", ["its time", "another field"])
def test_a_reconcile_writes_over_another_writer_only_what_it_did_not_read(
    es: Elasticsearch, index_name: str, fp: Fingerprinter, monkeypatch: pytest.MonkeyPatch, what: str
) -> None:
    _load(es, [*_documents()[:12]], index_name)
    config = BatchConfig(slices=1, page_size=50)
    dedupe(es, index_name, fp, config)
    right = es.get(index=index_name, id="b03")["_source"][schema.ROOT][schema.CLUSTER]
    es.update(index=index_name, id="b03", doc={schema.ROOT: {schema.CLUSTER: "wrong"}}, refresh=True)
    version = config.version(fp)
    clustering = batch.cluster_records
    edit = {schema.ROOT: {schema.INDEXED_AT: "2020-01-01T00:00:00.000000000Z"}} if what == "its time" else {"edited": 1}

    def another_writer_between_read_and_write(*args: object, **kwargs: object) -> object:
        es.update(index=index_name, id="b03", doc=edit)
        return clustering(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(batch, "cluster_records", another_writer_between_read_and_write)
    first = batch.reconcile(es, index_name, version, config)
    now = es.get(index=index_name, id="b03")["_source"]
    if what == "its time":  # what the clustering read changed: the document is left to the next run
        assert (first["assignment_skipped"], first["changed"], first["failures"]) == (1, 0, 0)
        assert now[schema.ROOT][schema.CLUSTER] == "wrong"
    else:  # a field the clustering did not read: the assignment is written over it
        assert (first["assignment_skipped"], first["changed"], first["failures"]) == (0, 1, 0)
        assert (now["edited"], now[schema.ROOT][schema.CLUSTER]) == (1, right)

    monkeypatch.setattr(batch, "cluster_records", clustering)
    second = batch.reconcile(es, index_name, version, config)
    assert second["assignment_skipped"] == 0
    assert es.get(index=index_name, id="b03")["_source"][schema.ROOT][schema.CLUSTER] != "wrong"


def test_a_dedupe_fingerprints_a_document_whose_other_fields_changed_after_it_was_read(
    es: Elasticsearch, index_name: str, fp: Fingerprinter, monkeypatch: pytest.MonkeyPatch
) -> None:
    _load(es, [*_documents()[:12]], index_name)
    page_records = batch._page_records

    def another_writer_between_read_and_write(*args: object, **kwargs: object) -> object:
        es.update(index=index_name, id="b03", doc={"edited": 1})
        return page_records(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(batch, "_page_records", another_writer_between_read_and_write)
    result = dedupe(es, index_name, fp, BatchConfig(slices=1, page_size=50))
    assert (result["fingerprint_skipped"], result["fingerprinted"]) == (0, 12)
    now = es.get(index=index_name, id="b03")["_source"]
    assert now["edited"] == 1 and now[schema.ROOT][schema.VERSION] == fp.version


def test_a_document_deleted_after_dedupe_read_it_is_no_failure(
    es: Elasticsearch, index_name: str, fp: Fingerprinter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deletions are routine on a live index: the dedupe ends clean, and does not leave its start time behind for
    the documents of a later run."""
    _load(es, [*_documents()[:12]], index_name)
    page_records = batch._page_records

    def another_client_deletes_b03(*args: object, **kwargs: object) -> object:
        es.options(ignore_status=404).delete(index=index_name, id="b03")
        return page_records(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(batch, "_page_records", another_client_deletes_b03)
    result = dedupe(es, index_name, fp, BatchConfig(slices=1, page_size=50))
    counts = ("fingerprinted", "fingerprint_failures", "fingerprint_skipped", "fingerprint_gone")
    assert tuple(result[c] for c in counts) == (11, 0, 0, 1), result
    assert batch.read_index_meta(es, index_name, "dedupe_started_at") is None


def test_a_dedupe_reads_a_text_field_inside_an_object(es: Elasticsearch, index_name: str, fp: Fingerprinter) -> None:
    text = _documents()[0]["text"]
    _load(es, [{"_id": "nested", "body": {"text": text}}, {"_id": "dotted", "body.text": text}], index_name)
    dedupe(es, index_name, fp, BatchConfig(slices=1, page_size=50, text_field="body.text"))
    for doc_id in ("nested", "dotted"):
        stored = es.get(index=index_name, id=doc_id)["_source"][schema.ROOT]
        assert (
            stored[schema.STATUS] == "ok"
            and stored[schema.HEX] == schema.record_fields(fp.fingerprint(text))[schema.HEX]
        ), doc_id


def test_a_dedupe_counts_as_fingerprinted_what_its_own_bulk_sent_twice_wrote(
    es: Elasticsearch, index_name: str, fp: Fingerprinter, monkeypatch: pytest.MonkeyPatch
) -> None:
    _load(es, [*_documents()[:12]], index_name)
    bulk_update = batch._bulk_update
    first_sends: list[batch._Written] = []

    def sent_twice(*args: object, **kwargs: object) -> batch._Written:
        """The page's bulk is sent again, as the client does after a timeout, once its first send was applied:
        each update then meets the document its own first send wrote (and gave a time)."""
        if not first_sends:
            first_sends.append(bulk_update(*args, **kwargs))  # type: ignore[arg-type]
        return bulk_update(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(batch, "_bulk_update", sent_twice)
    result = dedupe(es, index_name, fp, BatchConfig(slices=1, page_size=50))
    assert first_sends[0].written == 12
    assert (result["fingerprint_skipped"], result["fingerprinted"], result["fingerprint_failures"]) == (0, 12, 0)
    stored = es.get(index=index_name, id="b03")["_source"][schema.ROOT]
    assert stored[schema.VERSION] == fp.version and stored[schema.INDEXED_AT]


def test_a_dedupe_that_cannot_write_reports_its_failures_as_plain_data(
    es: Elasticsearch, index_name: str, fp: Fingerprinter
) -> None:
    _load(es, [*_documents()[:12]], index_name)
    es.indices.put_settings(index=index_name, settings={"index.blocks.write": True})
    try:
        result = dedupe(es, index_name, fp, BatchConfig(slices=1, page_size=5))
    finally:
        es.indices.put_settings(index=index_name, settings={"index.blocks.write": False})
    assert (result["fingerprinted"], result["fingerprint_failures"], result["fingerprint_skipped"]) == (0, 12, 0)
    first = result["first_fingerprint_failure"]
    assert first["update"]["status"] == 403 and first["update"]["_id"].startswith("b")
    assert json.loads(json.dumps(result)) == result  # a job's result is stored as JSON


def test_a_dedupe_that_could_not_write_leaves_its_start_time_to_no_later_document(
    es: Elasticsearch, index_name: str, fp: Fingerprinter
) -> None:
    """A run that read everything but wrote nothing (a write block) ends; the documents written after it, and those
    it could not write, get the next run's time, not the failed run's."""
    _load(es, [*_documents()[:12]], index_name)
    config = BatchConfig(slices=1, page_size=5)
    es.indices.put_settings(index=index_name, settings={"index.blocks.write": True})
    try:
        failed = dedupe(es, index_name, fp, config)
    finally:
        es.indices.put_settings(index=index_name, settings={"index.blocks.write": False})
    assert failed["fingerprint_failures"] == 12
    assert batch.read_index_meta(es, index_name, "dedupe_started_at") is None
    time.sleep(0.01)
    later = schema.timestamp(time.time_ns())
    es.index(index=index_name, id="late", document={"text": _documents()[20]["text"]}, refresh=True)
    assert dedupe(es, index_name, fp, config)["fingerprinted"] == 13
    es.indices.refresh(index=index_name)
    hits = es.search(index=index_name, size=100, query={"match_all": {}})["hits"]["hits"]
    times = {h["_source"][schema.ROOT][schema.INDEXED_AT] for h in hits}
    assert len(times) == 1 and times.pop() >= later


class _Watched:
    """A real client whose point-in-time id and searches are recorded (everything else passes through)."""

    def __init__(self, client: Elasticsearch) -> None:
        self.client = client
        self.searches = 0
        self.pit: str | None = None

    def open_point_in_time(self, **kwargs: object) -> object:
        resp = self.client.open_point_in_time(**kwargs)  # type: ignore[arg-type]
        self.pit = resp["id"]
        return resp

    def search(self, **kwargs: object) -> object:
        resp = self.client.search(**kwargs)  # type: ignore[arg-type]
        self.searches += 1  # counted once answered
        return resp

    def __getattr__(self, name: str) -> object:
        return getattr(self.client, name)


@pytest.fixture
def forty(es: Elasticsearch, index_name: str) -> str:
    es.indices.create(index=index_name, settings={"number_of_shards": 1})
    helpers.bulk(es, ({"_index": index_name, "_id": f"d{k:02d}", "n": k} for k in range(40)), refresh=True)
    return index_name


def test_scan_reads_pages_as_the_consumer_takes_them(es: Elasticsearch, forty: str) -> None:
    watched = _Watched(es)
    pages = scan(watched, forty, {"match_all": {}}, True, slices=2, page_size=2)  # type: ignore[arg-type]
    seen = [h["_id"] for h in next(pages)]
    time.sleep(0.5)
    # a few pages ahead of the consumer, not the whole index: the point in time is searched (and kept
    # alive) for as long as the consumer works, and memory holds a few pages at a time
    assert watched.searches <= 2 * 2 + 2 + 1
    for page in pages:
        seen += [h["_id"] for h in page]
    assert sorted(seen) == [f"d{k:02d}" for k in range(40)]
    assert watched.searches == 20 + 2  # every page, and one empty page per slice


def test_scan_ends_cleanly_when_its_point_in_time_is_gone(es: Elasticsearch, forty: str) -> None:
    watched = _Watched(es)
    pages = scan(watched, forty, {"match_all": {}}, True, slices=1, page_size=50)  # type: ignore[arg-type]
    assert len(next(pages)) == 40
    deadline = time.monotonic() + 10
    while watched.searches < 2 and time.monotonic() < deadline:  # the reader found the end
        time.sleep(0.05)
    assert watched.pit is not None
    es.close_point_in_time(id=watched.pit)  # as when its keep_alive ran out while the consumer worked
    assert list(pages) == []  # closing it again is no error


def test_a_failed_page_fails_the_scan(es: Elasticsearch, forty: str) -> None:
    bad_query = {"range": {"n": {"gte": "not a number"}}}
    with pytest.raises(BadRequestError):
        list(scan(es, forty, bad_query, True, slices=2, page_size=5))


#: documents without a text in field ``text``, each titled by its id: three without a value there (the index tells
#: which), two with a value that is no text
_NO_TEXT: list[dict[str, object]] = [
    {"_id": "missing", "title": "missing"},
    {"_id": "null", "title": "null", "text": None},
    {"_id": "no-values", "title": "no-values", "text": []},
    {"_id": "number", "title": "number", "text": 7},
    {"_id": "list", "title": "list", "text": ["国务院今天召开常务会议", "部署进一步推动经济稳定增长的措施"]},
]


def _with_reprints() -> list[dict[str, str]]:
    """Originals ``b00``…``b05`` and the reprints ``a00``…``a02`` of the first three."""
    docs = _documents()
    return docs[:6] + docs[30:33]


def test_documents_without_a_text_are_neither_fingerprinted_nor_clustered(
    es: Elasticsearch, index_name: str, fp: Fingerprinter, in_es: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read as an empty text, they were all exact duplicates of one of them."""
    _load(es, [*_with_reprints(), *_NO_TEXT], index_name)
    page_records = batch._page_records
    read: list[object] = []

    def watched(*args: object, **kwargs: object) -> object:
        """Notes the title of each source the fingerprint stage reads."""
        sources = args[4]
        assert isinstance(sources, list)
        read.extend(src.get("title") for src in sources)
        return page_records(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(batch, "_page_records", watched)
    config = BatchConfig(slices=1, page_size=50, fingerprint_in_es=in_es)
    first = dedupe(es, index_name, fp, config)
    counts = ("fingerprinted", "no_text", "documents", "fingerprint_failures", "failures")
    assert tuple(first[c] for c in counts) == (9, 5, 9, 0, 0), first
    stored = _neardup_fields(es, index_name)
    assert {d["_id"]: stored[str(d["_id"])] for d in _NO_TEXT} == {d["_id"]: {} for d in _NO_TEXT}
    assert stored["b00"][schema.CLUSTER] == stored["a00"][schema.CLUSTER] == "a00"
    assert stored["b05"][schema.CLUSTER] == "b05"
    assert {"number", "list"} <= set(read) and not {"missing", "null", "no-values"} & set(read)

    read.clear()
    again = dedupe(es, index_name, fp, config)
    assert (again["fingerprinted"], again["no_text"], again["changed"]) == (0, 5, 0)
    assert sorted(map(str, read)) == ["list", "number"]  # a value that is no text never gets the version


def _mapping_meta(es: Elasticsearch, index: str) -> object:
    return es.indices.get_mapping(index=index)[index]["mappings"].get("_meta")


def test_a_dedupe_refuses_an_index_where_no_document_has_a_text_in_its_field(
    es: Elasticsearch, index_name: str, twin: str, fp: Fingerprinter
) -> None:
    """The text is in ``body``, and the dedupe reads ``text``: it would leave every document out. Nothing is
    written, not even the fields it read (which a later reconcile would take)."""
    docs: list[dict[str, object]] = [{"_id": d["_id"], "body": d["text"]} for d in _with_reprints()]
    _load(es, [*docs, {"_id": "number", "text": 7}], index_name)
    before = _mapping_meta(es, index_name)
    config = BatchConfig(slices=1, page_size=50)
    with pytest.raises(batch.NoTextField) as refused:
        dedupe(es, index_name, fp, config)
    assert (refused.value.text_field, refused.value.documents) == ("text", 10)
    assert "'text'" in str(refused.value)
    assert _mapping_meta(es, index_name) == before
    assert all(f == {} for f in _neardup_fields(es, index_name).values())

    done = dedupe(es, index_name, fp, replace(config, text_field="body"))
    assert (done["fingerprinted"], done["no_text"], done["documents"]) == (9, 1, 9)
    _load(es, [], twin)
    assert dedupe(es, twin, fp, config)["documents"] == 0  # an empty index is no mistake


@pytest.mark.parametrize(
    "mapping",
    [
        {"dynamic": False, "properties": {}},
        {"properties": {"text": {"type": "text", "index": False}}},
        {"properties": {"text": {"type": "keyword", "ignore_above": 20}}},
    ],
    ids=["not mapped", "not indexed", "keyword ignore_above"],
)
def test_a_dedupe_reads_texts_that_the_index_cannot_search(
    es: Elasticsearch, index_name: str, fp: Fingerprinter, mapping: dict[str, object]
) -> None:
    """Where the index cannot tell which documents hold the text field, their sources tell."""
    es.indices.create(index=index_name, settings={"number_of_shards": 1}, mappings=mapping)
    helpers.bulk(es, ({"_index": index_name, **d} for d in [*_with_reprints(), *_NO_TEXT]), refresh=True)
    setup_index(es, index_name)
    result = dedupe(es, index_name, fp, BatchConfig(slices=1, page_size=50))
    assert (result["fingerprinted"], result["no_text"], result["documents"]) == (9, 5, 9), result
    stored = _neardup_fields(es, index_name)
    assert stored["missing"] == stored["number"] == {}
    assert stored["b00"][schema.CLUSTER] == "a00"


def _routing(doc_id: str) -> str:
    return "tenant-" + doc_id[-1]


@pytest.mark.parametrize("required", [True, False], ids=["routing required", "routing given"])
def test_a_dedupe_writes_documents_with_custom_routing(
    es: Elasticsearch, index_name: str, twin: str, fp: Fingerprinter, monkeypatch: pytest.MonkeyPatch, required: bool
) -> None:
    """Each update, and each read of a document written in between, carries the document's routing: without it
    an update is refused (routing required) or meets no document on the shard the id alone names."""
    docs = _with_reprints()
    es.indices.create(index=index_name, settings={"number_of_shards": 3}, mappings={"_routing": {"required": required}})
    routed = ({"_index": index_name, "_routing": _routing(d["_id"]), **d} for d in docs)
    helpers.bulk(es, routed, refresh=True)
    setup_index(es, index_name)
    _load(es, [*docs], twin)  # the same documents, without routing
    page_records, clustering = batch._page_records, batch.cluster_records

    def another_writer_before_the_fingerprints(*args: object, **kwargs: object) -> object:
        es.update(index=index_name, id="b03", routing=_routing("b03"), doc={"edited": 1})
        return page_records(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(batch, "_page_records", another_writer_before_the_fingerprints)
    config = BatchConfig(slices=1, page_size=50)
    result = dedupe(es, index_name, fp, config)
    counts = ("fingerprinted", "fingerprint_failures", "fingerprint_skipped", "fingerprint_gone")
    assert tuple(result[c] for c in counts) == (9, 0, 0, 0), result
    assert (result["failures"], result["assignment_gone"], result["first_failure"]) == (0, 0, None), result
    monkeypatch.setattr(batch, "_page_records", page_records)
    dedupe(es, twin, fp, config)
    assert _assignments(es, index_name) == _assignments(es, twin)

    es.update(
        index=index_name, id="b03", routing=_routing("b03"), doc={schema.ROOT: {schema.CLUSTER: "wrong"}}, refresh=True
    )

    def another_writer_before_the_assignments(*args: object, **kwargs: object) -> object:
        es.update(index=index_name, id="b03", routing=_routing("b03"), doc={"edited": 2})
        return clustering(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(batch, "cluster_records", another_writer_before_the_assignments)
    again = batch.reconcile(es, index_name, config.version(fp), config)
    counts = ("changed", "assignment_skipped", "assignment_gone", "failures")
    assert tuple(again[c] for c in counts) == (1, 0, 0, 0), again
    assert _assignments(es, index_name) == _assignments(es, twin)


def test_a_partial_update_of_the_text_is_fingerprinted_again_once_its_version_is_cleared(
    es: Elasticsearch, index_name: str, fp: Fingerprinter
) -> None:
    """What README tells a user whose client changes texts by partial updates, which run no ingest pipeline."""
    arts = load_peoples_daily()
    setup_index(es, index_name)
    es.index(index=index_name, id="a", document={"text": arts[0].text}, refresh=True)
    dedupe(es, index_name, fp)
    before = es.get(index=index_name, id="a")["_source"][schema.ROOT][schema.EXACT]
    es.update(index=index_name, id="a", doc={"text": arts[1].text}, refresh=True)
    assert dedupe(es, index_name, fp)["fingerprinted"] == 0  # the version is current: the old fingerprint stays
    es.update(index=index_name, id="a", doc={"text": arts[1].text, schema.ROOT: {schema.VERSION: None}}, refresh=True)
    assert dedupe(es, index_name, fp)["fingerprinted"] == 1
    after = es.get(index=index_name, id="a")["_source"][schema.ROOT]
    assert after[schema.EXACT] != before and after[schema.EXACT] == fp.fingerprint(arts[1].text).exact


def test_a_bounded_text_check_refuses_only_what_it_read_whole(es: Elasticsearch, index_name: str, twin: str) -> None:
    """The service's request reads at most ``most`` documents: it refuses an index it read whole, and cannot tell
    for a larger one, which the dedupe's own check then reads to the end."""
    body = _documents()[0]["text"]
    _load(es, [{"_id": f"n{k:03d}", "body": body} for k in range(250)], index_name)
    _load(es, [{"_id": f"n{k:03d}", "body": body} for k in range(50)], twin)
    config = BatchConfig()
    batch.check_text_field(es, index_name, config, most=100)  # 150 unread: cannot tell
    with pytest.raises(batch.NoTextField):
        batch.check_text_field(es, index_name, config)
    with pytest.raises(batch.NoTextField):
        batch.check_text_field(es, twin, config, most=100)  # all 50 read
    es.index(index=index_name, id="z-last", document={"text": body}, refresh=True)
    batch.check_text_field(es, index_name, config)  # the one text, found at the end

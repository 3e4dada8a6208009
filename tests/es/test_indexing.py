"""Ingest-time flagging (:mod:`neardup.es.indexing`) against the real Elasticsearch: it applies the offline
clustering's own rule, so a sequential ingest in batches gives exactly the offline clusters."""

from __future__ import annotations

import pytest
from elasticsearch import Elasticsearch

from neardup.es import batch
from neardup.es.client import setup_index
from neardup.es.indexing import IngestConfig, index_batch, index_batch_in_pipeline
from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.sets import Doc, news_set
from neardup.incoming.documents import Incoming
from neardup.ingest.cluster import cluster_records
from neardup.ingest.fingerprint import Fingerprinter
from neardup.ingest.verify import VerifyConfig
from neardup.recent.writes import RecentWrites

pytestmark = pytest.mark.es


def _partition(labels: list[str]) -> set[frozenset[int]]:
    groups: dict[str, set[int]] = {}
    for k, label in enumerate(labels):
        groups.setdefault(label, set()).add(k)
    return {frozenset(g) for g in groups.values()}


@pytest.mark.parametrize("batch", [1, 25, 400])
def test_batches_of_any_size_give_exactly_the_offline_clusters(es: Elasticsearch, index_name: str, batch: int) -> None:
    docs = news_set(load_peoples_daily(), seed=5, groups=25, singles=50)
    # a few too-short texts, matched by exact hash only, one repeated across batches
    shorts = [Doc(f"s{k}", "", text, f"short-{text}") for k, text in enumerate(["好的", "收到", "好的"])]
    docs = [*docs[:30], *shorts, *docs[30:]]
    fp = Fingerprinter.default()
    records = fp.fingerprint_many([(d.text, d.title) for d in docs])
    offline = cluster_records(records, lambda r: r.fingerprints, VerifyConfig())
    offline_labels = [docs[c].id for c in offline.cluster.tolist()]

    setup_index(es, index_name)
    items = []
    for k in range(0, len(docs), batch):
        chunk = [Incoming(d.id, d.text, d.title) for d in docs[k : k + batch]]
        items += index_batch(es, index_name, chunk, fp, IngestConfig(refresh="true"), records[k : k + batch])
    assert all(i.status == "created" for i in items)
    flagged = [i.cluster or "" for i in items]
    assert _partition(flagged) == _partition(offline_labels)
    assert flagged == offline_labels  # clusters are named by the same canonical document
    dup_of = [i.duplicate_of for i in items]
    assert dup_of == [docs[d].id if d >= 0 else None for d in offline.duplicate_of.tolist()]
    print(f"batch {batch}: {len(docs)} documents, {len(set(flagged))} clusters, identical to offline")


@pytest.mark.parametrize("remember", [True, False])
def test_back_to_back_batches_find_each_other_without_a_refresh(
    es: Elasticsearch, index_name: str, remember: bool
) -> None:
    """With refresh off, a batch cannot find the batches before it by searching; the documents this
    process wrote moments ago (:class:`RecentWrites`) stand in, and give exactly the offline clusters."""
    docs = news_set(load_peoples_daily(), seed=9, groups=20, singles=30)
    fp = Fingerprinter.default()
    records = fp.fingerprint_many([(d.text, d.title) for d in docs])
    offline = cluster_records(records, lambda r: r.fingerprints, VerifyConfig())
    offline_labels = [docs[c].id for c in offline.cluster.tolist()]
    setup_index(es, index_name)
    es.indices.put_settings(index=index_name, settings={"refresh_interval": "-1"})
    recent = RecentWrites(seconds=600) if remember else None
    items = []
    for k in range(0, len(docs), 10):
        chunk = [Incoming(d.id, d.text, d.title) for d in docs[k : k + 10]]
        items += index_batch(
            es, index_name, chunk, fp, IngestConfig(refresh="false"), records[k : k + 10], recent=recent
        )
    flagged = [i.cluster for i in items]
    assert es.count(index=index_name)["count"] == 0  # nothing was searchable while flagging
    if remember:
        assert flagged == offline_labels
    else:
        assert len(set(flagged)) > len(set(offline_labels))  # copies in earlier batches were missed


@pytest.mark.parametrize("through_pipeline", [False, True], ids=["python", "pipeline"])
def test_a_batch_naming_one_id_twice_is_refused_before_any_request(through_pipeline: bool) -> None:
    """Pointed at nothing: a request would be a ConnectionError, not the ValueError the check gives first."""
    nowhere = Elasticsearch("http://127.0.0.1:9", max_retries=0)
    docs = [Incoming("a", "一段正文"), Incoming("b", "另一段正文"), Incoming("a", "修订后的正文")]
    fp = Fingerprinter.default()
    with pytest.raises(ValueError, match="names document 'a' twice"):
        if through_pipeline:
            index_batch_in_pipeline(nowhere, "news", docs, "neardup-flag", fp, IngestConfig(), lambda d: [])
        else:
            index_batch(nowhere, "news", docs, fp, IngestConfig())


@pytest.mark.parametrize("atomic", [True, False])
def test_a_retry_changes_nothing_and_reconcile_agrees(es: Elasticsearch, index_name: str, atomic: bool) -> None:
    """A document sent again unchanged keeps its time, so it takes no document written after it, though its search
    finds them: "b" (the original's first two thirds) was the duplicate of "a", and "c" ("b" and an ending) the
    duplicate of "b"; "b" sent again stays the duplicate of "a" (the nearer "c" came later), as reconcile has it."""
    original = load_peoples_daily()[0].text
    part = original[: len(original) * 2 // 3]
    fp = Fingerprinter.default()
    setup_index(es, index_name)
    config = IngestConfig(refresh="true", atomic=atomic)
    for doc_id, text in (("a", original), ("b", part), ("c", part + "（完）")):
        index_batch(es, index_name, [Incoming(doc_id, text)], fp, config)

    def stored() -> dict[str, tuple[str, str | None, str]]:
        es.indices.refresh(index=index_name)
        hits = es.search(index=index_name)["hits"]["hits"]
        return {
            h["_id"]: tuple(h["_source"]["neardup"].get(f) for f in ("cluster", "duplicate_of", "indexed_at"))
            for h in hits
        }

    written = stored()
    assert {k: v[:2] for k, v in written.items()} == {"a": ("a", None), "b": ("a", "a"), "c": ("a", "b")}
    again = index_batch(es, index_name, [Incoming("b", part)], fp, config)
    assert (again[0].cluster, again[0].duplicate_of) == ("a", "a")
    assert stored() == written
    assert batch.reconcile(es, index_name, fp.version)["changed"] == 0


def test_a_stored_document_neardup_cannot_read_is_written_over(es: Elasticsearch, index_name: str) -> None:
    """A document another client wrote with neardup fields of its own (the mapping takes them) is a new document."""
    fp = Fingerprinter.default()
    setup_index(es, index_name)
    fields = {
        "version": fp.version,
        "fingerprint": ["1.5"],
        "minhash": "AAA=",
        "indexed_at": "2024-01-01T00:00:00.000000000Z",
    }
    es.index(index=index_name, id="x", document={"text": "old", "neardup": fields}, refresh=True)
    text = load_peoples_daily()[0].text
    (item,) = index_batch(es, index_name, [Incoming("x", text)], fp, IngestConfig(refresh="true"))
    assert item.written and item.cluster == "x"
    assert es.get(index=index_name, id="x")["_source"]["neardup"]["indexed_at"] > fields["indexed_at"]


@pytest.mark.parametrize("atomic", [True, False])
def test_a_document_written_again_stays_the_canonical_of_its_cluster(
    es: Elasticsearch, index_name: str, atomic: bool
) -> None:
    """A batch sent again (a client's retry, ``neardup index`` resumed) meets the copies written since that were put
    in its documents' clusters: each document still names its cluster as its original, never a duplicate of its own
    member. While it stays a near-duplicate of what is stored it keeps its ``indexed_at``, so ``reconcile``, which
    orders documents by it, agrees."""
    original = load_peoples_daily()[0].text
    fp = Fingerprinter.default()
    setup_index(es, index_name)
    config = IngestConfig(refresh="true", atomic=atomic)
    first = index_batch(es, index_name, [Incoming("a", original)], fp, config)
    written_at = es.get(index=index_name, id="a")["_source"]["neardup"]["indexed_at"]
    second = index_batch(es, index_name, [Incoming("b", "（转载）" + original)], fp, config)
    assert (first[0].cluster, second[0].cluster, second[0].duplicate_of) == ("a", "a", "a")
    # a new copy before it in the batch: as near to "a" as to "b", it is the duplicate of the earlier, "a"
    again = index_batch(es, index_name, [Incoming("c", "（再转载）" + original), Incoming("a", original)], fp, config)
    assert [(i.cluster, i.duplicate_of) for i in again] == [("a", "a"), ("a", None)]
    stored = es.get(index=index_name, id="a")["_source"]["neardup"]
    assert (stored["cluster"], stored["is_duplicate"], stored["indexed_at"]) == ("a", False, written_at)
    assert es.get(index=index_name, id="c")["_source"]["neardup"]["indexed_at"] > written_at
    batch.reconcile(es, index_name, fp.version)
    es.indices.refresh(index=index_name)
    after = {h["_id"]: h["_source"]["neardup"] for h in es.search(index=index_name)["hits"]["hits"]}
    assert {k: (v["cluster"], v.get("duplicate_of")) for k, v in after.items()} == {
        "a": ("a", None),
        "b": ("a", "a"),
        "c": ("a", "a"),
    }
    # rewritten into another text, it is a new document: a new time, after its old copies
    other = load_peoples_daily()[1].text
    index_batch(es, index_name, [Incoming("a", other)], fp, config)
    assert es.get(index=index_name, id="a")["_source"]["neardup"]["indexed_at"] > after["c"]["indexed_at"]

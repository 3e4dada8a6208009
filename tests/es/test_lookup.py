"""Candidate lookup against the real Elasticsearch: when more documents share a block than the
candidate cap allows, the cap must keep the ones that share the most block tokens; a failed search
is an error that says why."""

from __future__ import annotations

import random

import pytest
from elasticsearch import BadRequestError, Elasticsearch, helpers

from neardup.errors import SearchFailed
from neardup.es import lookup
from neardup.es.client import setup_index
from neardup.es.lookup import candidate_query, find_duplicates, has_verify_script, search_candidates
from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.variants import make_variant
from neardup.ingest.fingerprint import Fingerprinter
from neardup.ingest.verify import VerifyConfig, verify_many
from neardup.mappings import schema
from tests.indices import remove_indices

pytestmark = pytest.mark.es


def test_the_candidate_cap_keeps_the_documents_sharing_most_block_tokens(es: Elasticsearch, index_name: str) -> None:
    fp = Fingerprinter.default()
    articles = load_peoples_daily()
    target = fp.fingerprint(articles[0].text, articles[0].title)
    reprint = fp.fingerprint("来源：新华社\n" + articles[0].text, articles[0].title)
    tokens = target.block_tokens()
    shared_by_reprint = sum(len(set(a) & set(b)) for a, b in zip(tokens, reprint.block_tokens(), strict=True))
    assert shared_by_reprint >= 8  # a reprint shares many (seed, block) tokens
    setup_index(es, index_name)
    # 40 unrelated articles that each share exactly one token per block field with the target (as
    # boilerplate does): under a per-field score they tie with the reprint, which comes last
    actions = []
    for k, article in enumerate(articles[1:41]):
        fields = schema.record_fields(fp.fingerprint(article.text, article.title))
        for b, name in enumerate(schema.BLOCKS):
            fields[name] = [tokens[b][k % len(tokens[b])], *fields[name][1:]]
        fields[schema.INDEXED_AT] = f"2026-01-01T00:00:{k:02d}Z"
        actions.append({"_index": index_name, "_id": f"noise-{k}", schema.ROOT: fields})
    actions.append(
        {
            "_index": index_name,
            "_id": "reprint",
            schema.ROOT: schema.record_fields(reprint) | {schema.INDEXED_AT: "2026-01-02T00:00:00Z"},
        }
    )
    helpers.bulk(es, actions, refresh="wait_for")

    [candidates] = search_candidates(es, index_name, [target], max_candidates=5)
    assert len(candidates) == 5 and candidates[0].id == "reprint"
    found, looked_at = find_duplicates(es, index_name, target, VerifyConfig(), max_candidates=5)
    assert looked_at == 5 and [f.doc.id for f in found] == ["reprint"]


def test_a_failed_candidate_search_is_an_error_with_its_status(es: Elasticsearch, es_url: str, index_name: str) -> None:
    from neardup.service import create_app

    fp = Fingerprinter.default()
    record = fp.fingerprint(load_peoples_daily()[0].text)
    setup_index(es, index_name)
    es.indices.close(index=index_name)
    with pytest.raises(SearchFailed) as failed:
        search_candidates(es, index_name, [record], max_candidates=5)
    assert failed.value.status == 400 and failed.value.error["type"] == "index_closed_exception"
    api = create_app({"es_url": es_url}).test_client()
    resp = api.post(f"/v1/indices/{index_name}/duplicates", json={"text": load_peoples_daily()[0].text})
    assert resp.status_code == 400 and resp.json["error"]["type"] == "elasticsearch_rejected", resp.json
    assert "closed" in resp.json["error"]["message"]


def _reprints(fp: Fingerprinter, n: int) -> tuple[list[str], list[str]]:
    articles = load_peoples_daily()[:n]
    return [a.text for a in articles], ["来源：新华社\n" + a.text[: int(len(a.text) * 0.9)] for a in articles]


def test_candidates_read_from_doc_values_equal_those_read_from_source(es: Elasticsearch, index_name: str) -> None:
    """A new index's candidates come from doc values; an index created before the sketch had doc values
    is read from ``_source`` instead; both give the same candidates and the same verified matches."""
    fp = Fingerprinter.default()
    originals, reprints = _reprints(fp, 30)
    records = fp.fingerprint_many([(t, None) for t in originals])
    queries = fp.fingerprint_many([(t, None) for t in reprints])
    old_index = f"{index_name}-old"
    setup_index(es, index_name)
    setup_index(es, old_index)  # the index template, then the index again without the sketches' doc values
    es.indices.delete(index=old_index)
    unmapped = {"type": "binary", "doc_values": False}
    es.indices.create(
        index=old_index,
        mappings={
            "properties": {schema.ROOT: {"properties": {schema.MINHASH: unmapped, schema.META_MINHASH: unmapped}}}
        },
    )
    try:
        for name in (index_name, old_index):
            actions = (
                {"_index": name, "_id": str(k), schema.ROOT: schema.record_fields(r) | {schema.CLUSTER: str(k)}}
                for k, r in enumerate(records)
            )
            helpers.bulk(es, actions, refresh="wait_for")
        # the check in Elasticsearch cannot read the old index's sketches: that index is read from _source and
        # checked here instead, with the same verified matches (not none)
        checked_old = [find_duplicates(es, old_index, q, VerifyConfig(), 50, in_es=True)[0] for q in queries]
        assert old_index in lookup._SOURCE_ONLY
        assert [[f.doc.id for f in fs] for fs in checked_old] == [[str(k)] for k in range(len(queries))]
        new = search_candidates(es, index_name, queries, max_candidates=50)
        old = search_candidates(es, old_index, queries, max_candidates=50)
        assert [[c.id for c in cands] for cands in new] == [[c.id for c in cands] for cands in old]
        # the old index is remembered: later lookups read _source at once, with the same answers
        assert old_index in lookup._SOURCE_ONLY and index_name not in lookup._SOURCE_ONLY
        again = search_candidates(es, old_index, queries, max_candidates=50)
        assert [[c.id for c in cands] for cands in again] == [[c.id for c in cands] for cands in old]
        assert all(not c.all_seeds for cands in new for c in cands) and all(c.all_seeds for cands in old for c in cands)
        for a, b in zip(new, old, strict=True):
            assert [(c.fingerprint, c.exact, c.status, c.cluster, c.sketch.tolist()) for c in a] == [
                (c.fingerprint, c.exact, c.status, c.cluster, c.sketch.tolist()) for c in b
            ]
        found = [find_duplicates(es, index_name, q, VerifyConfig(), 50)[0] for q in queries]
        assert [[f.doc.id for f in fs] for fs in found] == [[str(k)] for k in range(len(queries))]
    finally:
        remove_indices(es, old_index)


def test_min_shared_drops_documents_sharing_one_block_by_chance(es: Elasticsearch, index_name: str) -> None:
    fp = Fingerprinter.default()
    originals, reprints = _reprints(fp, 20)
    target = fp.fingerprint(reprints[0])
    setup_index(es, index_name)
    actions = []
    for k, text in enumerate(originals):
        fields = schema.record_fields(fp.fingerprint(text))
        if k:  # an unrelated article sharing one (seed, block) token with the target, as chance does
            fields[schema.BLOCKS[k % 4]] = [target.block_tokens()[k % 4][k % 16], *fields[schema.BLOCKS[k % 4]][1:]]
        actions.append({"_index": index_name, "_id": str(k), schema.ROOT: fields})
    helpers.bulk(es, actions, refresh="wait_for")
    one = search_candidates(es, index_name, [target], max_candidates=50, min_shared=1)[0]
    two = search_candidates(es, index_name, [target], max_candidates=50, min_shared=2)[0]
    assert len(one) == 20 and one[0].id == "0"
    assert [c.id for c in two] == ["0"]

    def found(ranked: bool, min_shared: int) -> list[str]:
        query = candidate_query(target, target.block_tokens(), target.version, min_shared, ranked=ranked)
        return [h["_id"] for h in es.search(index=index_name, query=query, size=50)["hits"]["hits"]]

    # unranked (one terms query per block field), the same documents; a larger min_shared still counts tokens
    assert sorted(found(False, 1)) == sorted(found(True, 1)) == sorted(c.id for c in one)
    assert found(False, 2) == ["0"]


@pytest.mark.parametrize(
    "config",
    [VerifyConfig(), VerifyConfig(min_jaccard=0.5, near_jaccard=0.3, max_distance=6)],
    ids=["default", "other"],
)
def test_the_check_in_elasticsearch_keeps_exactly_what_python_accepts(
    es: Elasticsearch, index_name: str, config: VerifyConfig
) -> None:
    """The native ``verify`` script (Java) against :func:`verify_many` (the Python reference) on the same
    candidates: reprints, partial copies, unrelated articles sharing blocks by chance, empty sketches."""
    assert has_verify_script(es)
    fp = Fingerprinter.default()
    rng = random.Random(3)
    articles = load_peoples_daily()[:150]
    texts = [a.text for a in articles]
    texts += ["\n".join(make_variant(list(a.paragraphs), rng)[0]) for a in articles[:100]]
    texts += [a.paragraphs[0] for a in articles[:50]]  # first paragraphs: partial copies
    records = fp.fingerprint_many([(t, None) for t in texts])
    setup_index(es, index_name)
    actions = (
        {"_index": index_name, "_id": str(k), schema.ROOT: schema.record_fields(r) | {schema.CLUSTER: str(k)}}
        for k, r in enumerate(records)
    )
    helpers.bulk(es, actions, refresh="wait_for")
    queries = records
    everything = search_candidates(es, index_name, queries, max_candidates=1000)
    checked = search_candidates(es, index_name, queries, max_candidates=1000, prefilter=config)
    compared = accepted = 0
    for q, cands, kept in zip(queries, everything, checked, strict=True):
        expected = {c.id for c, m in zip(cands, verify_many(q, cands, config), strict=True) if m is not None}
        assert {c.id for c in kept} == expected
        compared += len(cands)
        accepted += len(expected)
    assert accepted > 50 and compared - accepted > 50  # both verdicts were exercised
    print(f"{compared} candidate pairs compared, {accepted} accepted by both")


def test_the_plugins_block_query_finds_and_ranks_as_the_term_clauses_do(es: Elasticsearch, index_name: str) -> None:
    """``neardup_blocks`` (the plugin's query, used wherever the plugin checks candidates) against the ranked form
    it stands for, one constant-score ``term`` clause per token: the same documents, the same scores, the same
    order, for several ``min_shared``, on documents that share many, few or single tokens with the queries, over
    several segments (one refresh per load)."""
    fp = Fingerprinter.default()
    rng = random.Random(11)
    articles = load_peoples_daily()[:120]
    texts = [a.text for a in articles] + ["\n".join(make_variant(list(a.paragraphs), rng)[0]) for a in articles[:60]]
    records = fp.fingerprint_many([(t, None) for t in texts])
    queries = records[100:]  # some indexed themselves, the rest variants of indexed articles
    setup_index(es, index_name)
    for part in range(3):
        actions = []
        for k in range(part, len(records), 3):
            fields = schema.record_fields(records[k])
            if k % 5 == 1:  # an unrelated article sharing one token with a query, as chance does
                q = queries[k % len(queries)].block_tokens()
                fields[schema.BLOCKS[k % 4]] = [q[k % 4][k % 16], *fields[schema.BLOCKS[k % 4]][1:]]
            actions.append({"_index": index_name, "_id": str(k), schema.ROOT: fields})
        helpers.bulk(es, actions, refresh="wait_for")

    def hits(query: dict[str, object]) -> list[tuple[str, float]]:
        found = es.search(index=index_name, query=query, size=200)["hits"]["hits"]
        return [(h["_id"], h["_score"]) for h in found]

    matched = {m: 0 for m in (1, 2, 5, 64)}
    for q in queries:
        for min_shared in matched:
            ranked = candidate_query(q, q.block_tokens(), q.version, min_shared, ranked=True)
            native = candidate_query(q, q.block_tokens(), q.version, min_shared, native=True)
            expected = hits(ranked)
            assert hits(native) == expected
            matched[min_shared] += len(expected)
    print(f"{len(queries)} queries compared at min_shared {list(matched)}: {list(matched.values())} matches")
    # chance matches of one token, several-token matches of variants, and exact copies were all among them
    assert matched[1] > matched[2] > matched[5] > matched[64] > 0
    # as the lookup sends it, with the check in Elasticsearch: the matches Python accepts
    checked = search_candidates(es, index_name, queries, max_candidates=500, prefilter=VerifyConfig())
    everything = search_candidates(es, index_name, queries, max_candidates=500)
    for q, kept, cands in zip(queries, checked, everything, strict=True):
        accepted = {c.id for c, m in zip(cands, verify_many(q, cands, VerifyConfig()), strict=True) if m is not None}
        assert {c.id for c in kept} == accepted


def test_the_plugins_block_query_refuses_fields_it_cannot_match(es: Elasticsearch, index_name: str) -> None:
    """A text field is refused with a 400 naming it (tokens are matched as written, not analysed); a field the
    index does not map holds nothing, as a ``terms`` query on it would; a check reading a field it does not map is
    refused."""
    setup_index(es, index_name)
    es.index(index=index_name, id="a", document={"text": "0:0000"}, refresh="wait_for")
    with pytest.raises(BadRequestError) as refused:
        es.search(index=index_name, query={"neardup_blocks": {"tokens": {"text": ["0:0000"]}}})
    assert "field [text] must be an indexed keyword field" in str(refused.value)
    unmapped = es.search(index=index_name, query={"neardup_blocks": {"tokens": {"nowhere": ["0:0000"]}}})
    assert unmapped["hits"]["total"]["value"] == 0
    with pytest.raises(BadRequestError) as bad:
        es.search(index=index_name, query={"neardup_blocks": {"tokens": {schema.path("b0"): ["a"]}, "min_shared": 0}})
    assert "[min_shared] must be at least 1" in str(bad.value)
    # the second check reads the sketch and the fingerprint: a field it names that is not mapped is refused, naming it
    verify = {"sketch_field": "nowhere", "hex_field": schema.path(schema.HEX), "sketch": [1, 2], "fingerprint": 5}
    with pytest.raises(BadRequestError) as unread:
        es.search(
            index=index_name, query={"neardup_blocks": {"tokens": {schema.path("b0"): ["0:0000"]}, "verify": verify}}
        )
    assert "verify reads [nowhere], which this index does not map" in str(unread.value)


@pytest.mark.parametrize("in_es", [False, True], ids=["python", "in-es"])
def test_a_copy_whose_title_moved_its_fingerprint_past_every_block_is_found(
    es: Elasticsearch, index_name: str, in_es: bool
) -> None:
    """The same text stored with its title, looked up without one, under another title, or spaced out: the
    fingerprints share no block, the exact hash of the content characters finds it."""
    if in_es and not has_verify_script(es):
        pytest.skip("this cluster has no neardup plugin")
    fp = Fingerprinter.default()
    articles = [a for a in load_peoples_daily()[:60] if a.title]
    setup_index(es, index_name)
    stored = fp.fingerprint_many([(a.text, a.title) for a in articles])
    helpers.bulk(
        es,
        ({"_index": index_name, "_id": str(k), schema.ROOT: schema.record_fields(r)} for k, r in enumerate(stored)),
        refresh="wait_for",
    )
    found = apart = 0
    for k, a in enumerate(articles):
        for text, title in ((a.text, None), (a.text, "编者按：" + a.title[::-1]), (" ".join(a.text), None)):
            copy = fp.fingerprint(text, title)
            shared = {t for b in copy.block_tokens() for t in b} & {t for b in stored[k].block_tokens() for t in b}
            apart += not shared
            matches, _ = find_duplicates(es, index_name, copy, VerifyConfig(), 50, in_es=in_es)
            found += bool(matches) and matches[0].doc.id == str(k) and matches[0].match.similarity == 1.0
    assert apart > 10 and found == 3 * len(articles), (apart, found)

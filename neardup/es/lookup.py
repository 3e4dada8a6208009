"""Near-duplicate lookup in Elasticsearch: the block query proposes, the second check decides.

A record's candidates are documents of the same fingerprint version that share at least ``min_shared``
block tokens on the block fields ``neardup.b0..b3`` (a token carries its seed, so one query covers every
seed; :func:`candidate_query` says when it ranks them by the tokens they share), or documents with the same exact
hash (the same content characters, whose fingerprints a title can move past every block). Too-short records are
matched by their exact hash only. Candidates are read from doc values and checked in Python, all of a
record's at once (:func:`neardup.ingest.verify.verify_many`). On a cluster with neardup's plugin the
block match is its ``neardup_blocks`` query, and the check also runs inside it first
(:func:`verify_params`), so only matches travel; Python's verdict on them stays the reference.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from elasticsearch import BadRequestError, Elasticsearch

from neardup.errors import NeardupError, SearchFailed
from neardup.ingest.bits import to_signed
from neardup.ingest.cluster import DEFAULT_MIN_SHARED, match_rank
from neardup.ingest.fingerprint import Record
from neardup.ingest.sketch import SKETCH_SIZE
from neardup.ingest.verify import Comparable, Match, VerifyConfig, verify_many
from neardup.mappings import schema
from neardup.mappings.schema import Stored

__all__ = [
    "PAINLESS_HAMMING",
    "Found",
    "candidate_query",
    "candidate_search",
    "find_duplicates",
    "hamming_filter",
    "has_verify_script",
    "script_language",
    "search_candidates",
    "verify_params",
]

#: Hamming distance as a Painless filter, for clusters that have Painless (any regular 8.x cluster)
PAINLESS_HAMMING = (
    "for (def v : doc[params.field]) { for (def q : params.fingerprints) {"
    " if (Long.bitCount(v ^ q) <= params.max_distance) { return true; } } } return false;"
)


def has_verify_script(client: Elasticsearch) -> bool:
    """Does the cluster run neardup's native scripts (the embedded node, or a node with the plugin)?"""
    langs = client.get_script_languages()["language_contexts"]
    return any(c["language"] == "neardup" for c in langs)


def script_language(client: Elasticsearch) -> str:
    """``painless`` when the cluster has it, else ``neardup`` (the embedded node's native script)."""
    langs = {c["language"] for c in client.get_script_languages()["language_contexts"]}
    for lang in ("painless", "neardup"):
        if lang in langs:
            return lang
    raise NeardupError(f"no script language for a Hamming filter; the cluster has {sorted(langs)}")


def hamming_filter(fingerprints: Sequence[int], max_distance: int, lang: str) -> dict[str, Any]:
    """A ``script`` query keeping documents with a ``neardup.fingerprint`` value within
    ``max_distance`` bits of any of ``fingerprints`` (signed longs).

    >>> hamming_filter([5], 3, "neardup")["script"]["script"]["source"]
    'hamming'
    """
    params = {
        "field": schema.path(schema.FINGERPRINT),
        "fingerprints": list(fingerprints),
        "max_distance": max_distance,
    }
    source = "hamming" if lang == "neardup" else PAINLESS_HAMMING
    return {"script": {"script": {"lang": lang, "source": source, "params": params}}}


def verify_params(record: Comparable, config: VerifyConfig) -> dict[str, Any] | None:
    """The parameters of the plugin's second check (the ``verify`` script, or the ``verify`` of the
    ``neardup_blocks`` query) for candidates of ``record``. None when the check needs what the plugin does not
    read (too-short records, Hamming-only checks, metadata scores); Python then checks every candidate.

    >>> from neardup.ingest.fingerprint import Fingerprinter
    >>> rec = Fingerprinter.default().fingerprint("国务院今天召开常务会议，部署进一步推动经济稳定增长的措施。")
    >>> verify_params(rec, VerifyConfig())["min_jaccard"]
    0.35
    >>> verify_params(rec, VerifyConfig(mu=0.8)) is None
    True
    """
    if record.status != "ok" or not config.use_sketch or config.mu < 1.0:
        return None
    return {
        "sketch_field": schema.path(schema.MINHASH),
        "hex_field": schema.path(schema.HEX),
        "sketch": record.sketch.tolist(),
        "fingerprint": to_signed(record.fingerprint),
        "max_distance": config.max_distance,
        "min_jaccard": config.min_jaccard,
        "near_jaccard": config.near_jaccard,
        "sketch_size": SKETCH_SIZE,
    }


@dataclass(frozen=True)
class Found:
    """One verified near-duplicate."""

    doc: Stored
    match: Match


def candidate_query(
    record: Comparable,
    block_tokens: Sequence[Sequence[str]],
    version: str,
    min_shared: int = DEFAULT_MIN_SHARED,
    ranked: bool = True,
    native: bool = False,
    check: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The Elasticsearch query for ``record``'s candidates: documents sharing at least ``min_shared``
    (seed, block) tokens with it. ``ranked``: a candidate's score is the number of tokens it shares.
    Unranked with ``min_shared`` 1, the same documents score by the block fields they share (a larger
    ``min_shared`` counts tokens, so it is always ranked). ``native`` (a cluster with neardup's plugin):
    its ``neardup_blocks`` query, which finds and scores as the ranked form does, and keeps only the
    candidates that pass ``check`` (:func:`verify_params`) when given. Besides those, every form finds the ``ok``
    documents with ``record``'s exact hash (the same content characters), scored as sharing every token.

    >>> from neardup.ingest.fingerprint import Fingerprinter
    >>> fp = Fingerprinter.default()
    >>> rec = fp.fingerprint("国务院今天召开常务会议，部署进一步推动经济稳定增长的措施。")
    >>> blocks, same = candidate_query(rec, rec.block_tokens(), rec.version)["bool"]["should"]
    >>> len(blocks["bool"]["should"]), blocks["bool"]["should"][0]["constant_score"]["filter"]["term"][
    ...     schema.BLOCK_FIELDS[0]][:2]
    (64, '0:')
    >>> same["constant_score"]["filter"]["bool"]["filter"][0] == {"term": {schema.path(schema.EXACT): rec.exact}}
    True
    >>> unranked = candidate_query(rec, rec.block_tokens(), rec.version, ranked=False)["bool"]["should"][0]
    >>> [next(iter(c["terms"])) for c in unranked["bool"]["should"]] == list(schema.BLOCK_FIELDS)
    True
    >>> native = candidate_query(rec, rec.block_tokens(), rec.version, native=True)["bool"]["should"][0]
    >>> list(native["neardup_blocks"]["tokens"]) == list(schema.BLOCK_FIELDS), native["neardup_blocks"]["min_shared"]
    (True, 1)
    >>> short = fp.fingerprint("好")
    >>> candidate_query(short, short.block_tokens(), short.version)["bool"]["filter"][1] == {
    ...     "term": {schema.path(schema.EXACT): short.exact}}
    True
    """
    version_filter = {"term": {schema.path(schema.VERSION): version}}
    if record.status == "empty":
        return {"match_none": {}}
    if record.status != "ok":
        return {
            "bool": {
                "filter": [
                    version_filter,
                    {"term": {schema.path(schema.EXACT): record.exact}},
                    {"term": {schema.path(schema.STATUS): record.status}},
                ]
            }
        }
    # Unrelated documents share one 16-bit block by chance (about 64 / 65,536 of the index per query);
    # true near-duplicates share several, so min_shared > 1 drops the chance matches in Lucene itself.
    blocks = _block_query(block_tokens, min_shared, ranked, native, check)
    if not record.exact:  # a stored document read without its hash: no copy can be told by it
        return {"bool": {"filter": [version_filter], "must": [blocks]}}
    # and the copies with the same content characters, whose fingerprints a title (given to one copy only, or
    # another one) or a text spaced out character by character can move past every block: scored as one sharing
    # every token, since nothing is closer
    same = {
        "constant_score": {
            "filter": {
                "bool": {
                    "filter": [
                        {"term": {schema.path(schema.EXACT): record.exact}},
                        {"term": {schema.path(schema.STATUS): "ok"}},
                    ]
                }
            },
            "boost": sum(len(tokens) for tokens in block_tokens),
        }
    }
    return {"bool": {"filter": [version_filter], "should": [blocks, same], "minimum_should_match": 1}}


def _block_query(
    block_tokens: Sequence[Sequence[str]],
    min_shared: int,
    ranked: bool,
    native: bool,
    check: dict[str, Any] | None,
) -> dict[str, Any]:
    """The documents sharing at least ``min_shared`` of ``block_tokens`` (see :func:`candidate_query`)."""
    if native:
        # the plugin's query: per segment one sorted pass of exact seeks over each field's term dictionary and a
        # count of the postings, instead of Lucene's per-field rewrite (terms) or 64 term scorers (ranked); a
        # lookup's largest cost, since most of its 64 tokens are absent from a segment and each is still sought
        tokens = {field: list(values) for field, values in zip(schema.BLOCK_FIELDS, block_tokens, strict=True)}
        shared = max(1, min(min_shared, sum(len(v) for v in tokens.values())))
        blocks: dict[str, Any] = {"tokens": tokens, "min_shared": shared}
        if check is not None:
            # the second check on each match as the segment's matches are found, before the version filter or
            # anything else sees them: a large index has ~1,000 chance matches per query, and a script filter
            # would take each of them through the conjunction with the version's postings and the script layer too
            blocks["verify"] = check
        return {"neardup_blocks": blocks}
    if not ranked and min_shared <= 1:
        # one ``terms`` query per block field: the same documents as the 64 clauses below for about a third
        # of Lucene's work (64 term scorers per segment cost more than the matching itself), but the score
        # counts fields, not tokens. For callers whose cap is spent on verified matches only.
        fields = zip(schema.BLOCK_FIELDS, block_tokens, strict=True)
        return {"bool": {"should": [{"terms": {field: list(tokens)}} for field, tokens in fields]}}
    # one clause per (seed, block) token, each scoring 1: a candidate's score is how many tokens it shares,
    # so when more than max_candidates share a block (boilerplate, or chance matches of a large index
    # checked outside it), the cap keeps the closest ones.
    should = [
        {"constant_score": {"filter": {"term": {field: token}}}}
        for field, tokens in zip(schema.BLOCK_FIELDS, block_tokens, strict=True)
        for token in tokens
    ]
    shared = max(1, min(min_shared, len(should)))
    return {"bool": {"should": should, "minimum_should_match": shared}}


def candidate_search(
    record: Record | Stored,
    size: int,
    exclude: Iterable[str],
    min_shared: int,
    check: dict[str, Any] | None,
    doc_values: bool,
    native: bool = False,
) -> dict[str, Any]:
    """The search body of one record's candidates: :func:`candidate_query` (``native`` on a cluster with
    neardup's plugin, whose block query then also runs the second check with ``check``, the
    :func:`verify_params`, when given), ``exclude``'s ids left out; with ``doc_values`` it reads only the doc
    values of :data:`~neardup.mappings.schema.CANDIDATE_DOC_VALUES`, never the stored ``_source``."""
    if check is not None and not native:
        raise ValueError("the second check runs inside the plugin's block query: pass native=True with check")
    query = candidate_query(record, record.block_tokens(), record.version, min_shared, native=native, check=check)
    excluded = list(exclude)
    if excluded:
        query = {"bool": {"must": [query], "must_not": [{"ids": {"values": excluded}}]}}
    if not doc_values:
        return {"query": query, "size": size, "_source": schema.LOOKUP_FIELDS}
    return {
        "query": query,
        "size": size,
        "_source": False,
        "docvalue_fields": schema.CANDIDATE_DOC_VALUES,
        "track_total_hits": False,
    }


def _no_verify_script(error: dict[str, Any]) -> bool:
    """Does a search error say the cluster lacks what the plugin's check needs: the ``neardup_blocks`` query (a
    plugin older than it: ``unknown query``), its ``verify`` (a plugin whose query predates the check: the query
    ``does not take [verify]``), or the ``neardup`` script language and its ``verify`` script? Only those: the
    plugin's own refusals also name ``[neardup_blocks]`` (a field it cannot match, a bad parameter), and read as a
    missing plugin they would make the lookup fall back to a search that finds nothing, silently.

    >>> _no_verify_script({"type": "parsing_exception", "reason": "unknown query [neardup_blocks]"})
    True
    >>> _no_verify_script({"type": "parsing_exception", "reason": "[neardup_blocks] does not take [verify] as X"})
    True
    >>> _no_verify_script({"type": "illegal_argument_exception", "reason": "script_lang not supported [neardup]"})
    True
    >>> _no_verify_script({"type": "query_shard_exception", "reason": "failed to create query: [neardup_blocks] field "
    ...                    "[neardup.b0] must be an indexed keyword field without a normalizer, not [text]"})
    False
    """
    text = str(error)
    missing = (
        "unknown query [neardup_blocks]",
        "[neardup_blocks] does not take [verify]",
        "script_lang not supported [neardup]",
        "unknown neardup script [verify]",
    )
    return any(m in text for m in missing)


def _needs_source(error: dict[str, Any]) -> bool:
    """Does a search error say the index keeps no doc values for the sketch (created before they were
    mapped)? Such an index is read from ``_source`` instead."""
    text = str(error)
    return schema.path(schema.MINHASH) in text and ("doc values" in text or "fielddata" in text)


#: how a candidate search may be made, fastest first: (verify in Elasticsearch, read doc values)
_WAYS = ((True, True), (False, True), (False, False))


class _SourceOnly:
    """Indices found to have no doc values for the sketch, remembered for ``ttl`` seconds, so their lookups
    go to ``_source`` at once instead of failing a doc-values search first every time. Forgotten after the
    ttl, so a re-created index with the current mapping is searched the fast way again.

    >>> remembered = _SourceOnly(ttl=60.0)
    >>> remembered.add("old")
    >>> "old" in remembered, "new" in remembered
    (True, False)
    >>> remembered.ttl = -1.0; remembered.add("old"); "old" in remembered
    False
    """

    def __init__(self, ttl: float = 300.0) -> None:
        self.ttl = ttl
        self._until: dict[str, float] = {}

    def __contains__(self, index: str) -> bool:
        until = self._until.get(index)
        if until is not None and until < time.monotonic():
            self._until.pop(index, None)
            return False
        return until is not None

    def add(self, index: str) -> None:
        if len(self._until) > 10_000:  # a bound on what is remembered; forgetting costs one failed search
            self._until.clear()
        self._until[index] = time.monotonic() + self.ttl


_SOURCE_ONLY = _SourceOnly()


def search_candidates(
    client: Elasticsearch,
    index: str,
    records: Sequence[Record | Stored],
    max_candidates: int,
    exclude: Sequence[Iterable[str]] | None = None,
    min_shared: int = DEFAULT_MIN_SHARED,
    prefilter: VerifyConfig | None = None,
) -> list[list[Stored]]:
    """Candidates for each record, in one ``msearch`` request (documents with its exact hash and those sharing more
    block tokens first).

    ``prefilter`` says the cluster has neardup's plugin: its ``neardup_blocks`` query makes the block match
    and drops the candidates that fail the second check (:func:`verify_params`), so only likely matches
    travel; they are still verified in Python. A cluster without the plugin's query (an older plugin), or an
    index whose sketches have no doc values, is searched the slower way instead (the search is repeated for
    the records it failed on, every candidate checked in Python)."""
    if not records:
        return []
    excluded = [list(e) for e in exclude] if exclude else [[] for _ in records]
    checks = [None if prefilter is None else verify_params(rec, prefilter) for rec in records]
    out: list[list[Stored] | None] = [None] * len(records)
    source_only = index in _SOURCE_ONLY
    plugin = prefilter is not None
    for scripted, doc_values in _WAYS:
        todo = [k for k, found in enumerate(out) if found is None and (not scripted or checks[k] is not None)]
        if not todo or (doc_values and source_only):
            continue
        resp = None
        while resp is None:
            searches: list[dict[str, Any]] = []
            for k in todo:
                check = checks[k] if scripted else None
                # all shards or an error: a shard without a copy at this moment would hide its candidates, and the
                # record would pass for an original (Elasticsearch's default allows partial results)
                searches.append({"index": index, "allow_partial_search_results": False})
                body = candidate_search(records[k], max_candidates, excluded[k], min_shared, check, doc_values, plugin)
                searches.append(body)
            try:
                resp = client.msearch(searches=searches)
            except BadRequestError as e:
                # a query Elasticsearch cannot parse (a plugin without neardup_blocks, or without its verify) fails
                # the whole msearch before any search, not one item: these records are searched without the plugin,
                # by this way again when it has no check, else by the next
                if not (plugin and _no_verify_script({"reason": str(e), "body": e.body})):
                    raise
                plugin = False
                if scripted:
                    break
        if resp is None:
            continue
        for k, item in zip(todo, resp["responses"], strict=True):
            error = item.get("error")
            if error is None:
                hits = item["hits"]["hits"]
                version = records[k].version
                out[k] = [Stored.from_doc_values(h, version) if doc_values else Stored.from_hit(h) for h in hits]
            elif error.get("type") == "index_not_found_exception":
                out[k] = []  # nothing indexed yet: the bulk write creates the index from its template
            elif doc_values and _needs_source(error):
                _SOURCE_ONLY.add(index)
            elif plugin and _no_verify_script(error):
                plugin = False  # the next way searches without the plugin
            else:
                raise SearchFailed(int(item.get("status") or 500), dict(error))
    return [found or [] for found in out]


def find_duplicates(
    client: Elasticsearch,
    index: str,
    record: Record | Stored,
    config: VerifyConfig,
    max_candidates: int,
    exclude: Iterable[str] = (),
    min_shared: int = DEFAULT_MIN_SHARED,
    in_es: bool = False,
) -> tuple[list[Found], int]:
    """Verified near-duplicates of ``record`` in ``index``, best first, and the number of candidates
    returned (with ``in_es``, those that passed the check in Elasticsearch; see :func:`search_candidates`)."""
    prefilter = config if in_es else None
    candidates = search_candidates(client, index, [record], max_candidates, [list(exclude)], min_shared, prefilter)[0]
    matches = verify_many(record, candidates, config)
    found = [Found(doc, match) for doc, match in zip(candidates, matches, strict=True) if match is not None]
    found.sort(key=lambda f: match_rank(f.match, f.doc.order))
    return found, len(candidates)

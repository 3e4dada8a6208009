"""Near-duplicate lookup in Elasticsearch: the block query proposes, :func:`verify` decides.

A record's candidates are documents of the same fingerprint version that share at least one block
token (``bool.should`` of one ``term`` query per (seed, block) token on the block fields
``neardup.b0..b3``; a token carries its seed, so one query covers every seed). Too-short records are
matched by their exact hash only. The returned candidates are checked in Python
(:func:`neardup.ingest.verify.verify`); the bench also measures the check as a script filter inside
Elasticsearch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from elasticsearch import Elasticsearch

from neardup.errors import NeardupError, SearchFailed
from neardup.ingest.fingerprint import Record
from neardup.ingest.verify import Comparable, Match, VerifyConfig, verify
from neardup.mappings import schema
from neardup.mappings.schema import Stored

__all__ = [
    "PAINLESS_HAMMING",
    "Found",
    "candidate_query",
    "find_duplicates",
    "hamming_filter",
    "script_language",
    "search_candidates",
]

#: Hamming distance as a Painless filter, for clusters that have Painless (any regular 8.x cluster)
PAINLESS_HAMMING = (
    "for (def v : doc[params.field]) { for (def q : params.fingerprints) {"
    " if (Long.bitCount(v ^ q) <= params.max_distance) { return true; } } } return false;"
)


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


@dataclass(frozen=True)
class Found:
    """One verified near-duplicate."""

    doc: Stored
    match: Match


def candidate_query(record: Comparable, block_tokens: Sequence[Sequence[str]], version: str) -> dict[str, Any]:
    """The Elasticsearch query for ``record``'s candidates.

    >>> from neardup.ingest.fingerprint import Fingerprinter
    >>> fp = Fingerprinter.default()
    >>> rec = fp.fingerprint("国务院今天召开常务会议，部署进一步推动经济稳定增长的措施。")
    >>> q = candidate_query(rec, rec.block_tokens(), rec.version)
    >>> len(q["bool"]["should"]), q["bool"]["should"][0]["constant_score"]["filter"]["term"][schema.BLOCK_FIELDS[0]][:2]
    (64, '0:')
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
    # one clause per (seed, block) token, each scoring 1: a candidate's score is how many tokens it shares,
    # so when more than max_candidates share a block (boilerplate), the cap keeps the closest ones
    should = [
        {"constant_score": {"filter": {"term": {field: token}}}}
        for field, tokens in zip(schema.BLOCK_FIELDS, block_tokens, strict=True)
        for token in tokens
    ]
    return {"bool": {"filter": [version_filter], "should": should, "minimum_should_match": 1}}


def _search_body(query: dict[str, Any], size: int, exclude: Iterable[str]) -> dict[str, Any]:
    excluded = list(exclude)
    if excluded:
        query = {"bool": {"must": [query], "must_not": [{"ids": {"values": excluded}}]}}
    return {"query": query, "size": size, "_source": schema.LOOKUP_FIELDS}


def search_candidates(
    client: Elasticsearch,
    index: str,
    records: Sequence[Record | Stored],
    max_candidates: int,
    exclude: Sequence[Iterable[str]] | None = None,
) -> list[list[Stored]]:
    """Candidates for each record, in one ``msearch`` request (documents sharing more block tokens first)."""
    if not records:
        return []
    searches: list[dict[str, Any]] = []
    for k, rec in enumerate(records):
        query = candidate_query(rec, rec.block_tokens(), rec.version)
        searches.append({"index": index})
        searches.append(_search_body(query, max_candidates, exclude[k] if exclude else ()))
    resp = client.msearch(searches=searches)
    out: list[list[Stored]] = []
    for item in resp["responses"]:
        if "error" in item and item["error"].get("type") == "index_not_found_exception":
            out.append([])  # nothing indexed yet: the bulk write creates the index from its template
            continue
        if "error" in item:
            raise SearchFailed(int(item.get("status") or 500), dict(item["error"]))
        out.append([Stored.from_hit(h) for h in item["hits"]["hits"]])
    return out


def find_duplicates(
    client: Elasticsearch,
    index: str,
    record: Record | Stored,
    config: VerifyConfig,
    max_candidates: int,
    exclude: Iterable[str] = (),
) -> tuple[list[Found], int]:
    """Verified near-duplicates of ``record`` in ``index``, best first, and the number of candidates."""
    candidates = search_candidates(client, index, [record], max_candidates, [list(exclude)])[0]
    found = []
    for doc in candidates:
        match = verify(record, doc, config)
        if match is not None:
            found.append(Found(doc, match))
    found.sort(key=lambda f: (-f.match.similarity, f.match.distance, f.doc.order))
    return found, len(candidates)

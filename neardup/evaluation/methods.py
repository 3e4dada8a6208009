"""The methods compared by ``neardup eval``: neardup (full, each factor off, each verification
choice), plain TF SimHash, char-3-gram MinHash LSH (datasketch) and exact hashing.

Documents are segmented once; each weight configuration then only re-weighs and re-hashes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from neardup.ingest.cluster import cluster_records, verified_pairs
from neardup.ingest.fingerprint import FingerprintConfig, Fingerprinter, Record
from neardup.ingest.fingerprint import Prepared as FingerprintInput
from neardup.ingest.segment import Segmenter
from neardup.ingest.verify import VerifyConfig
from neardup.ingest.weights import IdfTable, WeightConfig, fit_idf

from .metrics import Scores, pairwise_scores
from .sets import Doc

__all__ = ["Prepared", "Result", "prepare", "run_methods"]


@dataclass(frozen=True)
class Prepared:
    """The documents of a set after the weight-independent stages of the fingerprinter, with their
    labels; every method below starts from these."""

    docs: list[FingerprintInput]
    groups: list[str]
    segmenter: Segmenter

    @property
    def words(self) -> list[list[str]]:
        return [d.words for d in self.docs]

    @property
    def chars(self) -> list[str]:
        return [d.chars for d in self.docs]


@dataclass(frozen=True)
class Result:
    method: str
    scores: Scores
    seconds: float


def prepare(docs: Sequence[Doc], segmenter: Segmenter, fold: bool = FingerprintConfig.fold_script) -> Prepared:
    fingerprinter = Fingerprinter(FingerprintConfig(fold_script=fold), IdfTable.jieba_default(), segmenter)
    prepared = fingerprinter.prepare_many([(d.text, d.title) for d in docs], every_factor=True)
    return Prepared(prepared, [d.group for d in docs], segmenter)


def _records(p: Prepared, idf: IdfTable, weights: WeightConfig, seeds: int) -> list[Record]:
    """The fingerprints of ``p`` under another weight configuration and seed count, by the fingerprinter itself."""
    records: list[Record] = Fingerprinter(FingerprintConfig(weights=weights, seeds=seeds), idf, p.segmenter).records(
        p.docs
    )
    return records


def _components(n: int, i: Sequence[int], j: Sequence[int]) -> npt.NDArray[np.int32]:
    graph = coo_matrix((np.ones(len(i)), (np.asarray(i), np.asarray(j))), shape=(n, n))
    labels: npt.NDArray[np.int32] = connected_components(graph, directed=False)[1]
    return labels


def _neardup(
    p: Prepared, idf: IdfTable, weights: WeightConfig, seeds: int, verify: VerifyConfig, guard: bool = True
) -> list[int]:
    recs = _records(p, idf, weights, seeds)
    labels: list[int] = cluster_records(recs, lambda r: r.fingerprints, verify, guard=guard).cluster.tolist()
    return labels


def _plain_tf_simhash(p: Prepared, idf: IdfTable) -> list[int]:
    """Traditional SimHash: TF weights, one fingerprint, Hamming <= 3, transitive closure."""
    tf_only = WeightConfig(idf=False, pos=False, length="off", signal=False, title=False)
    recs = _records(p, idf, tf_only, 1)
    return hamming_components(recs)


def hamming_components(records: Sequence[Record], max_distance: int = 3) -> list[int]:
    """Traditional SimHash's clusters: the pairs within ``max_distance`` bits of seed 0 that the candidate rule
    proposes (within 3 bits a pair shares one of the 4 blocks of 16 bits; a block shared by more than 64 documents is
    split by sub-blocks, as everywhere), joined transitively.

    >>> from dataclasses import replace
    >>> from neardup.ingest.fingerprint import Fingerprinter
    >>> base = Fingerprinter.default().fingerprint("国务院今天召开常务会议，部署进一步推动经济稳定增长的措施。")
    >>> recs = [replace(base, fingerprints=(f,), exact=str(f)) for f in (0b0000, 0b1111, 0b0011, 1 << 40 | 0xFF)]
    >>> hamming_components(recs)  # 0000~0011~1111 (2 bits each), though 0000 and 1111 are 4 apart
    [0, 0, 0, 1]
    """
    i, j, _ = verified_pairs(
        records, lambda r: r.fingerprints, VerifyConfig(max_distance=max_distance, use_sketch=False)
    )
    labels: list[int] = _components(len(records), list(i), list(j)).tolist()
    return labels


def _minhash_lsh(p: Prepared, threshold: float = 0.5) -> list[int]:
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=128)
    hashes = []
    for k, chars in enumerate(p.chars):
        m = MinHash(num_perm=128)
        grams = {chars[x : x + 3] for x in range(max(1, len(chars) - 2))}
        m.update_batch([g.encode("utf-8") for g in grams])
        lsh.insert(str(k), m)
        hashes.append(m)
    i, j = [], []
    for k, m in enumerate(hashes):
        for other in lsh.query(m):
            o = int(other)
            if o != k:
                i.append(k)
                j.append(o)
    labels: list[int] = _components(len(hashes), i, j).tolist()
    return labels


def _exact(p: Prepared) -> list[str]:
    return [d.exact for d in p.docs]


def run_methods(p: Prepared, corpus_idf: bool = True, only: Sequence[str] | None = None) -> list[Result]:
    """Run every method on prepared documents; ``only`` restricts to method names given."""
    jieba_idf = IdfTable.jieba_default()
    fitted = fit_idf(p.words)
    full = WeightConfig()
    default_verify = VerifyConfig()
    methods: dict[str, Callable[[], Sequence[object]]] = {
        "neardup (full weights, 16 seeds, sketch verify)": lambda: _neardup(p, jieba_idf, full, 16, default_verify),
        "neardup + corpus IDF (idf fit)": lambda: _neardup(p, fitted, full, 16, default_verify),
        "  - idf off": lambda: _neardup(p, jieba_idf, replace(full, idf=False), 16, default_verify),
        "  - pos off": lambda: _neardup(p, jieba_idf, replace(full, pos=False), 16, default_verify),
        "  - length off": lambda: _neardup(p, jieba_idf, replace(full, length="off"), 16, default_verify),
        "  - length minmax (seed 000)": lambda: _neardup(
            p, jieba_idf, replace(full, length="minmax"), 16, default_verify
        ),
        f"  + signal words on (×{full.signal_factor:g}, off by default)": lambda: _neardup(
            p, jieba_idf, replace(full, signal=True), 16, default_verify
        ),
        "  - title off": lambda: _neardup(p, jieba_idf, replace(full, title=False), 16, default_verify),
        "  verify: Hamming<=3 only, 1 seed": lambda: _neardup(p, jieba_idf, full, 1, VerifyConfig(use_sketch=False)),
        "  verify: Hamming<=3 only, 16 seeds": lambda: _neardup(p, jieba_idf, full, 16, VerifyConfig(use_sketch=False)),
        "  verify: sketch, 1 seed": lambda: _neardup(p, jieba_idf, full, 1, default_verify),
        "  verify: sketch, 8 seeds": lambda: _neardup(p, jieba_idf, full, 8, default_verify),
        "  verify: sketch, no canonical guard": lambda: _neardup(p, jieba_idf, full, 16, default_verify, guard=False),
        "plain TF SimHash (k=3, transitive)": lambda: _plain_tf_simhash(p, jieba_idf),
        "char-3-gram MinHash LSH (datasketch, t=0.5)": lambda: _minhash_lsh(p),
        "exact hashing": lambda: _exact(p),
    }
    if not corpus_idf:
        methods.pop("neardup + corpus IDF (idf fit)")
    results = []
    for name, run in methods.items():
        if only and not any(o in name for o in only):
            continue
        start = time.perf_counter()
        labels = run()
        results.append(Result(name, pairwise_scores(p.groups, list(labels)), time.perf_counter() - start))
    return results

"""From text to a fingerprint record: normalise → segment → weigh → hash → fingerprints + sketch.

>>> fp = Fingerprinter.default()
>>> rec = fp.fingerprint("国务院今天召开常务会议，部署进一步推动经济稳定增长的措施。", title="国务院常务会议")
>>> rec.status, len(rec.fingerprints), rec.version == fp.version
('ok', 16, True)
>>> fp.fingerprint("好").status, fp.fingerprint("，，。").status, fp.fingerprint("", title="图片").status
('too_short', 'empty', 'empty')
"""

from __future__ import annotations

import statistics
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib import metadata
from typing import Any

import numpy as np
import numpy.typing as npt
import xxhash

from . import bits
from .metadata import meta_signature
from .normalize import content_chars, normalize
from .records import RecordConfig, split_record
from .segment import Segmenter
from .simhash import simhash
from .sketch import shingle_sketch
from .weights import IdfTable, WeightConfig, weigh

__all__ = ["ALGORITHM", "FingerprintConfig", "Fingerprinter", "Prepared", "Record", "short_exact", "version_of"]

#: bump on any change to normalisation, segmentation, weighting, hashing or status code
ALGORITHM = 6


#: between the characters of a record's fields, for its sketch and exact hash (a control character: never content)
_FIELD_SEPARATOR = "\x1f"
_TABLES = f"unicode={unicodedata.unidata_version};jieba={metadata.version('jieba')};opencc={metadata.version('opencc')}"


@dataclass(frozen=True)
class FingerprintConfig:
    """Settings that shape a fingerprint; all of them go into the version string."""

    weights: WeightConfig = field(default_factory=WeightConfig)
    seeds: int = 16
    min_chars: int = 10
    min_features: int = 3
    idf_name: str = "jieba"
    # Traditional → Simplified before segmenting (neardup eval, poems: recall 0.964 → 0.989, news unchanged)
    fold_script: bool = True

    def describe(self) -> str:
        """Every setting, and the versions of the tables the text passes through: the Unicode database
        (NFKC, case, character classes), jieba's dictionary and HMM, OpenCC's dictionaries."""
        return (
            f"a{ALGORITHM};seeds={self.seeds};min={self.min_chars},{self.min_features};"
            f"idf={self.idf_name};fold={self.fold_script};{self.weights.describe()};{_TABLES}"
        )


def version_of(config: FingerprintConfig) -> str:
    """The fingerprint version of ``config``: ``nd<ALGORITHM>-`` and 8 hex digits of xxh3 of its description.

    >>> version_of(FingerprintConfig()) == Fingerprinter.default().version
    True
    """
    return f"nd{ALGORITHM}-{xxhash.xxh3_64_hexdigest(config.describe().encode())[:8]}"


@dataclass(frozen=True)
class Prepared:
    """A document after the stages that no weight setting changes: its kept words, the words in
    signal-word sentences, its title's words, its content characters, their sketch and exact hash, and its title's
    content characters (what a too-short text is matched by too: :func:`short_exact`)."""

    words: list[str]
    signalled: frozenset[str]
    title_words: frozenset[str]
    chars: str
    sketch: npt.NDArray[np.uint32]
    exact: str
    title_chars: str


def short_exact(chars: str, title_chars: str) -> str:
    """The exact hash of a too-short text: of its content characters, and its title's after a separator when it has
    one. A body too short to fingerprint ("图片", "停电通知") says too little alone; its title is the rest of what
    the document says, so the same short body under other titles is not a copy. (A text long enough is matched by its
    body alone: a copy under another title, or none, is a copy.)

    >>> short_exact("图片", "") == xxhash.xxh3_64_hexdigest("图片".encode())
    True
    >>> short_exact("图片", "北京") == short_exact("图片", "上海")
    False
    """
    joined = chars + _FIELD_SEPARATOR + title_chars if title_chars else chars
    return xxhash.xxh3_64_hexdigest(joined.encode("utf-8"))


@dataclass(frozen=True)
class Record:
    """What neardup stores per document and compares: fingerprints (seed 0 first, unsigned),
    the shingle sketch, the exact hash of the content characters, status (``ok``, ``too_short``:
    matched by exact hash only, ``empty``: no letters or digits at all, never matched), version, and
    the metadata MinHash of a record's set fields."""

    fingerprints: tuple[int, ...]
    sketch: npt.NDArray[np.uint32]
    exact: str
    status: str
    version: str
    features: tuple[tuple[str, float], ...] = ()
    meta: npt.NDArray[np.uint32] | None = None

    @property
    def fingerprint(self) -> int:
        return self.fingerprints[0] if self.fingerprints else 0

    def block_tokens(self) -> list[list[str]]:
        """Values of fields b0..b3: per block position, one token per seed (empty when too short)."""
        return bits.document_block_fields(self.fingerprints, self.status == "ok")


class Fingerprinter:
    """Holds the segmenter, the IDF table and the config; turns text into :class:`Record`."""

    def __init__(self, config: FingerprintConfig, idf: IdfTable, segmenter: Segmenter) -> None:
        if config.seeds < 1:
            raise ValueError("seeds must be at least 1")
        self.config = config
        self.idf = idf
        self.segmenter = segmenter
        self._seeds = tuple(range(config.seeds))
        self._word_factors: dict[str, float] = {}

    @classmethod
    def default(cls, config: FingerprintConfig | None = None, idf: IdfTable | None = None) -> Fingerprinter:
        return cls(config or FingerprintConfig(), idf or _jieba_idf(), Segmenter.default())

    @cached_property
    def version(self) -> str:
        """``nd<ALGORITHM>-<8 hex>``: equal versions give equal fingerprints for equal input."""
        return version_of(self.config)

    def fingerprint(self, text: str, title: str | None = None, explain: int = 0) -> Record:
        """Fingerprint one document; ``explain`` > 0 keeps that many top-weighted features."""
        return self.fingerprint_many([(text, title)], explain)[0]

    def fingerprint_many(self, docs: Sequence[tuple[str, str | None]], explain: int = 0) -> list[Record]:
        """Fingerprint (text, title) pairs: the same records as :meth:`fingerprint` one by one, computed
        stage by stage over the batch, which keeps each stage's tables in the CPU cache: a quarter less time in
        bench/results/throughput.md."""
        return self.records(self.prepare_many(docs), explain)

    def prepare_many(self, docs: Sequence[tuple[str, str | None]], every_factor: bool = False) -> list[Prepared]:
        """The stages before weighting (normalise, segment, content characters, sketch, exact hash) of
        (text, title) pairs. ``every_factor`` keeps what any weight configuration may need (signal-word
        sentences and title words) instead of what this one needs: the evaluation prepares once and
        weighs many ways."""
        wc = self.config.weights
        fold = self.config.fold_script
        signals = wc.signal or every_factor
        with_titles = wc.title or every_factor
        out: list[Prepared] = []
        normalized = [normalize(text, fold) for text, _ in docs]
        segs = [self.segmenter.segment(n, signals=signals) for n in normalized]
        for (_, title), n, g in zip(docs, normalized, segs, strict=True):
            titled = normalize(title, fold) if title else ""
            title_words = frozenset(self.segmenter.segment(titled).words) if title and with_titles else frozenset()
            chars = content_chars(n)
            exact = xxhash.xxh3_64_hexdigest(chars.encode("utf-8"))
            out.append(
                Prepared(g.words, g.signalled, title_words, chars, shingle_sketch(chars), exact, content_chars(titled))
            )
        return out

    def records(self, prepared: Sequence[Prepared], explain: int = 0) -> list[Record]:
        """Weigh and hash prepared documents by this fingerprinter's configuration."""
        wc = self.config.weights
        tag, idf, factors = self.segmenter.tag, self.idf, self._word_factors
        out: list[Record] = []
        for p in prepared:
            w = weigh(p.words, tag, idf, wc, p.title_words, p.signalled, factors)
            top = tuple(sorted(w.items(), key=lambda kv: (-kv[1], kv[0]))[:explain]) if explain else ()
            out.append(self._record(w, p.chars, p.sketch, p.exact, self.version, top, title_chars=p.title_chars))
        return out

    def _record(
        self,
        weights: dict[str, float],
        chars: str,
        sketch: npt.NDArray[np.uint32],
        exact: str,
        version: str,
        top: tuple[tuple[str, float], ...],
        meta: npt.NDArray[np.uint32] | None = None,
        title_chars: str = "",
    ) -> Record:
        """``title_chars``: a text's title's content characters, part of its exact hash if it is too short
        (:func:`short_exact`; a record's exact hash holds all its fields already)."""
        if not chars:  # an exact hash of nothing would make every such text (a title-only item, "……") one cluster
            return Record((), sketch, exact, "empty", version, top, meta)
        if len(chars) < self.config.min_chars or len(weights) < self.config.min_features:
            short = short_exact(chars, title_chars) if title_chars else exact
            return Record((), sketch, short, "too_short", version, top, meta)
        return Record(tuple(simhash(weights, self._seeds)), sketch, exact, "ok", version, top, meta)

    def record_version(self, config: RecordConfig) -> str:
        """The version of records fingerprinted with ``config`` (the field configuration is part of it)."""
        return f"{self.version}-r{xxhash.xxh3_64_hexdigest(config.describe().encode())[:6]}"

    def fingerprint_record(self, record: Mapping[str, Any], config: RecordConfig, explain: int = 0) -> Record:
        """Fingerprint a structured record by its per-field configuration (see :mod:`.records`).

        >>> cfg = RecordConfig.parse({"fields": {"body": {"mode": "text"}, "district": {"mode": "value", "weight": 2},
        ...                                      "tags": {"mode": "set"}}})
        >>> fp = Fingerprinter.default()
        >>> rec = fp.fingerprint_record({"body": "小区门口的垃圾长期无人清理，影响居民出行和环境卫生。",
        ...                              "district": "朝阳区", "tags": ["环境"]}, cfg)
        >>> rec.status, rec.meta is not None, rec.version.startswith(fp.version + "-r")
        ('ok', True, True)
        >>> [fp.fingerprint_record(r, cfg).status for r in ({"body": None}, {"body": "…", "district": "-"})]
        ['empty', 'empty']
        """
        parts = split_record(record, config)
        version = self.record_version(config)
        fold = self.config.fold_script
        meta = meta_signature({name: [normalize(e, fold) for e in elements] for name, elements in parts.sets.items()})
        wc = self.config.weights
        title_words: frozenset[str] = frozenset()
        if wc.title:
            title_words = frozenset(
                w
                for _, text, _, is_title in parts.texts
                if is_title
                for w in self.segmenter.segment(normalize(text, self.config.fold_script)).words
            )
        weights: dict[str, float] = {}
        contents: list[str] = []
        for _, text, field_weight, _ in parts.texts:
            normalized = normalize(text, self.config.fold_script)
            contents.append(content_chars(normalized))
            seg = self.segmenter.segment(normalized, signals=wc.signal)
            for word, w in weigh(
                seg.words, self.segmenter.tag, self.idf, wc, title_words, seg.signalled, self._word_factors
            ).items():
                weights[word] = weights.get(word, 0.0) + w * field_weight
        typical = statistics.median(weights.values()) if weights else 1.0
        for feature, field_weight in parts.values:
            key = normalize(feature, self.config.fold_script)
            weights[key] = weights.get(key, 0.0) + field_weight * typical
            contents.append(content_chars(key))
        parted = _FIELD_SEPARATOR.join(c for c in contents if c)  # "北京" + "上海" is not "北京上" + "海"
        exact = xxhash.xxh3_64_hexdigest(parted.encode("utf-8"))
        sketch = shingle_sketch(parted)
        top = tuple(sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:explain]) if explain else ()
        # no letters or digits, as a text: in the texts' contents, or the values themselves (their features' contents
        # hold their fields' names too)
        if not any(contents[: len(parts.texts)]) and not any(
            content_chars(normalize(v, fold)) for v in parts.value_texts
        ):
            return Record((), sketch, exact, "empty", version, top, meta)
        return self._record(weights, "".join(contents), sketch, exact, version, top, meta)


@cache
def _jieba_idf() -> IdfTable:
    return IdfTable.jieba_default()

"""The fingerprint configuration and the weights' tables: what the Java pipeline is parameterised by.

``fingerprint/config.properties`` holds the default :class:`~neardup.ingest.fingerprint.FingerprintConfig`
(its ``describe()`` text and version too, which the Java side recomputes and checks) and the word-length
factor of every length where it is not exactly 1.0, as Python computes it (``math.exp`` of glibc and Java's
may differ in the last bit). The IDF table is copied from the file Python reads; the word lists are
written as Python parses them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from neardup.ingest.fingerprint import ALGORITHM, FingerprintConfig, version_of
from neardup.ingest.segment import SENTENCE_END, load_word_list
from neardup.ingest.simhash import WEIGHT_UNIT_BITS
from neardup.ingest.weights import jieba_idf_path, length_weight

__all__ = ["export"]

#: word lengths with a tabulated length factor; from here on Python's factor is exactly 1.0 (checked)
_LENGTHS = 64


def _properties(config: FingerprintConfig, version: str) -> list[str]:
    w = config.weights
    lines = [
        f"algorithm={ALGORITHM}",
        f"version={version}",
        f"describe={config.describe()}",
        f"seeds={config.seeds}",
        f"min_chars={config.min_chars}",
        f"min_features={config.min_features}",
        f"fold_script={str(config.fold_script).lower()}",
        f"weight_unit_bits={WEIGHT_UNIT_BITS}",
        f"tf={str(w.tf).lower()}",
        f"idf={str(w.idf).lower()}",
        f"pos={str(w.pos).lower()}",
        f"length={w.length}",
        f"signal={str(w.signal).lower()}",
        f"title={str(w.title).lower()}",
        f"signal_factor={w.signal_factor!r}",
        f"title_factor={w.title_factor!r}",
        "sentence_end=" + "".join(f"\\u{ord(c):04x}" for c in sorted(SENTENCE_END)),
    ]
    lines += [f"pos_weight.{tag}={value!r}" for tag, value in sorted(w.pos_weights.items())]
    lines += [f"length_factor.{n}={length_weight(n, 'normal')!r}" for n in range(0, _LENGTHS + 1)]
    return lines


def export(directory: Path) -> list[Path]:
    config = FingerprintConfig()
    if length_weight(_LENGTHS, "normal") != 1.0:
        raise AssertionError(f"the length factor is not 1.0 at {_LENGTHS}: tabulate further")
    target = directory / "fingerprint"
    target.mkdir(parents=True, exist_ok=True)
    # a properties file is read as ISO-8859-1: every line here is ASCII (non-ASCII is \\u-escaped above)
    text = "".join(line + "\n" for line in _properties(config, version_of(config)))
    out = [target / "config.properties"]
    out[0].write_text(text, encoding="ascii")
    shutil.copyfile(jieba_idf_path(), target / "idf.txt")
    out.append(target / "idf.txt")
    for name in ("stopwords.txt", "signal_words.txt"):  # as Python parses them: one word a line, no blanks
        (target / name).write_text("".join(w + "\n" for w in sorted(load_word_list(name))), encoding="utf-8")
        out.append(target / name)
    return out

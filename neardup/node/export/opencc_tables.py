"""OpenCC's ``t2s`` for the Java port: the conversions of the installed config and their dictionaries.

The Python side folds Traditional to Simplified with ``opencc.OpenCC("t2s")`` (the C++ library's binding,
``include_tofu_risk_dictionaries`` left at its default, true). This module reads the very ``t2s.json`` and
``.ocd2`` files that binding loads and writes under ``directory/opencc/``:

- ``t2s.txt``: the conversions in the order they run, the ``normalization`` pass first, then the
  ``conversion_chain``; one line each, the group's match policy then the names of the dictionaries it
  consults, in order, tab-separated. Lines starting with ``#`` are comments.
- ``<name>.txt`` for every dictionary named there: one entry a line, ``key TAB value TAB value…``, the values
  in the order OpenCC stores them (the first is the one it outputs), the lines sorted by key code points.

An ``.ocd2`` is a header, a MARISA trie of the keys and the serialized values. Rather than reimplementing
MARISA, the tables are decoded by ``opencc_dict``, the dictionary tool shipped inside the same wheel: the
library's own reader of exactly these files. Its text form separates values with spaces, which is
unambiguous because OpenCC's text dictionaries split values on whitespace, so no value can hold one; the
reader still rejects anything it cannot read back exactly.

Only what the Java port implements is accepted (no segmentation, flat groups of ``ocd2`` files); a future
OpenCC whose config needs more fails here, at build time, instead of folding differently.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import opencc

__all__ = ["export"]

CONFIG = "t2s.json"
_OCD2_HEADER = b"OPENCC_MARISA_0.2.5"
_POLICIES = ("short_circuit", "union")


@dataclass(frozen=True)
class _Conversion:
    """One conversion step: the dictionaries it consults, in order, and how a group picks a match."""

    policy: str
    dicts: tuple[str, ...]


def _clib() -> Path:
    return Path(opencc.__file__).parent / "clib"


def _share() -> Path:
    return _clib() / "share" / "opencc"


def _dict_tool() -> Path:
    for name in ("opencc_dict", "opencc_dict.exe"):
        tool = _clib() / "bin" / name
        if tool.is_file():
            return tool
    raise RuntimeError(f"OpenCC's dictionary tool opencc_dict is not in {_clib() / 'bin'}")


def _leaf(doc: dict[str, Any], where: str) -> str:
    """The dictionary name of a leaf ``dict`` entry."""
    if doc.get("type") != "ocd2":
        raise ValueError(f"{CONFIG} {where}: only ocd2 dictionaries are ported, got {doc!r}")
    # OpenCC("t2s") loads tofu-risk dictionaries (include_tofu_risk_dictionaries defaults to true)
    file = doc.get("file")
    if not isinstance(file, str) or not file.endswith(".ocd2") or "/" in file or "\\" in file:
        raise ValueError(f"{CONFIG} {where}: bad dictionary file {file!r}")
    return file.removesuffix(".ocd2")


def _conversion(doc: Any, where: str) -> _Conversion:
    if not isinstance(doc, dict) or not isinstance(doc.get("dict"), dict):
        raise ValueError(f"{CONFIG} {where}: a conversion must be an object with a dict, got {doc!r}")
    spec: dict[str, Any] = doc["dict"]
    if spec.get("type") != "group":
        return _Conversion("short_circuit", (_leaf(spec, where),))
    policy = spec.get("match_policy", "short_circuit")
    if policy not in _POLICIES:
        raise ValueError(f"{CONFIG} {where}: unknown match_policy {policy!r}")
    names: list[str] = []
    for i, child in enumerate(spec.get("dicts", [])):
        if not isinstance(child, dict) or child.get("type") == "group":
            raise ValueError(f"{CONFIG} {where}.dicts[{i}]: nested groups are not ported, got {child!r}")
        names.append(_leaf(child, f"{where}.dicts[{i}]"))
    return _Conversion(policy, tuple(names))


def _conversions() -> list[_Conversion]:
    """The conversions ``OpenCC("t2s").convert`` runs, in order: normalization first, then the chain."""
    config = json.loads((_share() / CONFIG).read_text(encoding="utf-8"))
    if "segmentation" in config:
        raise ValueError(f"{CONFIG}: segmentation is not ported (the chain would run per segment)")
    steps: list[_Conversion] = []
    for section in ("normalization", "conversion_chain"):
        for i, doc in enumerate(config.get(section, [])):
            step = _conversion(doc, f"{section}[{i}]")
            if not step.dicts:
                raise ValueError(f"{CONFIG} {section}[{i}]: a group without dictionaries")
            steps.append(step)
    if not steps:
        raise ValueError(f"{CONFIG}: no conversion found")
    return steps


def _read_ocd2(name: str, scratch: Path) -> dict[str, list[str]]:
    """Every entry of ``<name>.ocd2``, decoded by OpenCC's own ``opencc_dict``."""
    source = _share() / f"{name}.ocd2"
    with open(source, "rb") as handle:
        if handle.read(len(_OCD2_HEADER)) != _OCD2_HEADER:
            raise ValueError(f"{source}: not an OpenCC {_OCD2_HEADER.decode()} dictionary")
    target = scratch / f"{name}.txt"
    proc = subprocess.run(
        [str(_dict_tool()), "-i", str(source), "-o", str(target), "-f", "ocd2", "-t", "text"],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0 or not target.is_file():
        raise RuntimeError(f"opencc_dict could not read {source}: {proc.stderr.strip()[-500:]}")
    entries: dict[str, list[str]] = {}
    raw = target.read_bytes().decode("utf-8")  # strict: a bad byte fails the export
    for number, line in enumerate(raw.split("\n"), start=1):
        if not line:
            continue
        key, tab, rest = line.partition("\t")
        values = rest.split(" ")
        if not tab or not key or "\t" in rest or "" in values or "\r" in line:
            raise ValueError(f"{target}:{number}: cannot read entry {line!r} back exactly")
        if key in entries:
            raise ValueError(f"{target}:{number}: duplicate key {key!r}")
        entries[key] = values
    if not entries:
        raise ValueError(f"{source}: no entries")
    return entries


def export(directory: Path) -> list[Path]:
    """Write ``opencc/t2s.txt`` and one ``opencc/<name>.txt`` per dictionary it names; return the files."""
    out = directory / "opencc"
    out.mkdir(parents=True, exist_ok=True)
    steps = _conversions()
    written: list[Path] = []
    manifest = [
        f"# OpenCC {opencc.__version__} {CONFIG}: the conversions convert() runs, in order (normalization first).",
        "# Each line: the match policy, then the dictionaries consulted in order (files <name>.txt here).",
    ]
    manifest += ["\t".join((step.policy, *step.dicts)) for step in steps]
    with tempfile.TemporaryDirectory(prefix="neardup-opencc-") as tmp:
        for name in sorted({name for step in steps for name in step.dicts}):
            entries = _read_ocd2(name, Path(tmp))
            lines = ["\t".join((key, *entries[key])) for key in sorted(entries)]
            path = out / f"{name}.txt"
            path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
            written.append(path)
    path = out / "t2s.txt"
    path.write_bytes(("\n".join(manifest) + "\n").encode("utf-8"))
    written.append(path)
    return written

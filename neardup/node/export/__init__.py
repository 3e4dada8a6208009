"""The data the Java plugin needs, exported from the very files and tables the Python side reads.

The plugin must give byte-identical fingerprints, so it may not carry its own copy of jieba's dictionary,
OpenCC's tables or the word lists: ``export(directory)`` writes them from the installed packages, and the
Maven build packs that directory into the plugin (``-Dneardup.data.dir``). Each part lives in its own
module; this one only runs them all.
"""

from __future__ import annotations

from pathlib import Path

from . import fingerprint_config, jieba_tables, opencc_tables

__all__ = ["export"]


def export(directory: Path) -> list[Path]:
    """Write every data file under ``directory``; return the files written."""
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for part in (fingerprint_config, jieba_tables, opencc_tables):
        written.extend(part.export(directory))
    return written

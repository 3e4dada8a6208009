"""The packages type-check together, as they are imported (``make typecheck``, tools/typecheck.py).

Checked by folder, mypy would name ``ingest/verify.py`` ``ingest.verify``, find no ``neardup.ingest``
for the code that imports it, and type every import across the packages as ``Any``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tools import typecheck

ROOT = Path(__file__).resolve().parent.parent


def test_the_view_puts_each_file_at_its_import_path(tmp_path: Path) -> None:
    dirs = typecheck.package_dirs(ROOT / "pyproject.toml")
    typecheck.build_view(tmp_path, dirs)
    for inside, real in [
        ("neardup/ingest/verify.py", "ingest/verify.py"),
        ("neardup/mappings/schema.py", "mappings/schema.py"),
        ("neardup/service/__init__.py", "service/__init__.py"),
        ("neardup/es/batch.py", "neardup/es/batch.py"),
        ("neardup/__init__.py", "neardup/__init__.py"),
    ]:
        assert (tmp_path / inside).resolve() == ROOT / real, inside
    assert not (tmp_path / "ingest").exists()  # only at its import path


def test_the_packages_type_check_together() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "typecheck.py")], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success: no issues found" in proc.stdout

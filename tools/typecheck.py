"""Type-check neardup as it is imported: ``make typecheck``.

The repository keeps ``ingest/``, ``mappings/`` and ``service/`` at the top level, and pyproject's
``package-dir`` installs them as ``neardup.ingest``, ``neardup.mappings`` and ``neardup.service``. mypy
names a module after its path, so given the folders it would check ``ingest.verify`` while the code
imports ``neardup.ingest.verify``, find no such module, and (with ``ignore_missing_imports``) type every
import across the packages as ``Any``: each package checked alone, none of the calls between them.

So the check runs on a view of the package as installed: a temporary folder holding ``neardup/`` whose
entries are links to the repository's files, laid out by ``package-dir`` (read from pyproject.toml,
where the mapping is stated once). Paths in mypy's report are given back as repository paths.
Arguments are passed on to mypy.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def package_dirs(pyproject: Path) -> dict[str, str]:
    """``package-dir`` of pyproject.toml: package name -> folder, relative to the repository."""
    setuptools = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["setuptools"]
    dirs: dict[str, str] = setuptools["package-dir"]
    return dirs


def build_view(view: Path, dirs: dict[str, str]) -> None:
    """Under ``view``, each package of ``dirs`` at its import path: a folder of links to the files of its
    own folder, with the packages mapped inside it linked whole."""
    inner = {name: folder for name, folder in dirs.items() if name.count(".") > 0}
    for name, folder in sorted(dirs.items()):
        if name in inner:
            continue
        target = view.joinpath(*name.split("."))
        target.mkdir(parents=True)
        for entry in (ROOT / folder).iterdir():
            if entry.name != "__pycache__":
                (target / entry.name).symlink_to(entry)
        for sub, sub_folder in inner.items():
            parent, _, leaf = sub.rpartition(".")
            if parent == name:
                (target / leaf).symlink_to(ROOT / sub_folder, target_is_directory=True)


def main(argv: list[str]) -> int:
    dirs = package_dirs(ROOT / "pyproject.toml")
    # longest import path first, so neardup/ingest/ is given back as ingest/, not neardup/ingest/
    back = sorted(((name.replace(".", "/") + "/", folder + "/") for name, folder in dirs.items()), reverse=True)
    with tempfile.TemporaryDirectory(prefix="neardup-typecheck-") as tmp:
        view = Path(tmp)
        build_view(view, dirs)
        tops = sorted({name.split(".")[0] for name in dirs})
        command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")]
        command += ["--cache-dir", str(ROOT / ".mypy_cache" / "view")]  # not the cache of a check by folder
        for top in tops:
            command += ["-p", top]
        proc = subprocess.run(command + argv, cwd=view, capture_output=True, text=True)
    for line in (proc.stdout + proc.stderr).splitlines():
        for inside, folder in back:
            if line.startswith(inside):
                line = folder + line[len(inside) :]
                break
        print(line)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

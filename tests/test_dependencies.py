"""Every third-party import is declared in pyproject.toml, so a fresh machine installs it.

The installed code (``neardup``, ``ingest``, ``mappings``, ``service``) may import only what
``[project] dependencies`` names itself (not what happens to come along with another package); tests
and benchmarks may also use the extras. An import inside ``try: … except ImportError`` is optional
and not counted. A distribution is found from the module name through the environment's installed
metadata, which the project's own environment (.venv, made by the Makefile) holds in full.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterator
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
META = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
INSTALLED = ("neardup", "ingest", "mappings", "service")
RELAXED = ("tests", "bench")
#: the repository's own top-level packages: those pyproject names first-party for ruff's import sorting, and
#: pytest's conftest
LOCAL = {*META["tool"]["ruff"]["lint"]["isort"]["known-first-party"], "conftest"}


def _names(requirements: list[str]) -> set[str]:
    return {_canonical(re.split(r"[\s\[<>=!~;]", r.strip(), maxsplit=1)[0]) for r in requirements}


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _third_party_imports(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    optional = {
        id(n)
        for t in ast.walk(tree)
        if isinstance(t, ast.Try)
        and any("ImportError" in ast.unparse(h.type) for h in t.handlers if h.type is not None)
        for stmt in t.body
        for n in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.Import):
            tops = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops = [node.module.split(".")[0]]
        else:
            continue
        for top in tops:
            if top not in sys.stdlib_module_names and top not in LOCAL and top != "__future__":
                yield node.lineno, top


def undeclared(files: list[Path], declared: set[str]) -> list[str]:
    dists = {k: {_canonical(d) for d in v} for k, v in packages_distributions().items()}
    problems = []
    for path in files:
        for line, top in _third_party_imports(path):
            provided = dists.get(top)
            where = f"{path.relative_to(ROOT)}:{line}"
            if provided is None:
                problems.append(f"{where}: imports {top}, which no installed distribution provides")
            elif not provided & declared:
                problems.append(f"{where}: imports {top} ({', '.join(sorted(provided))}), which is not declared")
    return problems


def _files(folders: tuple[str, ...]) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


def test_the_installed_code_imports_only_declared_dependencies() -> None:
    assert undeclared(_files(INSTALLED), _names(META["project"]["dependencies"])) == []


def test_tests_and_benchmarks_import_only_dependencies_or_extras() -> None:
    extras = [r for reqs in META["project"]["optional-dependencies"].values() for r in reqs]
    assert undeclared(_files(RELAXED), _names(META["project"]["dependencies"] + extras)) == []


def test_an_undeclared_import_is_found(tmp_path: Path) -> None:
    probe = ROOT / "tests" / "_probe_undeclared.py"
    probe.write_text("import numpy\nimport pytest\ntry:\n    import yaml\nexcept ImportError:\n    pass\n")
    try:
        found = undeclared([probe], {"numpy"})
    finally:
        probe.unlink()
    assert found == ["tests/_probe_undeclared.py:2: imports pytest (pytest), which is not declared"]

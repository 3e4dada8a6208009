"""The import-layer contract: a module imports only from its own layer or the layers below it; modules
sharing a layer (``a | b``) do not import each other; the pure core and the schema do no I/O and read
no settings; and no import cycle runs through the package.

The packages map to folders as ``[tool.setuptools] package-dir`` says (``neardup.ingest`` is ``ingest/``),
which is why this reads the source itself: import-linter's graph builder walks only ``neardup/`` and
does not see the mapped subpackages. Every import counts, also one inside a function.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tools.typecheck import package_dirs

ROOT = Path(__file__).resolve().parent.parent

#: highest first; within one string, ``|`` separates independent siblings
LAYERS = [
    "neardup.cli",
    "neardup.service | neardup.integrations | neardup.evaluation",
    "neardup.es | neardup.node",
    "neardup.incoming | neardup.recent",
    "neardup.mappings",
    "neardup.ingest",
]
#: what the pure core (and the schema next to the mappings) must never import
PURE = ("neardup.ingest", "neardup.mappings")
IMPURE = (
    "elasticsearch",
    "flask",
    "apiflask",
    "requests",
    "sqlalchemy",
    "gunicorn",
    "click",
    "socket",
    "subprocess",
    "neardup.config",
    "neardup.errors",
)


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    top_level: bool


def package_folders(root: Path) -> dict[str, Path]:
    """Package name → folder, from pyproject's ``package-dir``."""
    return {name: root / folder for name, folder in package_dirs(root / "pyproject.toml").items()}


def modules(dirs: dict[str, Path]) -> dict[str, Path]:
    """Every module name of the installed package → its file (a mapped subfolder counts once, as mapped)."""
    mapped = {folder.resolve() for folder in dirs.values()}
    out: dict[str, Path] = {}
    for package, folder in dirs.items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder)
            if any(p.resolve() in mapped and p.resolve() != folder.resolve() for p in path.parents):
                continue  # e.g. a folder mapped to a package of its own
            parts = [package, *rel.with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def imports_of(name: str, path: Path) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    top = {id(n) for n in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(name, alias.name, node.lineno, id(node) in top)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:  # ``from pkg import module`` imports the module
                yield Import(name, f"{target}.{alias.name}", node.lineno, id(node) in top)


def _layer(module: str) -> tuple[int, str] | None:
    for level, spec in enumerate(LAYERS):
        for sibling in (s.strip() for s in spec.split("|")):
            if module == sibling or module.startswith(sibling + "."):
                return level, sibling
    return None


def _resolve(imported: str, known: dict[str, Path]) -> str:
    """The module an imported name refers to (``a.b.func`` → ``a.b``)."""
    while imported and imported not in known and "." in imported:
        imported = imported.rpartition(".")[0]
    return imported


def violations(root: Path) -> list[str]:
    known = modules(package_folders(root))
    problems: list[str] = []
    graph: dict[str, set[str]] = {m: set() for m in known}
    for name, path in known.items():
        where = path.relative_to(root)
        for imp in imports_of(name, path):
            target = _resolve(imp.imported, known)
            if name.startswith(PURE) and any(target == f or target.startswith(f + ".") for f in IMPURE):
                problems.append(f"{where}:{imp.line}: {name} (pure core) imports {target}")
            if target not in known:
                continue
            if imp.top_level and target != name:
                graph[name].add(target)
            mine, theirs = _layer(name), _layer(target)
            if mine is None or theirs is None:
                continue
            if theirs[0] < mine[0]:
                problems.append(f"{where}:{imp.line}: {name} imports {target}, a higher layer")
            elif theirs[0] == mine[0] and theirs[1] != mine[1]:
                problems.append(f"{where}:{imp.line}: {name} imports {target}, an independent sibling")
    problems += [f"import cycle: {' -> '.join(c)}" for c in _cycles(graph)]
    return problems


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of top-level imports (a package importing its own
    submodules and being imported back by them is how Python packages work, so parents are skipped)."""
    edges = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_tree_keeps_the_layer_contract() -> None:
    assert violations(ROOT) == []


def test_every_layer_names_a_package_that_exists() -> None:
    known = modules(package_folders(ROOT))
    for spec in LAYERS:
        for sibling in (s.strip() for s in spec.split("|")):
            assert sibling in known, sibling


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools]\npackage-dir = { "neardup" = "neardup", "neardup.ingest" = "ingest" }\n', encoding="utf-8"
    )
    for rel, text in {"neardup/__init__.py": "", "ingest/__init__.py": "", **files}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # the core reaching up into Elasticsearch I/O, even lazily inside a function
        (
            {"ingest/cluster.py": "def f():\n    from neardup.es import lookup\n", "neardup/es/__init__.py": ""},
            "neardup.ingest.cluster imports neardup.es, a higher layer",
        ),
        ({"ingest/verify.py": "from elasticsearch import Elasticsearch\n"}, "(pure core) imports elasticsearch"),
        # a relative import resolves to its real module
        (
            {"neardup/es/__init__.py": "", "neardup/es/lookup.py": "from ..cli import main\n", "neardup/cli.py": ""},
            "neardup.es.lookup imports neardup.cli, a higher layer",
        ),
        (
            {"neardup/service/__init__.py": "from neardup.integrations import kibana\n"}
            | {"neardup/integrations/__init__.py": "", "neardup/integrations/kibana.py": ""},
            "an independent sibling",
        ),
        (
            {
                "neardup/es/__init__.py": "",
                "neardup/es/a.py": "from . import b\n",
                "neardup/es/b.py": "from . import a\n",
            },
            "import cycle: neardup.es.a -> neardup.es.b",
        ),
    ],
)
def test_a_violation_is_reported(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    found = violations(_tree(tmp_path, files))
    assert any(expected in v for v in found), found


def test_a_downward_import_is_allowed(tmp_path: Path) -> None:
    files = {"neardup/es/__init__.py": "from neardup.ingest import verify\n", "ingest/verify.py": "import numpy\n"}
    assert violations(_tree(tmp_path, files)) == []

"""Every package of the source folders is installed: pyproject.toml lists its packages one by one (the folders of
``package-dir`` are mapped), and an editable install finds a package missing from that list all the same, so only a
wheel (the Docker image, a user's ``pip install``) would lack it."""

from __future__ import annotations

import tomllib

from tests.test_layers import ROOT, modules, package_folders


def test_every_package_folder_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    found = {name for name, path in modules(package_folders(ROOT)).items() if path.name == "__init__.py"}
    assert found - listed == set(), "packages missing from [tool.setuptools] packages"
    assert listed - found == set(), "[tool.setuptools] packages names folders that are not packages"

from __future__ import annotations

import pytest

from neardup.node.plugin_build import PluginBuild

from .java import plugin_or_skip


@pytest.fixture(scope="session")
def plugin() -> PluginBuild:
    return plugin_or_skip()

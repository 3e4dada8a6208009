"""The line protocol the parity tests rely on carries any text both ways unchanged."""

from __future__ import annotations

from neardup.node.plugin_build import PluginBuild

from .java import run_main


def test_any_text_goes_through_java_and_back(plugin: PluginBuild) -> None:
    texts = ["", 'a"b\\c', "新闻\n报道\t", "\x00\x1f\x7f\x85", "😀 e\u0301 \U00020000", "ｆｕｌｌ　ｗｉｄｔｈ"]
    assert run_main(plugin, "io.neardup.parity.Echo", texts) == texts

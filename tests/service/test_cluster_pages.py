"""One cluster's members a page at a time (``size``, ``from``), the canonical leading the first, every page with its
distances to the canonical; texts cut to ``text_chars`` (or left out), with their whole length."""

from __future__ import annotations

import re
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from flask.testing import FlaskClient

from tests.indices import remove_indices

pytestmark = pytest.mark.es

BASE = (
    "北京今天召开新闻发布会，介绍冬奥会筹备工作进展情况，场馆建设已经全部完成，志愿者培训也已开始，"
    "交通保障和医疗服务方案已经确定，各项测试赛将在下个月陆续举行。"
)
ENDINGS = ["记者报道。", "本报讯。", "新华社电。", "特此通知。", "完。", "供稿。", "编辑整理。"]


@pytest.fixture
def clustered(api: FlaskClient, index_name: str) -> str:
    docs = [{"id": f"m{k}", "title": f"标题{k}", "text": BASE + end} for k, end in enumerate(ENDINGS)]
    resp = api.post(f"/v1/indices/{index_name}/documents?refresh=wait_for", json=docs)
    assert resp.status_code == 200 and {i["cluster"] for i in resp.json["items"]} == {"m0"}, resp.json
    return index_name


def _page(api: FlaskClient, index: str, **query: Any) -> dict[str, Any]:
    resp = api.get(f"/v1/indices/{index}/clusters/m0", query_string=query)
    assert resp.status_code == 200, resp.json
    return resp.json  # type: ignore[no-any-return]


def test_pages_of_a_cluster_hold_every_member_once_canonical_first(api: FlaskClient, clustered: str) -> None:
    pages = [_page(api, clustered, size=3, **{"from": start}) for start in (0, 3, 6)]
    ids = [m["id"] for p in pages for m in p["members"]]
    assert sorted(ids) == sorted(f"m{k}" for k in range(len(ENDINGS))) and len(ids) == len(set(ids))
    assert [len(p["members"]) for p in pages] == [3, 3, 1] and {p["size"] for p in pages} == {len(ENDINGS)}
    assert ids[0] == "m0" and pages[0]["members"][0]["canonical"]
    assert ids == [m["id"] for m in _page(api, clustered)["members"]]  # the pages in the one-page order
    later = [m for p in pages[1:] for m in p["members"]]
    assert all(isinstance(m["distance_to_canonical"], int) for m in later)  # the canonical read for later pages
    assert _page(api, clustered, size=3, **{"from": 9})["members"] == []


def test_texts_are_cut_or_left_out(api: FlaskClient, clustered: str) -> None:
    whole = {m["id"]: m for m in _page(api, clustered)["members"]}
    cut = _page(api, clustered, text_chars=5)["members"]
    assert all(m["text"] == whole[m["id"]]["text"][:5] for m in cut)
    assert all(m["text_length"] == len(whole[m["id"]]["text"]) for m in cut)
    none = _page(api, clustered, text_chars=0)["members"]
    assert all(m["text"] is None and m["title"] == whole[m["id"]]["title"] for m in none)


@pytest.mark.parametrize(
    "query", [{"size": 0}, {"size": 1001}, {"from": 9990, "size": 20}, {"from": -1}, {"text_chars": -1}]
)
def test_a_page_outside_the_limits_is_a_400(api: FlaskClient, clustered: str, query: dict[str, Any]) -> None:
    resp = api.get(f"/v1/indices/{clustered}/clusters/m0", query_string=query)
    assert resp.status_code == 400, resp.json


def test_later_pages_through_an_alias_of_several_indices(api: FlaskClient, es: Elasticsearch, clustered: str) -> None:
    """A rollover alias: the canonical, not on a later page, is read through the alias for the distances."""
    other = f"{clustered}-other"
    api.put(f"/v1/indices/{other}")
    try:
        es.indices.update_aliases(
            actions=[
                {"add": {"index": clustered, "alias": f"{clustered}-all"}},
                {"add": {"index": other, "alias": f"{clustered}-all"}},
            ]
        )
        later = _page(api, f"{clustered}-all", size=3, **{"from": 3})["members"]
        assert len(later) == 3 and all(isinstance(m["distance_to_canonical"], int) for m in later)
    finally:
        remove_indices(es, other)


def test_the_cluster_page_marks_differences_in_words_and_its_documents_language(
    api: FlaskClient, clustered: str
) -> None:
    """Added and removed passages differ by more than colour: an underline, a strike, and words read out."""
    page = api.get(f"/clusters/m0?index={clustered}").get_data(as_text=True)
    assert '<del class="diff"><span class="visually-hidden" lang="en">removed: </span>' in page
    assert '<ins class="diff"><span class="visually-hidden" lang="en">added: </span>' in page
    assert page.count('<div class="col" lang="zh">') == 2 * (len(ENDINGS) - 1)
    assert '<strong lang="zh">标题0</strong>' in page and '<html lang="en">' in page
    with api.get("/ui/static/app.css") as resp:
        css = re.sub(r"/\*.*?\*/", "", resp.get_data(as_text=True), flags=re.S)
    rules = {k.strip(): v for k, v in re.findall(r"([^{}]+)\{([^}]*)\}", css)}
    assert "text-decoration" not in rules["ins.diff"] and "text-decoration" not in rules["del.diff"]
    assert "clip" in rules[".visually-hidden"] and "position: absolute" in rules[".visually-hidden"]


def test_a_cluster_whose_canonical_is_gone_says_so(api: FlaskClient, es: Elasticsearch, clustered: str) -> None:
    """With the canonical document deleted, the page says so and names the member the others are compared with."""
    es.delete(index=clustered, id="m0", refresh=True)
    page = api.get(f"/clusters/m0?index={clustered}").get_data(as_text=True)
    assert "Canonical:" not in page
    assert "The canonical document, m0, is missing" in page
    first = _page(api, clustered)["members"][0]["id"]
    assert f'compared with the earliest member left,\n<strong lang="zh">标题{first[1:]}</strong> ({first})' in page
    assert page.count('class="member"') == len(ENDINGS) - 2
    for k in range(1, len(ENDINGS)):
        if f"m{k}" != first:
            es.delete(index=clustered, id=f"m{k}", refresh=True)
    alone = api.get(f"/clusters/m0?index={clustered}").get_data(as_text=True)
    assert "only its canonical document" not in alone and "The canonical document, m0, is missing" in alone

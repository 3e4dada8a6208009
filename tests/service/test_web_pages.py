"""The web page's HTML through Flask's test client against the real Elasticsearch (no browser: what the page
prints, escapes and refuses). ``test_web.py`` drives the same pages in Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser

import pytest
from elasticsearch import Elasticsearch, helpers
from flask.testing import FlaskClient

from neardup.integrations.kibana import load_objects, saved_objects_path
from neardup.service import create_app
from neardup.service.web import COMPARED

pytestmark = pytest.mark.es

TEXT = "国务院今天召开常务会议，部署进一步推动经济稳定增长的措施，会议指出要扩大内需。"
SCRIPT = "<img src=x onerror=alert(1)>"


@pytest.fixture
def api(es_url: str) -> FlaskClient:
    return create_app({"es_url": es_url}).test_client()


@pytest.fixture
def big(es: Elasticsearch, index_name: str, api: FlaskClient) -> Iterator[str]:
    """An index of 10,050 documents written directly (neardup fields as a dedupe leaves them): 10,000 clusters of
    one and one cluster "big" of 50 (the document "big" and 49 duplicates), more than a search counts by default."""
    assert api.put(f"/v1/indices/{index_name}").status_code == 200

    def doc(k: int, cluster: str, duplicate: bool) -> dict[str, object]:
        nd = {"cluster": cluster, "is_duplicate": duplicate, "indexed_at": f"2026-11-27T10:00:{k % 60:02d}.{k:09d}Z"}
        return {
            "_index": index_name,
            "_id": cluster if not duplicate else f"{cluster}-{k}",
            "title": f"标题{k}",
            "text": f"{TEXT}第{k}篇。",
            "neardup": nd,
        }

    actions = [doc(k, f"c{k}", False) for k in range(10_000)] + [doc(10_000, "big", False)]
    actions += [doc(10_000 + k, "big", True) for k in range(1, 50)]
    helpers.bulk(es, actions, refresh=True)
    yield index_name


def test_highlighted_text_is_escaped_in_the_page_and_the_api(api: FlaskClient, index_name: str) -> None:
    posted = api.post(f"/v1/indices/{index_name}/documents?refresh=wait_for", json={"id": "x", "text": SCRIPT + TEXT})
    assert posted.status_code == 200, posted.json
    page = api.get(f"/?index={index_name}&q=国务院").get_data(as_text=True)
    assert "<em>" in page and "&lt;img src=x" in page and SCRIPT not in page
    fragments = api.get(f"/v1/indices/{index_name}/search?q=国务院").json["hits"][0]["highlight"]["text"]
    assert "&lt;img" in fragments[0] and SCRIPT not in fragments[0]


def test_a_text_that_is_no_string_is_shown_as_none(api: FlaskClient, es: Elasticsearch, index_name: str) -> None:
    """A user's own index may hold an object where neardup reads a text."""
    es.indices.create(index=index_name, mappings={"properties": {"text": {"properties": {"en": {"type": "text"}}}}})
    assert api.put(f"/v1/indices/{index_name}").status_code == 200
    es.index(index=index_name, id="a", document={"title": "标题", "text": {"en": "english text"}}, refresh=True)
    found = api.get(f"/v1/indices/{index_name}/search")  # every document
    assert found.status_code == 200, found.get_data(as_text=True)[:300]
    assert found.json["hits"][0]["text"] == "" and found.json["hits"][0]["title"] == "标题"
    assert api.get(f"/?index={index_name}").status_code == 200


def test_counts_past_ten_thousand_and_the_last_page(api: FlaskClient, big: str) -> None:
    listed = api.get(f"/v1/indices/{big}/clusters").json
    assert listed["documents"] == 10_050 and listed["duplicates"] == 49, listed
    overview = api.get(f"/overview?index={big}").get_data(as_text=True)
    assert '<span id="doc-count">10050</span>' in overview and '<span id="dup-count">49</span>' in overview
    last = api.get(f"/?index={big}&page=500").get_data(as_text=True)
    assert "page 500 of 500" in last and "next →" not in last


def test_a_large_cluster_compares_its_first_members_and_lists_the_others(api: FlaskClient, big: str) -> None:
    page = api.get(f"/clusters/big?index={big}").get_data(as_text=True)
    assert page.count('class="member"') == COMPARED
    assert f"{49 - COMPARED} more members, not compared here" in page


def test_a_page_of_a_missing_index_is_a_page_that_lets_you_pick_another(api: FlaskClient) -> None:
    resp = api.get("/?index=no-such-index-here")
    assert resp.status_code == 404 and resp.mimetype == "text/html"
    page = resp.get_data(as_text=True)
    assert "no-such-index-here" in page and 'name="index"' in page
    assert api.get("/v1/indices/no-such-index-here/search").json["error"]["type"] == "index_not_found"


@pytest.mark.parametrize("path", ["/", "/clusters", "/clusters/x", "/overview"])
def test_an_elasticsearch_outage_is_a_page_too(path: str) -> None:
    """Like the page's other refusals: the API's 503 type and message in the error heading, and the index box."""
    down = create_app({"es_url": "http://127.0.0.1:9", "es_retries": 0}).test_client()
    resp = down.get(f"{path}?index=news")
    assert resp.status_code == 503 and resp.mimetype == "text/html", resp.get_data(as_text=True)[:300]
    page = resp.get_data(as_text=True)
    assert '<h1 class="error" data-type="elasticsearch_unavailable">Elasticsearch is unreachable; retry later</h1>' in (
        page
    )
    assert 'name="index" value="news"' in page
    assert down.get("/v1/indices/news/search").json["error"]["type"] == "elasticsearch_unavailable"


class _Tags(HTMLParser):
    """Every start tag of a page with its attributes, and the text inside each element that has an id."""

    VOID = frozenset({"input", "img", "br", "meta", "link", "rect", "hr", "col"})

    def __init__(self, page: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: dict[str, str] = {}
        self._open: list[tuple[str, str | None]] = []
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        self.tags.append((tag, found))
        self.handle_data(" ")  # a tag parts words (table cells)
        if tag not in self.VOID:
            self._open.append((tag, found.get("id")))
            if "id" in found:
                self.text[found["id"]] = ""

    def handle_endtag(self, tag: str) -> None:
        while self._open and self._open.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        for _, name in self._open:
            if name is not None:
                self.text[name] += data

    def find(self, tag: str, **attrs: str) -> list[dict[str, str]]:
        return [a for t, a in self.tags if t == tag and all(a.get(k.rstrip("_")) == v for k, v in attrs.items())]


SINGLES = [
    "上海港集装箱吞吐量连续十二年位居世界第一，港口自动化码头建设取得明显成效，航运服务能力不断提升。",
    "云南西双版纳热带植物园发现多种珍稀兰花新品种，科研人员正在开展保护和人工繁育研究工作。",
    "全国中小学今年秋季学期将全面推行课后服务，各地教育部门正在制定具体实施方案和经费保障办法。",
]


@pytest.fixture
def small(api: FlaskClient, index_name: str) -> str:
    """Five documents: "a" and its copy "a2" (one cluster of two), and three clusters of one."""
    docs = [{"id": "a", "title": "标题甲", "text": TEXT}, {"id": "a2", "title": "标题乙", "text": TEXT}]
    docs += [{"id": f"s{k}", "title": f"单篇{k}", "text": t} for k, t in enumerate(SINGLES)]
    resp = api.post(f"/v1/indices/{index_name}/documents?refresh=wait_for", json=docs)
    assert resp.status_code == 200, resp.json
    assert [i["cluster"] for i in resp.json["items"]] == ["a", "a", "s0", "s1", "s2"], resp.json
    return index_name


@pytest.mark.parametrize(
    ("path", "action"),
    [
        ("/", "/"),
        ("/clusters", "/clusters"),
        ("/clusters/a", "/clusters"),
        ("/clusters/nope", "/clusters"),
        ("/overview", "/overview"),
    ],
)
def test_the_index_box_goes_to_its_sections_list_page(api: FlaskClient, small: str, path: str, action: str) -> None:
    """The index box goes to the section's list page: another index has no cluster of this page's id."""
    resp = api.get(path, query_string={"index": small})
    assert resp.status_code == (404 if path.endswith("nope") else 200)
    (box,) = _Tags(resp.get_data(as_text=True)).find("form", class_="index")
    assert box["action"] == action and box["method"] == "get"
    (missing,) = _Tags(api.get(path, query_string={"index": "no-such-index-here"}).get_data(as_text=True)).find(
        "form", class_="index"
    )
    assert missing["action"] == action


def test_a_page_past_the_last_shows_the_last(api: FlaskClient, index_name: str) -> None:
    """A page past the last shows the last page and says so; the API still answers an empty page there."""
    docs = [{"id": f"d{k}", "title": f"标题{k}", "text": f"{TEXT}第{k}篇。"} for k in range(25)]
    assert api.post(f"/v1/indices/{index_name}/documents?refresh=wait_for", json=docs).status_code == 200
    page = api.get(f"/?index={index_name}&page=7").get_data(as_text=True)
    assert page.count('class="hit"') == 5 and "page 2 of 2" in page and "page 7 of" not in page
    assert "← previous" in page and "next →" not in page and "no page 7" in page
    hidden = api.get(f"/?index={index_name}&hide=1&page=7").get_data(as_text=True)
    assert 'class="hit"' in hidden and "no page 7" in hidden
    assert api.get(f"/v1/indices/{index_name}/search?from=140&size=20").json["hits"] == []


def test_the_search_page_names_its_controls_and_marks_its_languages(api: FlaskClient, small: str) -> None:
    tags = _Tags(api.get(f"/?index={small}&hide=1").get_data(as_text=True))
    assert tags.find("html")[0]["lang"] == "en"  # the page's own words; the documents' are marked zh
    (box,) = tags.find("input", id="q")
    labels = tags.find("label", for_="q")
    assert box.get("aria-label") or labels, "the search box has no label"
    assert tags.find("span", class_="title") and all(t["lang"] == "zh" for t in tags.find("span", class_="title"))
    assert all(t["lang"] == "zh" for t in tags.find("div", class_="snippet"))
    (expand,) = tags.find("button", class_="expand")
    assert expand["aria-expanded"] == "false"
    (controlled,) = tags.find("ul", id=expand["aria-controls"])
    assert controlled["class"] == "similar" and "hidden" in controlled
    # the switch reloads the page when changed: it says so beforehand (WCAG 3.2.2), and a button submits too
    (switch,) = tags.find("input", id="hide")
    assert "submit" in tags.text[switch["aria-describedby"]]
    assert tags.find("button", type="submit")


def test_the_overview_charts_say_their_values_in_words(api: FlaskClient, small: str) -> None:
    page = api.get(f"/overview?index={small}").get_data(as_text=True)
    tags = _Tags(page)
    (share,) = [a for t, a in tags.tags if t == "svg" and "share" in a.get("aria-label", "")]
    assert "1 of 5 documents" in share["aria-label"] and "20.0%" in share["aria-label"]
    for chart in ("sizes", "timeline"):
        (table,) = tags.find("table", id=f"{chart}-values")
        assert "visually-hidden" in table["class"]
    assert " ".join(tags.text["sizes-values"].split()) == "Clusters per size members clusters 1 3 2 1"
    assert "documents" in tags.text["timeline-values"] and "5" in tags.text["timeline-values"]
    # every unique document is a cluster of its own: the 4 clusters are not 4 groups of duplicates
    assert '<span id="cluster-count">4</span>' in page and '<span id="duplicate-clusters">1</span>' in page
    assert "cluster of one" in page and "largest" not in page
    listed = api.get(f"/clusters?index={small}").get_data(as_text=True)
    assert "4 clusters" in listed and "cluster of one" in listed


def test_the_size_chart_of_a_large_index_says_what_it_leaves_out(api: FlaskClient, big: str) -> None:
    """The chart counts the 10,000 largest clusters of the 10,001 (the biggest and 9,999 clusters of one)."""
    page = api.get(f"/overview?index={big}").get_data(as_text=True)
    tags = _Tags(page)
    assert "the 10,000 largest clusters only" in " ".join(tags.text["sizes-note"].split())
    assert '<span id="duplicate-clusters">1</span>' in page


def test_the_kibana_dashboard_opens_on_a_wide_time_range() -> None:
    """The dashboard keeps its own time range (any index pattern it is imported for): Kibana's default, the last 15
    minutes of neardup.indexed_at, would show empty panels for documents indexed before."""
    for pattern in (None, "news-*"):
        (dashboard,) = [o for o in load_objects(saved_objects_path(), pattern) if o["type"] == "dashboard"]
        attrs = dashboard["attributes"]
        assert (attrs["timeRestore"], attrs["timeFrom"], attrs["timeTo"]) == (True, "now-5y", "now")
        assert attrs["refreshInterval"] == {"pause": True, "value": 60000}

"""The web page in headless Chromium (Debian's ``chromium``, driven by Playwright) against the service
on a real HTTP port and the real Elasticsearch. Screenshots go to ``test-artifacts/screenshots/``."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from werkzeug.serving import make_server

from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.sets import news_set
from neardup.service import create_app

pytestmark = pytest.mark.es

CHROMIUM = os.environ.get("NEARDUP_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
INDEX = "test-web-news"

if CHROMIUM is None:
    pytest.skip(
        "no Chromium: install Debian's chromium (.ci/run does) or set NEARDUP_CHROMIUM", allow_module_level=True
    )


@pytest.fixture(scope="module")
def base_url(es_url: str, es: Elasticsearch) -> Iterator[str]:
    app = create_app({"es_url": es_url, "ui_index": INDEX})
    es.indices.delete(index=INDEX, ignore_unavailable=True)
    docs = news_set(load_peoples_daily(), seed=5, groups=12, singles=20)
    body = "\n".join(json.dumps({"id": d.id, "title": d.title, "text": d.text}, ensure_ascii=False) for d in docs)
    resp = app.test_client().post(f"/v1/indices/{INDEX}/documents", data=body, content_type="application/x-ndjson")
    assert resp.status_code == 200 and not resp.json["errors"]
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    es.indices.delete(index=INDEX, ignore_unavailable=True)


@pytest.fixture(scope="module")
def page(base_url: str) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        pg = browser.new_page(viewport={"width": 1280, "height": 900})
        yield pg
        browser.close()


def _cluster_sizes(es: Elasticsearch) -> dict[str, int]:
    es.indices.refresh(index=INDEX)
    resp = es.search(index=INDEX, size=0, aggs={"c": {"terms": {"field": "neardup.cluster", "size": 1000}}})
    return {b["key"]: b["doc_count"] for b in resp["aggregations"]["c"]["buckets"]}


def test_search_switch_off_shows_every_hit_with_its_cluster(page: object, base_url: str, es: Elasticsearch) -> None:
    sizes = _cluster_sizes(es)
    pg = page  # type: ignore[assignment]
    pg.goto(f"{base_url}/")  # type: ignore[attr-defined]
    hits = pg.locator("li.hit")  # type: ignore[attr-defined]
    total_docs = sum(sizes.values())
    assert pg.locator("#total").inner_text() == f"{total_docs} documents"  # type: ignore[attr-defined]
    assert hits.count() == min(20, total_docs)
    for k in range(hits.count()):
        assert hits.nth(k).get_attribute("data-cluster") in sizes
        assert hits.nth(k).locator("a.badge").count() == 1
    pg.screenshot(path=str(SHOTS / "search-all.png"), full_page=True)  # type: ignore[attr-defined]


def test_search_switch_on_hides_duplicates_and_expands_them(page: object, base_url: str, es: Elasticsearch) -> None:
    sizes = _cluster_sizes(es)
    pg = page  # type: ignore[assignment]
    pg.goto(f"{base_url}/")  # type: ignore[attr-defined]
    pg.check("#hide")  # type: ignore[attr-defined]  # submits the form
    pg.wait_for_url("**hide=1**")  # type: ignore[attr-defined]
    assert pg.locator("#total").inner_text() == f"{len(sizes)} results, near duplicates hidden"  # type: ignore[attr-defined]
    hits = pg.locator("li.hit")  # type: ignore[attr-defined]
    seen = set()
    for k in range(hits.count()):
        hit = hits.nth(k)
        cluster = hit.get_attribute("data-cluster")
        assert cluster not in seen
        seen.add(cluster)
        hidden = int(hit.get_attribute("data-hidden"))
        assert hidden == sizes[cluster] - 1
        if hidden:
            assert hit.locator("button.expand").inner_text() == f"{hidden} similar hidden"
    grouped = pg.locator("li.hit[data-hidden]:not([data-hidden='0'])").first  # type: ignore[attr-defined]
    grouped.locator("button.expand").click()
    items = grouped.locator("li.similar-item")
    items.first.wait_for()
    assert items.count() == int(grouped.get_attribute("data-hidden"))
    pg.screenshot(path=str(SHOTS / "search-hidden-expanded.png"), full_page=True)  # type: ignore[attr-defined]


def _is_search(url: str) -> bool:
    return "/v1/indices/" in url and "/search" in url


def test_a_second_click_while_the_similar_load_lists_them_once(page: object, base_url: str) -> None:
    """A click while the list loads asks nothing more: one search, each member listed once."""
    from playwright.sync_api import expect

    pg = page  # type: ignore[assignment]
    pg.goto(f"{base_url}/?hide=1")  # type: ignore[attr-defined]
    grouped = pg.locator("li.hit[data-hidden]:not([data-hidden='0'])").first  # type: ignore[attr-defined]
    button, listed = grouped.locator("button.expand"), grouped.locator("ul.similar")
    held: list[Any] = []

    def hold(route: Any) -> None:  # answered when the test says
        held.append(route)

    pg.route(_is_search, hold)  # type: ignore[attr-defined]
    try:
        button.click()
        button.click()
        pg.wait_for_timeout(500)  # type: ignore[attr-defined]
        assert len(held) == 1, f"{len(held)} searches for one list"
        assert listed.get_attribute("id") == button.get_attribute("aria-controls")
        assert listed.get_attribute("aria-busy") == "true" and button.get_attribute("aria-expanded") == "false"
        held.pop().continue_()
        expect(listed).to_be_visible()
        expect(listed).not_to_have_attribute("aria-busy", "true")
        items = grouped.locator("li.similar-item")
        assert items.count() == int(grouped.get_attribute("data-hidden"))
        assert items.first.locator("[lang=zh]").count() == 1  # the title, in the documents' language
        assert button.get_attribute("aria-expanded") == "true"
        button.click()
        expect(listed).to_be_hidden()
        assert button.get_attribute("aria-expanded") == "false"
    finally:
        for route in held:
            route.continue_()
        pg.unroute(_is_search)  # type: ignore[attr-defined]


def test_a_failed_search_for_the_similar_says_so(page: object, base_url: str) -> None:
    """An answer that is no JSON (a proxy's error page), or none at all, is shown as an error under the hit."""
    from playwright.sync_api import expect

    pg = page  # type: ignore[assignment]
    pg.goto(f"{base_url}/?hide=1")  # type: ignore[attr-defined]
    grouped = pg.locator("li.hit[data-hidden]:not([data-hidden='0'])").first  # type: ignore[attr-defined]
    button, listed = grouped.locator("button.expand"), grouped.locator("ul.similar")
    error, items = listed.locator("li.similar-error"), listed.locator("li.similar-item")

    def proxy_error(route: Any) -> None:
        route.fulfill(status=502, content_type="text/html", body="<html><h1>502 Bad Gateway</h1></html>")

    for answer, said in ((proxy_error, "(502)"), (lambda route: route.abort(), "no answer")):
        pg.route(_is_search, answer)  # type: ignore[attr-defined]
        try:
            button.click()
            expect(error).to_be_visible(timeout=5_000)
            assert "the search failed" in error.inner_text() and said in error.inner_text()
            assert items.count() == 0 and button.get_attribute("aria-expanded") == "true"
        finally:
            pg.unroute(_is_search)  # type: ignore[attr-defined]
        button.click()  # closes the list
        expect(listed).to_be_hidden()
    button.click()  # not marked loaded: asks again
    expect(items.first).to_be_visible()
    assert items.count() == int(grouped.get_attribute("data-hidden")) and error.count() == 0


def test_cluster_page_highlights_differences(page: object, base_url: str, es: Elasticsearch) -> None:
    sizes = _cluster_sizes(es)
    biggest = max(sizes, key=lambda c: (sizes[c], c))
    pg = page  # type: ignore[assignment]
    pg.goto(f"{base_url}/clusters")  # type: ignore[attr-defined]
    first = pg.locator("#clusters tbody tr").first  # type: ignore[attr-defined]
    assert int(first.locator("td.size").inner_text()) == sizes[biggest]
    first.locator("a").click()
    pg.wait_for_url("**/clusters/**")  # type: ignore[attr-defined]
    members = pg.locator("section.member")  # type: ignore[attr-defined]
    assert members.count() == sizes[biggest] - 1
    assert pg.locator("ins.diff, del.diff").count() > 0  # type: ignore[attr-defined]
    for k in range(members.count()):
        assert members.nth(k).locator(".distance").inner_text().isdigit()
    pg.screenshot(path=str(SHOTS / "cluster.png"), full_page=True)  # type: ignore[attr-defined]


def test_overview_charts_show_the_index_numbers(page: object, base_url: str, es: Elasticsearch) -> None:
    sizes = _cluster_sizes(es)
    pg = page  # type: ignore[assignment]
    pg.goto(f"{base_url}/overview")  # type: ignore[attr-defined]
    assert int(pg.locator("#doc-count").inner_text()) == sum(sizes.values())  # type: ignore[attr-defined]
    assert int(pg.locator("#cluster-count").inner_text()) == len(sizes)  # type: ignore[attr-defined]
    assert int(pg.locator("#dup-count").inner_text()) == sum(sizes.values()) - len(sizes)  # type: ignore[attr-defined]
    bars = pg.locator("#sizes g.bar")  # type: ignore[attr-defined]
    shown = {
        int(bars.nth(k).get_attribute("data-size")): int(bars.nth(k).get_attribute("data-clusters"))
        for k in range(bars.count())
    }
    expected: dict[int, int] = {}
    for n in sizes.values():
        expected[n] = expected.get(n, 0) + 1
    assert shown == expected
    t = pg.locator("#timeline g.tbar")  # type: ignore[attr-defined]
    assert sum(int(t.nth(k).get_attribute("data-documents")) for k in range(t.count())) == sum(sizes.values())
    pg.screenshot(path=str(SHOTS / "overview.png"), full_page=True)  # type: ignore[attr-defined]


def test_the_docs_page_renders_every_endpoint_with_the_internet_cut_off(page: object, base_url: str) -> None:
    pg = page  # type: ignore[assignment]
    elsewhere: list[str] = []

    def local_only(route: Any) -> None:
        if route.request.url.startswith(base_url):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    pg.route("**/*", local_only)  # type: ignore[attr-defined]
    try:
        pg.goto(f"{base_url}/docs")  # type: ignore[attr-defined]
        pg.wait_for_selector(".opblock", timeout=15_000)  # type: ignore[attr-defined]
        operations = pg.locator(".opblock").count()  # type: ignore[attr-defined]
    finally:
        pg.unroute("**/*")  # type: ignore[attr-defined]
    assert not elsewhere, elsewhere
    paths = create_app({"es_url": base_url}).test_client().get("/openapi.json").json["paths"]
    assert operations == sum(len(ops) for ops in paths.values())

"""The reading side of an index of records (a field configuration): search, the clusters and the pages read and
show the configured fields, where a text document has its ``title`` and ``text``."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from neardup.evaluation.record_sets import template_text

pytestmark = pytest.mark.es

CONFIG = {
    "fields": {
        "subject": {"mode": "text", "title": True},
        "complaint": {"mode": "text"},
        "district": {"mode": "value"},
        "tags": {"mode": "set"},
        "office": {"mode": "ignore"},
    }
}


@pytest.fixture
def records(api: FlaskClient, index_name: str) -> str:
    noise = template_text("夜间施工噪音", "工地每晚十一点后仍在施工，噪音严重影响居民休息")
    road = template_text("道路破损", "人民路路面多处塌陷，车辆通行困难")
    rows = [
        {"id": "n1", "subject": "施工噪音", "complaint": noise, "district": 5, "tags": ["环境", "夜间"]},
        {"id": "n2", "subject": "施工噪音", "complaint": noise.replace("严重", "极大"), "district": 5, "tags": "环境"},
        {"id": "r1", "subject": "道路破损", "complaint": road, "district": 3, "tags": ["交通"], "office": "已转办"},
    ]
    assert api.put(f"/v1/indices/{index_name}", json=CONFIG).status_code == 200
    posted = api.post(f"/v1/indices/{index_name}/documents?refresh=true", json=rows)
    assert posted.status_code == 200, posted.json
    assert {i["id"]: i["cluster"] for i in posted.json["items"]} == {"n1": "n1", "n2": "n1", "r1": "r1"}
    return index_name


def test_a_search_finds_records_by_their_fields_and_shows_them(api: FlaskClient, records: str) -> None:
    found = api.get(f"/v1/indices/{records}/search?q=塌陷").json
    assert [h["id"] for h in found["hits"]] == ["r1"] and found["total"] == 1  # a word of the complaint
    hit = found["hits"][0]
    assert hit["title"] == "道路破损" and "complaint: " in hit["text"] and "district: 3" in hit["text"]
    assert any("<em>" in fragment for fragment in hit["highlight"]["complaint"])
    hidden = api.get(f"/v1/indices/{records}/search?q=噪音&hide_duplicates=true").json
    assert [(h["id"], h["duplicates_hidden"]) for h in hidden["hits"]] == [("n1", 1)]
    # a number matches the number fields; a word is not compared with them (and does not fail the search)
    assert {h["id"] for h in api.get(f"/v1/indices/{records}/search?q=5").json["hits"]} == {"n1", "n2"}
    assert api.get(f"/v1/indices/{records}/search?q=夜间施工").json["total"] == 2
    # a field set to "ignore" (a notice every row holds) is neither searched nor shown
    assert api.get(f"/v1/indices/{records}/search?q=转办").json["total"] == 0
    assert all("office" not in h["text"] for h in api.get(f"/v1/indices/{records}/search").json["hits"])


def test_the_clusters_and_their_pages_show_the_records_fields(api: FlaskClient, records: str) -> None:
    listed = api.get(f"/v1/indices/{records}/clusters").json["clusters"]
    assert listed == [{"cluster": "n1", "size": 2, "title": "施工噪音"}]
    members = api.get(f"/v1/indices/{records}/clusters/n1").json["members"]
    assert [m["id"] for m in members] == ["n1", "n2"]
    assert all(m["title"] == "施工噪音" and "tags: 环境" in m["text"] for m in members)
    assert members[0]["text_length"] == len(members[0]["text"])
    page = api.get(f"/clusters/n1?index={records}").get_data(as_text=True)
    assert "district: 5" in page and "极大" in page  # the member's fields, side by side with the canonical's
    search_page = api.get(f"/?index={records}&q=塌陷").get_data(as_text=True)
    assert "道路破损" in search_page and "<em>塌</em>" in search_page

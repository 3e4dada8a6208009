"""Kibana saved objects (structure, fields, the numbers each panel's search returns from the real
Elasticsearch), their import command, and the Docker files (structure only: no engine needed)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from elasticsearch import Elasticsearch, helpers
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from neardup import mappings
from neardup.integrations.kibana import (
    DATA_VIEW_ID,
    KibanaError,
    import_objects,
    load_objects,
    panel_requests,
    saved_objects_path,
)
from neardup.service import create_app

ROOT = Path(__file__).resolve().parents[2]
OBJECTS = saved_objects_path()


def _fields_in(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            if k in {"field", "%timefield%", "timeFieldName"} and isinstance(v, str):
                yield v
            yield from _fields_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from _fields_in(v)


def _mapped_fields() -> set[str]:
    user = mappings.index_template("x")["template"]["mappings"]["properties"]
    return {f"neardup.{name}" for name in mappings.neardup_fields()} | set(user)


def test_saved_objects_parse_and_references_resolve() -> None:
    objects = load_objects(OBJECTS)
    ids = {(o["type"], o["id"]) for o in objects}
    assert len(ids) == len(objects)
    assert ("index-pattern", DATA_VIEW_ID) in ids and ("dashboard", "neardup-duplicate-clusters") in ids
    for obj in objects:
        for ref in obj["references"]:
            assert (ref["type"], ref["id"]) in ids, ref
    dashboard = next(o for o in objects if o["type"] == "dashboard")
    assert dashboard["attributes"]["title"] == "Duplicate clusters"
    names = {r["name"] for r in dashboard["references"]}
    panels = json.loads(dashboard["attributes"]["panelsJSON"])
    assert len(panels) == 4 and {p["panelRefName"] for p in panels} == names
    for obj in objects:  # the embedded JSON strings parse too
        attrs = obj["attributes"]
        for key in ("visState", "uiStateJSON", "panelsJSON", "optionsJSON"):
            if key in attrs:
                json.loads(attrs[key])
        if "kibanaSavedObjectMeta" in attrs:
            source = json.loads(attrs["kibanaSavedObjectMeta"]["searchSourceJSON"])
            if "indexRefName" in source:
                assert source["indexRefName"] in {r["name"] for r in obj["references"]}


def test_every_field_the_objects_use_is_in_our_mappings() -> None:
    objects = load_objects(OBJECTS)
    used = set(_fields_in([o["attributes"] for o in objects if o["type"] == "index-pattern"]))
    for obj in objects:
        if obj["type"] == "visualization":
            state = json.loads(obj["attributes"]["visState"])
            used |= set(_fields_in(state["aggs"]))
            if state["type"] == "vega":
                used |= set(_fields_in(json.loads(state["params"]["spec"])["data"]["url"]))  # the ES side
    assert used and used <= _mapped_fields(), used - _mapped_fields()
    assert "neardup.indexed_at" in used and "neardup.cluster" in used


@pytest.fixture(scope="module")
def known_index(es_url: str, es: Elasticsearch) -> Iterator[tuple[str, dict[str, int]]]:
    """Clusters of sizes 4, 3, 3, 2 and 5 singletons, ingested through the service."""
    index = "test-kibana-known"
    es.indices.delete(index=index, ignore_unavailable=True)
    base = [
        "国务院今天召开常务会议，部署进一步推动经济稳定增长的措施，会议强调要扩大国内需求。",
        "北京市今年将新建保障性住房五万套，重点解决中低收入家庭的住房困难问题，资金已经落实。",
        "我国科学家在量子通信领域取得重大突破，实现了千公里级的星地双向量子纠缠分发实验。",
        "春节前夕，铁路部门增开临时旅客列车三百余列，全力保障广大旅客平安有序回家过年。",
    ]
    singles = [
        "长江流域今年降水偏多，水利部门提前部署防汛抗洪工作，加强堤防巡查和水库调度管理。",
        "全国粮食总产量再创新高，农业农村部表示将继续稳定种植面积，提高粮食单产水平和质量。",
        "国家统计局发布数据，上月居民消费价格指数同比上涨百分之二，食品价格涨幅有所回落。",
        "教育部印发通知，要求各地中小学切实减轻学生课业负担，保证学生每天一小时体育活动。",
        "文化和旅游部统计，国庆假期全国国内旅游出游人次和旅游收入均比去年同期明显增长。",
    ]
    docs = []
    for g, (text, copies) in enumerate(zip(base, (4, 3, 3, 2), strict=True)):
        for c in range(copies):
            docs.append({"id": f"g{g}-{c}", "title": f"标题{g}", "text": text + "。" * c})
    docs += [{"id": f"s{k}", "title": f"单篇{k}", "text": t} for k, t in enumerate(singles)]
    resp = create_app({"es_url": es_url}).test_client().post(f"/v1/indices/{index}/documents", json=docs)
    assert resp.status_code == 200 and not resp.json["errors"]
    clusters = {i["id"]: i["cluster"] for i in resp.json["items"]}
    sizes: dict[str, int] = {}
    for c in clusters.values():
        sizes[c] = sizes.get(c, 0) + 1
    assert sorted(sizes.values(), reverse=True) == [4, 3, 3, 2, 1, 1, 1, 1, 1]
    es.indices.refresh(index=index)
    yield index, sizes
    es.indices.delete(index=index, ignore_unavailable=True)


@pytest.mark.es
def test_each_panel_search_returns_the_expected_numbers(
    es: Elasticsearch, known_index: tuple[str, dict[str, int]]
) -> None:
    index, sizes = known_index
    shipped = [o["id"] for o in load_objects(OBJECTS)]
    # the ids of objects loaded for a pattern are the shipped ones, followed by the pattern's suffix
    requests = {
        next(s for s in shipped if vid.startswith(f"{s}-")): r
        for vid, r in panel_requests(load_objects(OBJECTS, index_pattern=index)).items()
    }
    assert set(requests) == {
        "neardup-largest-clusters",
        "neardup-duplicates-over-time",
        "neardup-cluster-sizes",
        "neardup-duplicate-ratio",
    }
    run = {vid: es.search(index=r.index, **r.body) for vid, r in requests.items()}
    assert all(r.index == index for r in requests.values())

    table = run["neardup-largest-clusters"]["aggregations"]["2"]["buckets"]
    assert [(b["key"], b["doc_count"]) for b in table[:4]] == sorted(
        ((c, n) for c, n in sizes.items() if n > 1), key=lambda cn: (-cn[1], cn[0])
    )
    assert len(table) == len(sizes) == 9

    over_time = run["neardup-duplicates-over-time"]["aggregations"]["2"]["buckets"]
    per_flag: dict[str, int] = {}
    for bucket in over_time:
        for sub in bucket["3"]["buckets"]:
            per_flag[sub["key_as_string"]] = per_flag.get(sub["key_as_string"], 0) + sub["doc_count"]
    assert per_flag == {"true": 8, "false": 9}

    sizes_answer = run["neardup-cluster-sizes"]  # what the Vega spec draws from (run by Vega in a test below)
    grouped = sizes_answer["aggregations"]["grouped"]
    assert sorted(b["doc_count"] for b in grouped["buckets"]) == [2, 3, 3, 4]
    singles = sizes_answer["hits"]["total"]["value"] - sizes_answer["aggregations"]["grouped_documents"]["value"]
    assert singles == 5

    ratio = run["neardup-duplicate-ratio"]
    assert ratio["aggregations"]["duplicates"]["doc_count"] / ratio["hits"]["total"]["value"] == pytest.approx(8 / 17)


class _FakeKibana:
    """A stand-in for Kibana's import endpoint (no Kibana runs here); records what it received. With ``answer``
    (a body and its content type) it answers that with a 200 instead, as something else at Kibana's URL would."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.answer: tuple[str, str] | None = None
        self.received: list[dict[str, Any]] = []

    def __call__(self, environ: Any, start_response: Any) -> Any:
        request = Request(environ)
        upload = request.files["file"].read().decode("utf-8")
        request.close()
        self.received.append(
            {
                "path": request.path,
                "args": dict(request.args),
                "headers": dict(request.headers),
                "objects": [json.loads(line) for line in upload.splitlines() if line],
            }
        )
        if self.answer is not None:
            return Response(self.answer[0], content_type=self.answer[1])(environ, start_response)
        n = len(self.received[-1]["objects"])
        body = {"success": True, "successCount": n} if self.status == 200 else {"message": "bad"}
        return Response(json.dumps(body), status=self.status, content_type="application/json")(environ, start_response)


@pytest.fixture
def fake_kibana() -> Iterator[tuple[str, _FakeKibana]]:
    app = _FakeKibana()
    server = make_server("127.0.0.1", 0, app)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", app
    server.shutdown()


def _kibana_import(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "neardup", "kibana", "import", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_import_command_posts_the_objects(fake_kibana: tuple[str, _FakeKibana]) -> None:
    url, kibana = fake_kibana
    env = os.environ | {"NEARDUP_KIBANA_URL": url}
    res = _kibana_import("--index-pattern", "news-*", env=env)
    assert res.returncode == 0, res.stderr
    assert "imported 6 saved objects" in res.stdout
    got = kibana.received[0]
    assert got["path"] == "/api/saved_objects/_import" and got["args"] == {"overwrite": "true"}
    assert got["headers"].get("Kbn-Xsrf")
    view = next(o for o in got["objects"] if o["type"] == "index-pattern")
    assert view["attributes"]["title"] == "news-*"
    assert "Authorization" not in got["headers"]
    # another pattern, as a user of Kibana's security: a second dashboard beside the first, not in its place
    as_user = env | {"NEARDUP_ES_USERNAME": "elastic", "NEARDUP_ES_PASSWORD": "秘密"}
    second = _kibana_import("--index-pattern", "blogs", env=as_user)
    assert second.returncode == 0, second.stderr
    again = kibana.received[1]
    assert again["headers"]["Authorization"] == "Basic " + base64.b64encode("elastic:秘密".encode()).decode()
    first_ids = {o["id"] for o in got["objects"]}
    second_ids = {o["id"] for o in again["objects"]}
    assert len(first_ids) == len(second_ids) == 6 and not first_ids & second_ids
    for sent, ids in ((got, first_ids), (again, second_ids)):
        assert all(r["id"] in ids for o in sent["objects"] for r in o.get("references", []))
    dashboards = [o["attributes"]["title"] for o in again["objects"] if o["type"] == "dashboard"]
    assert dashboards == ["Duplicate clusters · blogs"]
    import_objects(url, load_objects(OBJECTS), api_key="a2V5")
    assert kibana.received[2]["headers"]["Authorization"] == "ApiKey a2V5"
    kibana.status = 400
    with pytest.raises(KibanaError):
        import_objects(url, load_objects(OBJECTS))
    down = _kibana_import("--kibana-url", "http://127.0.0.1:9")
    assert down.returncode == 1 and "unreachable" in down.stderr


@pytest.mark.parametrize(
    ("body", "content_type", "shown"),
    [
        ("<html><body>Sign in</body></html>", "text/html", "text/html, '<html><body>Sign in</body></html>'"),
        ("[1, 2]", "application/json", "application/json, '[1, 2]'"),
        ('{"successCount": 6}', "application/json", "application/json, '{\"successCount\": 6}'"),
    ],
    ids=["login-page", "json-list", "json-without-success"],
)
def test_import_command_says_when_the_answer_is_not_kibanas(
    fake_kibana: tuple[str, _FakeKibana], body: str, content_type: str, shown: str
) -> None:
    url, kibana = fake_kibana
    kibana.answer = (body, content_type)
    res = _kibana_import("--kibana-url", url)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert f"{url} did not answer as Kibana's import API does: 200, {shown}" in res.stderr


def test_import_command_needs_the_urls_scheme() -> None:
    res = _kibana_import("--kibana-url", "localhost:5601")
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert "the Kibana URL 'localhost:5601' needs a scheme: http://localhost:5601" in res.stderr
    assert "unreachable" not in res.stderr


def _kibana_export(tmp_path: Path) -> Path:
    """A file as Kibana's own export writes it: a data view saved before data views had a ``name``, a Vega
    panel, a dashboard also showing a visualization the export left out, and the closing summary line."""
    spec = {"data": {"url": {"index": "logs-*", "body": {"size": 0}}}, "mark": "bar"}
    objects = [
        {"type": "index-pattern", "id": "logs", "attributes": {"title": "logs-*", "timeFieldName": "@timestamp"}},
        {
            "type": "visualization",
            "id": "vega-1",
            "attributes": {
                "title": "V",
                "visState": json.dumps({"type": "vega", "params": {"spec": json.dumps(spec)}}),
            },
            "references": [],
        },
        {
            "type": "dashboard",
            "id": "dash",
            "attributes": {"title": "Logs"},
            "references": [
                {"name": "panel_0", "type": "visualization", "id": "vega-1"},
                {"name": "panel_1", "type": "visualization", "id": "elsewhere"},
            ],
        },
        {"excludedObjects": [], "excludedObjectsCount": 0, "exportedCount": 3, "missingRefCount": 1},
    ]
    path = tmp_path / "export.ndjson"
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


def test_load_objects_reads_kibanas_own_export(tmp_path: Path, fake_kibana: tuple[str, _FakeKibana]) -> None:
    path = _kibana_export(tmp_path)
    assert [o["id"] for o in load_objects(path)] == ["logs", "vega-1", "dash"]
    view, vega, dashboard = load_objects(path, index_pattern="x*")
    assert view["attributes"]["title"] == "x*" and view["attributes"]["name"] == "logs-* · x*"
    spec = json.loads(json.loads(vega["attributes"]["visState"])["params"]["spec"])
    assert spec["data"]["url"]["index"] == "x*"
    assert dashboard["attributes"]["title"] == "Logs · x*"
    refs = {r["name"]: r["id"] for r in dashboard["references"]}
    assert refs == {"panel_0": vega["id"], "panel_1": "elsewhere"} and vega["id"] != "vega-1"
    url, kibana = fake_kibana
    res = _kibana_import("--kibana-url", url, "--file", str(path), "--index-pattern", "x*")
    assert res.returncode == 0, res.stderr
    assert [o["id"] for o in kibana.received[0]["objects"]] == [o["id"] for o in (view, vega, dashboard)]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("<html>", "not JSON (Expecting value, column 1)"),
        ("[1, 2]", "not a Kibana saved object (a list, not an object)"),
        ('{"type": "dashboard", "attributes": {}}', 'not a Kibana saved object (no "id" string)'),
        ('{"type": "dashboard", "id": "d"}', 'not a Kibana saved object (no "attributes" object)'),
    ],
)
def test_a_file_of_no_saved_objects_is_refused_naming_its_line(tmp_path: Path, line: str, says: str) -> None:
    path = tmp_path / "objects.ndjson"
    good = json.dumps({"type": "dashboard", "id": "d", "attributes": {"title": "D"}})
    path.write_text(f"{good}\n\n{line}\n", encoding="utf-8")
    for pattern in ((), ("--index-pattern", "x*")):
        res = _kibana_import("--kibana-url", "http://127.0.0.1:9", "--file", str(path), *pattern)
        assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
        assert f"{path}:3: {says}" in res.stderr


def test_compose_file_structure() -> None:
    compose = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text(encoding="utf-8"))
    services = compose["services"]
    assert {"elasticsearch", "kibana", "neardup", "kibana-setup", "demo-data"} <= set(services)
    for name in ("elasticsearch", "kibana", "neardup"):
        check = services[name]["healthcheck"]
        assert check["test"] and check["interval"] and check["retries"]
    ports = {name: {p.split(":")[-1] for p in s.get("ports", [])} for name, s in services.items()}
    assert ports["elasticsearch"] == {"9200"} and ports["kibana"] == {"5601"} and ports["neardup"] == {"8000"}
    for name in ("kibana", "neardup", "kibana-setup", "demo-data"):
        for dep in services[name]["depends_on"].values():
            assert dep["condition"] == "service_healthy"
    assert services["kibana"]["depends_on"].keys() == {"elasticsearch"}
    assert "esdata" in compose["volumes"]
    assert any(v.startswith("esdata:") for v in services["elasticsearch"]["volumes"])
    assert services["neardup"]["build"]["dockerfile"] == "docker/Dockerfile"
    setup_cmd = services["kibana-setup"]["command"]
    assert setup_cmd[:3] == ["neardup", "kibana", "import"]
    es_image = services["elasticsearch"]["image"]
    from neardup.node import ES_VERSION

    assert es_image.endswith(":" + ES_VERSION) and services["kibana"]["image"].endswith(":" + ES_VERSION)
    # Elasticsearch's image is built with the plugin, which installs only into the version it was built for
    assert services["elasticsearch"]["build"]["args"]["ES_VERSION"] == ES_VERSION
    es_dockerfile = (ROOT / services["elasticsearch"]["build"]["dockerfile"]).read_text(encoding="utf-8")
    assert f"ARG ES_VERSION={ES_VERSION}\n" in es_dockerfile and "elasticsearch:${ES_VERSION}" in es_dockerfile
    assert "elasticsearch-plugin install" in es_dockerfile
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text(encoding="utf-8")
    assert "HEALTHCHECK" in dockerfile and '"neardup", "serve"' in dockerfile
    # the image installs neardup, and the objects with it (package data): the command needs no --file
    assert "--file" not in setup_cmd and OBJECTS.parent == ROOT / "neardup" / "integrations"
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    shipped = package_data["package-data"]["neardup.integrations"]
    assert OBJECTS.name == "neardup-dashboard.ndjson" and any(OBJECTS.match(pattern) for pattern in shipped)


VEGA_LITE = "5.23.0"


@pytest.fixture(scope="module")
def vega_lite() -> Path:
    """vega-lite from the npm registry, installed once under $NEARDUP_HOME/npm."""
    import shutil

    from neardup.config import Settings

    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("Node.js and npm are needed to compile the Vega-Lite specs")
    prefix = Settings.from_env().home / "npm" / f"vega-lite-{VEGA_LITE}"
    module = prefix / "node_modules" / "vega-lite"
    if not module.exists():
        proc = subprocess.run(
            [npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(prefix), f"vega-lite@{VEGA_LITE}"],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if proc.returncode != 0:
            pytest.skip(f"npm could not install vega-lite: {proc.stderr.strip()[-200:]}")
    return module


def test_vega_panels_compile_with_vega_lite(vega_lite: Path) -> None:
    """Kibana's Vega panels are Vega-Lite specs; each compiles (its Elasticsearch url swapped for
    sample rows shaped like the response, as Kibana would feed them)."""
    samples = {
        "neardup-cluster-sizes": [
            {
                "aggregations": {
                    "grouped": {"doc_count_error_upper_bound": 0, "buckets": [{"key": "a", "doc_count": 3}]},
                    "grouped_documents": {"value": 3},
                },
                "hits": {"total": {"value": 5}},
            }
        ],
        "neardup-duplicate-ratio": [
            {"aggregations": {"duplicates": {"doc_count": 2}}, "hits": {"total": {"value": 5}}}
        ],
    }
    specs = {}
    for obj in load_objects(OBJECTS):
        if obj["type"] == "visualization":
            state = json.loads(obj["attributes"]["visState"])
            if state["type"] == "vega":
                spec = json.loads(state["params"]["spec"])
                spec["data"] = {"values": samples[obj["id"]]}
                specs[obj["id"]] = spec
    assert set(specs) == set(samples)
    script = (
        "const vl = require(process.argv[1]); const specs = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "for (const [id, spec] of Object.entries(specs)) { const out = vl.compile(spec);"
        " if (!out.spec || !out.spec.marks || !out.spec.marks.length) throw new Error(id + ': no marks'); }"
        "console.log('ok ' + Object.keys(specs).length);"
    )
    proc = subprocess.run(
        ["node", "-e", script, str(vega_lite)],
        input=json.dumps(specs),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok 2"


#: Runs a Vega-Lite spec in Vega, as Kibana does, on the answer its url got, and prints what it draws: the data
#: of each bar and the text of each text mark.
_DRAW = """
const [vlPath, vegaPath] = process.argv.slice(1);
const vl = require(vlPath), vega = require(vegaPath);
const {spec, answer} = JSON.parse(require('fs').readFileSync(0, 'utf8'));
spec.data = {values: answer, format: spec.data.format};
const view = new vega.View(vega.parse(vl.compile(spec).spec), {renderer: 'none'});
view.runAsync().then(() => {
  const bars = [], texts = [];
  (function walk(group) {
    for (const mark of group.items || []) {
      for (const item of mark.items || []) {
        if (mark.marktype === 'rect' && mark.role === 'mark') bars.push(item.datum);
        if (mark.marktype === 'text' && mark.role === 'mark') texts.push(item.text);
      }
      walk(mark);
    }
  })(view.scenegraph().root);
  console.log(JSON.stringify({bars, texts}));
});
"""


def _drawn_sizes(vega_lite: Path, es: Elasticsearch, index: str) -> tuple[dict[int, int], list[str]]:
    """The size panel over ``index``: clusters per size as its bars show them, and the texts it writes."""
    objects = load_objects(OBJECTS, index_pattern=index)
    panel = next(o for o in objects if o["id"].startswith("neardup-cluster-sizes-"))
    request = panel_requests(objects)[panel["id"]]
    answer = es.search(index=request.index, **request.body).body
    spec = json.loads(json.loads(panel["attributes"]["visState"])["params"]["spec"])
    proc = subprocess.run(
        ["node", "-e", _DRAW, str(vega_lite), str(vega_lite.parent / "vega")],
        input=json.dumps({"spec": spec, "answer": answer}),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    drawn = json.loads(proc.stdout)
    x, y = spec["encoding"]["x"]["field"], spec["encoding"]["y"]["field"]
    bars = {int(bar[x]): int(bar[y]) for bar in drawn["bars"]}
    assert len(bars) == len(drawn["bars"])
    return bars, drawn["texts"]


def _write_clusters(es_url: str, es: Elasticsearch, index: str, sizes: dict[int, int]) -> None:
    """An index made by the service holding ``sizes[n]`` clusters of ``n`` documents each, written directly
    (neardup fields as a dedupe leaves them)."""
    es.indices.delete(index=index, ignore_unavailable=True)
    assert create_app({"es_url": es_url}).test_client().put(f"/v1/indices/{index}").status_code == 200
    actions = (
        {
            "_index": index,
            "_id": f"{n}-{c}-{k}",
            "neardup": {"cluster": f"{n}-{c}", "is_duplicate": k > 0, "indexed_at": "2026-01-01T00:00:00Z"},
        }
        for n, count in sizes.items()
        for c in range(count)
        for k in range(n)
    )
    helpers.bulk(es, actions, refresh=True, chunk_size=5000)


@pytest.mark.es
def test_the_size_panel_counts_every_cluster_past_ten_thousand(vega_lite: Path, es_url: str, es: Elasticsearch) -> None:
    """11,956 clusters (most of them of one): each is counted. Past 10,000 clusters of two or more the panel
    draws the largest 10,000 and says so."""
    index = "test-kibana-sizes"
    try:
        _write_clusters(es_url, es, index, {100: 1, 2: 6, 1: 11_950})
        assert _drawn_sizes(vega_lite, es, index) == ({100: 1, 2: 6, 1: 11_950}, [])
        _write_clusters(es_url, es, index, {3: 2, 2: 10_000, 1: 5})
        bars, texts = _drawn_sizes(vega_lite, es, index)
        assert bars == {3: 2, 2: 9_998}
        assert texts == [
            "Not every cluster could be counted (over 10,000 clusters of two or more, or an index of several shards "
            "holding many clusters): the chart shows the largest clusters of two or more it counted, and no clusters "
            "of one."
        ]
    finally:
        es.indices.delete(index=index, ignore_unavailable=True)

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
from elasticsearch import Elasticsearch
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

    buckets = run["neardup-cluster-sizes"]["aggregations"]["clusters"]["buckets"]
    distribution: dict[int, int] = {}
    for b in buckets:  # the Vega spec's transform: clusters counted per doc_count
        distribution[b["doc_count"]] = distribution.get(b["doc_count"], 0) + 1
    assert distribution == {4: 1, 3: 2, 2: 1, 1: 5}

    ratio = run["neardup-duplicate-ratio"]
    assert ratio["aggregations"]["duplicates"]["doc_count"] / ratio["hits"]["total"]["value"] == pytest.approx(8 / 17)


class _FakeKibana:
    """A stand-in for Kibana's import endpoint (no Kibana runs here); records what it received."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
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
        "neardup-cluster-sizes": [{"key": "a", "doc_count": 3}, {"key": "b", "doc_count": 1}],
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

"""``neardup index / dedupe / reconcile / serve`` as a user runs them (subprocesses, real Elasticsearch)."""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch, helpers

from neardup.es.client import JOBS_INDEX, setup_index, write_record_config
from neardup.es.jobs import start_job
from neardup.es.pipeline import nodes_without_processor
from neardup.evaluation.corpus import load_peoples_daily
from tests.es.holding_proxy import TIMEOUT, holding_proxy
from tests.indices import remove_indices

pytestmark = pytest.mark.es


def _run(*args: str, es_url: str, **env_vars: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"NEARDUP_ES_URL": es_url} | env_vars
    return subprocess.run(
        [sys.executable, "-m", "neardup", *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    arts = load_peoples_daily()[:20]
    path = tmp_path_factory.mktemp("cli") / "docs.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for k, a in enumerate(arts):
            out.write(json.dumps({"id": f"o{k}", "title": a.title, "text": a.text, "section": "news"}) + "\n")
        for k, a in enumerate(arts[:5]):  # reprints: a source line added, last paragraph dropped
            text = "来源：人民日报\n" + "\n".join(a.paragraphs[:-1] if len(a.paragraphs) > 2 else a.paragraphs)
            out.write(json.dumps({"id": f"r{k}", "title": a.title, "text": text}) + "\n")
    return path


def test_index_flags_reprints_and_keeps_other_fields(
    corpus_file: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    res = _run("index", index_name, str(corpus_file), es_url=es_url)
    assert res.returncode == 0, res.stderr
    assert "indexed 25 documents" in res.stderr and "5 flagged as near-duplicates" in res.stderr
    es.indices.refresh(index=index_name)
    for k in range(5):
        doc = es.get(index=index_name, id=f"r{k}")["_source"]
        assert doc["neardup"]["duplicate_of"] == f"o{k}" and doc["neardup"]["cluster"] == f"o{k}"
    assert es.get(index=index_name, id="o0")["_source"]["section"] == "news"


def test_index_says_what_got_no_answer_and_that_running_it_again_writes_it(
    corpus_file: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """The batch's write carried out, its answer held past the client's timeout: each document is named as maybe
    written, the command exits 1 and says to run it again, which writes them all (by id, the same documents)."""
    with holding_proxy(es_url, hold=1) as proxy:
        res = _run(
            "index",
            index_name,
            str(corpus_file),
            es_url=proxy.url,
            NEARDUP_ES_TIMEOUT=str(TIMEOUT),
            NEARDUP_ES_RETRIES="0",
        )
    assert res.returncode == 1, res.stderr
    assert "no answer came from Elasticsearch" in res.stderr and "25 failed" in res.stderr
    assert "25 of the failed documents got no answer and may be written or not: run the same command" in res.stderr
    again = _run("index", index_name, str(corpus_file), es_url=es_url)
    assert again.returncode == 0 and "indexed 25 documents" in again.stderr, again.stderr
    assert es.count(index=index_name)["count"] == 25


def test_index_with_a_bad_line_writes_nothing(tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "一二三四五六七八九十"}\n{"id": "b", "text": 5}\n', encoding="utf-8")
    res = _run("index", index_name, str(bad), es_url=es_url)
    assert res.returncode == 2 and "line 2" in res.stderr and "Traceback" not in res.stderr
    assert "use --skip-invalid to skip such lines" in res.stderr
    assert not es.indices.exists(index=index_name)


def test_index_names_a_line_that_is_not_utf8_and_skips_it_when_asked(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    lines = tmp_path / "mixed.jsonl"
    latin1 = b'{"id": "b", "text": "caf\xe9"}\n'
    lines.write_bytes('\ufeff{"id": "a", "text": "一二三四五六七八九十"}\n'.encode() + latin1)
    refused = _run("index", index_name, str(lines), es_url=es_url)
    assert refused.returncode == 2 and "line 2: not UTF-8" in refused.stderr, refused.stderr
    assert not es.indices.exists(index=index_name)
    res = _run("index", index_name, str(lines), "--skip-invalid", es_url=es_url)
    assert res.returncode == 0 and "skipped line 2: not UTF-8" in res.stderr, res.stderr
    assert es.get(index=index_name, id="a")["found"]


def test_index_refuses_an_index_of_records(corpus_file: Path, es_url: str, es: Elasticsearch, index_name: str) -> None:
    setup_index(es, index_name)
    write_record_config(es, index_name, {"fields": {"complaint": {"mode": "text"}}})
    res = _run("index", index_name, str(corpus_file), es_url=es_url)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert "field configuration" in res.stderr and "neardup import" in res.stderr
    assert es.count(index=index_name)["count"] == 0


def test_index_takes_the_candidate_settings(corpus_file: Path, es_url: str, index_name: str) -> None:
    """NEARDUP_MIN_SHARED as the service takes it: few reprints share all 64 of their source's block tokens (all 5
    are flagged with the default, above)."""
    res = _run("index", index_name, str(corpus_file), es_url=es_url, NEARDUP_MIN_SHARED="64")
    assert res.returncode == 0, res.stderr
    flagged = re.search(r"indexed 25 documents into \S+: (\d+) flagged as near-duplicates", res.stderr)
    assert flagged is not None and int(flagged.group(1)) < 5, res.stderr


def test_index_skips_bad_lines_when_asked_and_never_drops_a_field(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """Read from ``content``, the text is stored as ``text``: a line that has a ``text`` field too would lose it."""
    text = load_peoples_daily()[0].text
    lines = tmp_path / "content.jsonl"
    rows = [
        {"id": "a", "content": text, "lang": "zh"},
        {"id": "b", "content": text + "。", "text": "the user's own text field"},
        {"id": "c", "content": 5},
    ]
    lines.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    refused = _run("index", index_name, str(lines), "--text-field", "content", es_url=es_url)
    assert refused.returncode == 2 and "line 2: field 'text' would be replaced" in refused.stderr, refused.stderr
    assert not es.indices.exists(index=index_name)

    res = _run("index", index_name, str(lines), "--text-field", "content", "--skip-invalid", es_url=es_url)
    assert res.returncode == 0, res.stderr
    assert "skipped line 2: field 'text' would be replaced" in res.stderr
    assert "skipped line 3: field 'content' must be a string" in res.stderr
    assert "indexed 1 documents" in res.stderr and "2 bad lines skipped" in res.stderr
    assert es.get(index=index_name, id="a")["_source"]["text"] == text
    assert not es.exists(index=index_name, id="b")


def test_dedupe_then_reconcile_on_a_plain_index(
    corpus_file: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    lines = [json.loads(x) for x in corpus_file.read_text(encoding="utf-8").splitlines()]
    helpers.bulk(es, ({"_index": index_name, "_id": d.pop("id"), **d} for d in lines), refresh=True)
    res = _run("dedupe", index_name, "--workers", "2", es_url=es_url)
    assert res.returncode == 0, res.stderr
    assert "fingerprinted=25" in res.stdout and "clusters=20" in res.stdout
    again = _run("reconcile", index_name, es_url=es_url)
    assert again.returncode == 0 and "changed=0" in again.stdout
    assert es.get(index=index_name, id="r3")["_source"]["neardup"]["cluster"] == "o3"


def test_dedupe_names_the_first_record_its_field_configuration_refuses(
    es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """Refused records are counted, and the first is named with the reason, so the user can find the rows."""
    setup_index(es, index_name)
    write_record_config(es, index_name, {"fields": {"complaint": {"mode": "text"}, "category": {"mode": "value"}}})
    texts = [a.text for a in load_peoples_daily()[:3]]
    rows = {"a": {"complaint": texts[0]}, "b": {"complaint": texts[1]}, "bad": {"complaint": 5, "category": "x"}}
    helpers.bulk(es, ({"_index": index_name, "_id": i, **r} for i, r in rows.items()), refresh=True)
    res = _run("dedupe", index_name, es_url=es_url)
    assert res.returncode == 0, res.stderr
    assert "fingerprinted=2" in res.stdout and "refused_records=1" in res.stdout, res.stdout
    assert "first_refused_record" not in res.stdout
    assert (
        "neardup: 1 record was refused by the field configuration, e.g. 'bad': field 'complaint': text must be a "
        "string, got int; left out, neither fingerprinted nor clustered" in res.stderr
    ), res.stderr


def test_dedupe_can_fingerprint_with_the_clusters_processor(
    corpus_file: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    if nodes_without_processor(es):
        pytest.skip("this cluster has no neardup plugin")
    lines = [json.loads(x) for x in corpus_file.read_text(encoding="utf-8").splitlines()]
    helpers.bulk(es, ({"_index": index_name, "_id": d.pop("id"), **d} for d in lines), refresh=True)
    res = _run("dedupe", index_name, "--fingerprint-in-es", es_url=es_url)
    assert res.returncode == 0, res.stderr
    assert "fingerprinted=25 fingerprinted_by=elasticsearch" in res.stdout and "clusters=20" in res.stdout
    assert es.get(index=index_name, id="r3")["_source"]["neardup"]["cluster"] == "o3"
    # the setting is the default, the flag wins over it (the report says who would fingerprint; nothing is left
    # to fingerprint, so these runs show the choice, not the work)
    env_default = _run("dedupe", index_name, es_url=es_url, NEARDUP_FINGERPRINT_IN_ES="true")
    assert "fingerprinted=0 fingerprinted_by=elasticsearch" in env_default.stdout, env_default.stderr
    flag_wins = _run("dedupe", index_name, "--fingerprint-here", es_url=es_url, NEARDUP_FINGERPRINT_IN_ES="true")
    assert "fingerprinted=0 fingerprinted_by=python" in flag_wins.stdout, flag_wins.stderr


def test_batch_commands_report_missing_index_and_unreachable_es(es_url: str) -> None:
    res = _run("reconcile", "no-such-index-xyz", es_url=es_url)
    assert res.returncode == 2 and "no index" in res.stderr
    if "@" not in es_url:  # a node without security ignores them: credentials in the URL are never shown
        scheme, rest = es_url.split("://", 1)
        with_password = _run("reconcile", "no-such-index-xyz", es_url=f"{scheme}://someone:s3cret@{rest}")
        assert with_password.returncode == 2 and "no index" in with_password.stderr, with_password.stderr
        assert "s3cret" not in with_password.stderr
    down = _run("dedupe", "anything", es_url="http://127.0.0.1:9")
    assert down.returncode == 1 and "unreachable" in down.stderr and "Traceback" not in down.stderr


@pytest.mark.parametrize("command", ["index", "setup", "dedupe", "reconcile"])
def test_commands_refuse_neardups_own_indices(corpus_file: Path, es_url: str, es: Elasticsearch, command: str) -> None:
    before = es.count(index=JOBS_INDEX)["count"] if es.indices.exists(index=JOBS_INDEX) else 0
    args = [str(corpus_file)] if command == "index" else []
    res = _run(command, JOBS_INDEX, *args, es_url=es_url)
    assert res.returncode == 2 and "is internal to neardup or Elasticsearch" in res.stderr, res.stderr
    if es.indices.exists(index=JOBS_INDEX):
        assert es.count(index=JOBS_INDEX)["count"] == before
        pipelines = es.indices.get_settings(index=JOBS_INDEX, name="index.default_pipeline")
        assert not any(s.get("settings") for s in pipelines.values()), pipelines


def test_commands_refuse_an_alias_as_the_service_does(
    corpus_file: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """neardup writes to an index by its name: updates through an alias of several indices fail one by one, and a
    re-run cannot mend them."""
    older, newer = f"{index_name}-1", f"{index_name}-2"
    for index in (older, newer):
        es.index(index=index, id="1", document={"text": "国务院今天召开常务会议，部署推动经济稳定增长的措施。"})
    es.indices.update_aliases(
        actions=[{"add": {"index": older, "alias": index_name}}, {"add": {"index": newer, "alias": index_name}}]
    )
    try:
        rows = corpus_file.parent / "rows.db"
        sqlite3.connect(rows).executescript("create table t (id text, body text); insert into t values ('1', '正文');")
        fields = corpus_file.parent / "fields.toml"
        fields.write_text('[fields.body]\nmode = "text"\n', encoding="utf-8")
        importing = ["import", f"sqlite:///{rows}", index_name, "--table=t", "--id-column=id", f"--fields={fields}"]
        for command in ("index", "setup", "dedupe", "reconcile", "import"):
            args = [str(corpus_file)] if command == "index" else []
            res = (
                _run(*importing, es_url=es_url)
                if command == "import"
                else _run(command, index_name, *args, es_url=es_url)
            )
            assert res.returncode == 2, (command, res.stderr)
            refused = f"{index_name!r} is an alias of {older}, {newer}; neardup writes to an index by its own name"
            assert f"{refused}: name the index" in res.stderr, (command, res.stderr)
        for index in (older, newer):
            assert "neardup" not in es.indices.get_mapping(index=index)[index]["mappings"].get("properties", {})
    finally:
        remove_indices(es, older, newer)


def test_what_elasticsearch_refuses_is_said_with_its_reason(es_url: str, es: Elasticsearch, index_name: str) -> None:
    es.indices.create(index=index_name, mappings={"properties": {"neardup": {"type": "keyword"}}})
    res = _run("setup", index_name, es_url=es_url)
    assert res.returncode == 1 and "Elasticsearch refused the request (400): " in res.stderr, res.stderr
    assert "neardup" in res.stderr.split("(400): ", 1)[1] and "Traceback" not in res.stderr


def test_a_closed_index_is_named_with_how_to_open_it(
    corpus_file: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """Elasticsearch's own reason for a closed index is the one word "closed"."""
    setup_index(es, index_name)
    es.indices.close(index=index_name)
    for command in (("index", index_name, str(corpus_file)), ("dedupe", index_name), ("reconcile", index_name)):
        res = _run(*command, es_url=es_url)
        assert res.returncode == 1, res.stderr
        assert f"index [{index_name}] is closed (POST /{index_name}/_open opens it)" in res.stderr, res.stderr
        assert "Traceback" not in res.stderr


def test_index_reads_standard_input_and_applies_the_text_limit(
    corpus_file: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    env = os.environ | {"NEARDUP_ES_URL": es_url, "NEARDUP_MAX_TEXT_CHARS": "1000"}
    lines = corpus_file.read_text(encoding="utf-8")
    longest = max(len(json.loads(line)["text"]) for line in lines.splitlines())
    assert longest > 1000
    cmd = [sys.executable, "-m", "neardup", "index", index_name, "-"]
    refused = subprocess.run(cmd, input=lines, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert refused.returncode == 2 and "characters; the limit is 1000" in refused.stderr, refused.stderr
    assert not es.indices.exists(index=index_name)  # nothing written
    env["NEARDUP_MAX_TEXT_CHARS"] = str(longest)
    res = subprocess.run(cmd, input=lines, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert res.returncode == 0 and "indexed 25 documents" in res.stderr, res.stderr


def test_reconcile_of_an_index_never_fingerprinted_points_at_dedupe(
    es_url: str, es: Elasticsearch, index_name: str
) -> None:
    es.index(
        index=index_name,
        id="1",
        document={"text": "国务院今天召开常务会议，部署推动经济稳定增长的措施。"},
        refresh=True,
    )
    res = _run("reconcile", index_name, es_url=es_url)
    assert res.returncode == 0 and "documents=0" in res.stdout, res.stderr
    assert (
        f"no document of {index_name} holds fingerprints" in res.stderr and f"neardup dedupe {index_name}" in res.stderr
    )
    es.delete(index=index_name, id="1", refresh=True)
    empty = _run("reconcile", index_name, es_url=es_url)  # an empty index: nothing for dedupe to do either
    assert empty.returncode == 0 and "documents=0" in empty.stdout and "dedupe" not in empty.stderr, empty.stderr


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_says_where_to_resume_and_a_rerun_completes(
    tmp_path: Path, es_url: str, es: Elasticsearch, index_name: str, workers: str
) -> None:
    arts = load_peoples_daily()
    path = tmp_path / "many.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for k in range(3000):
            out.write(json.dumps({"id": f"d{k}", "text": arts[k % len(arts)].text[:400] + str(k)}) + "\n")
    env = os.environ | {"NEARDUP_ES_URL": es_url}
    cmd = [sys.executable, "-m", "neardup", "index", index_name, str(path), "--batch-size", "20", "--workers", workers]
    # as from a terminal: a test run started in the background (`make test &`) ignores SIGINT, and passes that on
    restore = functools.partial(signal.signal, signal.SIGINT, signal.SIG_DFL)
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=restore, process_group=0)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:  # interrupted once some batches are in
        if es.indices.exists(index=index_name) and es.count(index=index_name)["count"] >= 60:
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C sends it: to every process of the group, pool workers too
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    found = re.search(r"stopped at line (\d+); (\d+) documents before it are indexed\. Re-run", err)
    assert found is not None and "Traceback" not in err, err
    assert int(found.group(2)) >= 20 and int(found.group(1)) == int(found.group(2)) + 1  # whole batches before it
    assert err.rstrip().endswith("neardup: interrupted")
    again = _run("index", index_name, str(path), es_url=es_url)
    assert again.returncode == 0 and "indexed 3000 documents" in again.stderr, again.stderr
    assert es.count(index=index_name)["count"] == 3000


def test_a_cluster_that_does_not_answer_in_time_is_not_called_unreachable() -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        env = os.environ | {"NEARDUP_ES_URL": url, "NEARDUP_ES_TIMEOUT": "1"}
        res = subprocess.run(
            [sys.executable, "-m", "neardup", "reconcile", "anything"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert "did not answer in time" in res.stderr and "NEARDUP_ES_TIMEOUT" in res.stderr


def test_serve_runs_several_workers(neardup_serve: Callable[..., Any], index_name: str) -> None:
    with neardup_serve(workers=2) as served:
        with urllib.request.urlopen(served.url + "/healthz", timeout=10) as resp:
            assert json.load(resp)["status"] == "ok"
        body = json.dumps({"id": "x", "text": "国务院今天召开常务会议，部署推动经济稳定增长的措施。"}).encode()
        req = urllib.request.Request(
            f"{served.url}/v1/indices/{index_name}/documents", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            assert json.load(resp)["items"][0]["status"] == "created"
    assert served.log.count("Booting worker") == 2


def test_dedupe_and_reconcile_commands_are_refused_while_a_job_holds_the_index(
    corpus_file: Path, es_url: str, es: Elasticsearch, index_name: str
) -> None:
    """The commands take the lock the service's jobs take: a reconcile reading an older state would otherwise write
    its assignments over a running dedupe's."""
    assert _run("index", index_name, str(corpus_file), es_url=es_url).returncode == 0
    release = threading.Event()
    other = Elasticsearch(es_url)  # a service worker's client
    running = start_job(other, "dedupe", index_name, lambda progress: {"waited": release.wait(60)})
    try:
        for command in ("dedupe", "reconcile"):
            refused = _run(command, index_name, es_url=es_url)
            assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
            assert f"a dedupe job is already running on index {index_name!r}: {running['id']}" in refused.stderr
    finally:
        release.set()
    for _ in range(100):
        if es.get(index=JOBS_INDEX, id=running["id"])["_source"]["state"] != "running":
            break
        time.sleep(0.1)
    other.close()
    done = _run("reconcile", index_name, es_url=es_url)
    assert done.returncode == 0, done.stderr
    recorded = es.search(index=JOBS_INDEX, query={"term": {"index": index_name}}, size=10)["hits"]["hits"]
    kinds = sorted((h["_source"]["kind"], h["_source"]["state"]) for h in recorded if "kind" in h["_source"])
    assert kinds == [("dedupe", "done"), ("reconcile", "done")], kinds

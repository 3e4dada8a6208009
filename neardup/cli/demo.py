"""``neardup demo``: the main job — embedded Elasticsearch, the service, and a demo corpus of real
Chinese news (People's Daily 1998-01) with planted reprints, ingested through the service's own
pipeline (ingest-time flagging), then served until interrupted."""

from __future__ import annotations

import time
from typing import Any

import click

from neardup import node as esnode
from neardup.config import Settings
from neardup.es.client import make_client, read_index_meta, setup_index, write_index_meta
from neardup.es.indexing import IngestConfig, index_batch
from neardup.evaluation.corpus import load_peoples_daily
from neardup.evaluation.sets import news_set
from neardup.incoming.documents import Incoming
from neardup.ingest.fingerprint import Fingerprinter
from neardup.service.server import serve

from .common import reports_errors

__all__ = ["demo_cmd", "load_demo"]

BATCH = 100
#: the index the demo corpus is loaded into: the web page's default (``NEARDUP_UI_INDEX`` unset)
DEMO_INDEX = Settings.ui_index
#: the key of the demo index's ``_meta`` saying how far its load got: ``loading`` until the last batch is in, then
#: ``loaded``; an index whose load was cut short is loaded again by ``--if-missing``, any other one kept
LOAD_META = "demo_load"


def load_demo(settings: Settings, index: str = DEMO_INDEX) -> dict[str, Any]:
    """(Re)create ``index`` and ingest the demo corpus in batches, as a client of the service would."""
    client = make_client(settings)
    client.indices.delete(index=index, ignore_unavailable=True)
    setup_index(client, index, meta={LOAD_META: "loading"})  # marked from its creation: no moment leaves it unmarked
    docs = news_set(load_peoples_daily(), seed=7, groups=100, singles=200)
    fingerprinter = Fingerprinter.default()
    config = IngestConfig(refresh="true")
    written = duplicates = errors = 0
    for k in range(0, len(docs), BATCH):
        chunk = [Incoming(d.id, d.text, d.title) for d in docs[k : k + BATCH]]
        items = index_batch(client, index, chunk, fingerprinter, config)
        written += sum(1 for i in items if i.written)
        duplicates += sum(1 for i in items if i.duplicate_of)
        errors += sum(1 for i in items if not i.written)
    write_index_meta(client, index, LOAD_META, "loaded")
    return {"index": index, "indexed": written, "duplicates": duplicates, "errors": errors}


@click.command("demo")
@click.option("--port", type=click.IntRange(1024, 65000), default=8000, show_default=True, help="Service port.")
@click.option("--es-port", type=click.IntRange(1024, 65000), default=9200, show_default=True)
@click.option("--workers", type=click.IntRange(1, 16), default=2, show_default=True)
@click.option("--no-serve", is_flag=True, help="Load the corpus and exit (Elasticsearch keeps running).")
@click.option(
    "--if-missing",
    is_flag=True,
    help="Load the corpus only when the demo index does not exist yet, or its load was cut short (keep what was "
    "posted to it since).",
)
@click.option(
    "--es-url",
    default=None,
    help="Use this Elasticsearch instead of starting the embedded one. Named here only, never read from "
    f"NEARDUP_ES_URL: the demo deletes and loads the {DEMO_INDEX} index there.",
)
def demo_cmd(port: int, es_port: int, workers: int, no_serve: bool, if_missing: bool, es_url: str | None) -> None:
    """Start the embedded Elasticsearch, load a demo corpus through the ingest pipeline, serve the API."""

    @reports_errors
    def go() -> None:
        start = time.perf_counter()
        base = Settings.from_env()
        url_of_es = es_url
        if url_of_es is None:
            info, _ = esnode.start(base.home, base.home / "es-data", port=es_port)
            url_of_es = info.url
        settings = Settings.from_env(es_url=url_of_es)
        client = make_client(settings)
        cut_short = if_missing and read_index_meta(client, DEMO_INDEX, LOAD_META) == "loading"
        if if_missing and client.indices.exists(index=DEMO_INDEX) and not cut_short:
            out = {"index": DEMO_INDEX}
            click.echo(f"Elasticsearch at {url_of_es}; {DEMO_INDEX} exists, kept as it is (--if-missing)")
        else:
            if cut_short:
                click.echo(f"{DEMO_INDEX} exists, but its load was cut short: loading it again")
            out = load_demo(settings)
            click.echo(
                f"Elasticsearch at {url_of_es}; indexed {out['indexed']} documents into "
                f"{out['index']} ({out['duplicates']} flagged as near-duplicates, {out['errors']} errors) "
                f"in {time.perf_counter() - start:.0f}s"
            )
        url = f"http://127.0.0.1:{port}"
        click.echo(f"open {url}/  (search with the hide-duplicates switch, clusters, overview)")
        click.echo(f"  API: {url}/v1/indices/{out['index']}/search?q=经济&hide_duplicates=true  ·  {url}/docs")
        if no_serve:
            click.echo("not serving (--no-serve)")
            return
        click.echo("Ctrl-C stops the service; stop Elasticsearch with: neardup es stop")
        serve(settings, "127.0.0.1", port, workers)

    go()

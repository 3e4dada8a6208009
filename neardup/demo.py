"""``neardup demo``: the main job for now — embedded Elasticsearch, the neardup mappings, and a demo
corpus of real Chinese news with planted reprints, fingerprinted and clustered, indexed in bulk."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import click
from elasticsearch import helpers

from . import esnode
from .config import Settings
from .evaluation.corpus import load_peoples_daily
from .evaluation.sets import news_set
from .ingest.cluster import cluster_records
from .ingest.fingerprint import Fingerprinter
from .ingest.verify import VerifyConfig
from .store import make_client, setup_index

__all__ = ["run_demo"]


def run_demo(settings: Settings, port: int, index: str = "demo-news") -> dict[str, Any]:
    info, _ = esnode.start(settings.home, settings.home / "es-data", port=port)
    client = make_client(Settings.from_env(es_url=info.url))
    client.indices.delete(index=index, ignore_unavailable=True)
    setup_index(client, index)
    docs = news_set(load_peoples_daily(), seed=7, groups=100, singles=200)
    fp = Fingerprinter.default()
    records = [fp.fingerprint(d.text, d.title) for d in docs]
    assignment = cluster_records(records, lambda r: r.fingerprints, VerifyConfig())
    now = datetime.now(UTC).isoformat()

    def actions() -> Any:
        for k, (doc, rec) in enumerate(zip(docs, records, strict=True)):
            dup = int(assignment.duplicate_of[k])
            fields = rec.as_fields() | {
                "cluster": docs[int(assignment.cluster[k])].id,
                "duplicate_of": docs[dup].id if dup >= 0 else None,
                "distance": int(assignment.distance[k]) if dup >= 0 else None,
                "similarity": float(assignment.similarity[k]) if dup >= 0 else None,
                "is_duplicate": dup >= 0,
                "indexed_at": now,
            }
            yield {"_index": index, "_id": doc.id, "title": doc.title, "text": doc.text, "neardup": fields}

    ok, errors = helpers.bulk(client, actions(), max_retries=3, raise_on_error=False)
    client.indices.refresh(index=index)
    return {
        "url": info.url,
        "index": index,
        "indexed": ok,
        "errors": len(errors) if isinstance(errors, list) else errors,
    }


@click.command("demo")
@click.option("--port", type=click.IntRange(1024, 65000), default=9200, show_default=True)
def demo_cmd(port: int) -> None:
    """Start the embedded Elasticsearch and load a demo corpus with planted reprints."""
    from .cli import reports_errors

    @reports_errors
    def go() -> None:
        start = time.perf_counter()
        out = run_demo(Settings.from_env(), port)
        click.echo(
            f"indexed {out['indexed']} documents into {out['index']} ({out['errors']} errors) "
            f"in {time.perf_counter() - start:.0f}s"
        )
        click.echo(f"Elasticsearch: {out['url']}")
        click.echo(
            f"one hit per duplicate cluster: curl '{out['url']}/{out['index']}/_search?pretty' "
            "-H 'content-type: application/json' "
            '-d \'{"query":{"match":{"text":"经济"}},"collapse":{"field":"neardup.cluster"}}\''
        )
        click.echo("stop it with: neardup es stop")

    go()

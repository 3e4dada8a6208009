"""``GET /healthz`` and ``POST /v1/fingerprint`` (fingerprint, blocks and weighted features)."""

from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint
from elasticsearch import ApiError as ESApiError
from elasticsearch import TransportError

from neardup.ingest.bits import to_hex, to_signed

from ..auth import requires_read_key
from ..errors import ApiError
from ..schemas import FingerprintIn, FingerprintOut, HealthOut
from ..state import state
from .common import check_text_length

__all__ = ["bp"]

bp = APIBlueprint("meta", __name__, tag="meta")


@bp.get("/healthz")
@bp.output(HealthOut)
@bp.doc(summary="200 when Elasticsearch answers, 503 with the reason otherwise")
def healthz() -> dict[str, Any]:
    st = state()
    # brief, and not sent twice to one node: with several nodes named, each may be asked once (a node set aside as
    # dead is tried again from time to time, and the health of a cluster with another node up is not a 503)
    tries = len(st.client.transport.node_pool.all())
    try:
        health = st.client.options(request_timeout=2, max_retries=tries - 1).cluster.health()
    except (TransportError, ESApiError) as exc:
        raise ApiError(503, "elasticsearch_unavailable", f"Elasticsearch is unreachable: {type(exc).__name__}") from exc
    return {"status": "ok", "elasticsearch": {"status": health["status"], "nodes": health["number_of_nodes"]}}


@bp.post("/v1/fingerprint")
@bp.input(FingerprintIn, arg_name="body")
@bp.output(FingerprintOut)
@bp.doc(summary="Fingerprint a text: status, version, fingerprints, blocks, top weighted features")
@requires_read_key  # it reads nothing stored, but costs a worker's CPU as a lookup does
def fingerprint(body: dict[str, Any]) -> dict[str, Any]:
    st = state()
    check_text_length(body["text"])
    rec = st.fingerprinter.fingerprint(body["text"], body.get("title"), explain=body["explain"])
    ok = rec.status == "ok"
    return {
        "status": rec.status,
        "version": rec.version,
        "fingerprint": to_hex(rec.fingerprint) if ok else None,
        "fingerprint_long": to_signed(rec.fingerprint) if ok else None,
        "fingerprints": [to_hex(f) for f in rec.fingerprints],
        "blocks": rec.block_tokens(),
        "exact": rec.exact,
        "features": [{"feature": f, "weight": round(w, 4)} for f, w in rec.features],
    }

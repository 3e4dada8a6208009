"""Kibana saved objects shipped with neardup (``neardup-dashboard.ndjson`` beside this module): a data view
over neardup indices and the "Duplicate clusters" dashboard. :func:`import_objects` loads them through
Kibana's saved-objects API; :func:`panel_requests` says which Elasticsearch search each panel runs (tests
run them for real).
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from neardup.errors import NeardupError

__all__ = ["DATA_VIEW_ID", "KibanaError", "import_objects", "load_objects", "panel_requests", "saved_objects_path"]

DATA_VIEW_ID = "neardup-data-view"


class KibanaError(NeardupError):
    """Kibana refused or could not be reached; ``errors`` holds its per-object errors."""

    def __init__(self, message: str, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []


def saved_objects_path() -> Path:
    """The saved objects shipped with neardup (``neardup/integrations/neardup-dashboard.ndjson``)."""
    return Path(__file__).with_name("neardup-dashboard.ndjson")


def load_objects(path: Path, index_pattern: str | None = None) -> list[dict[str, Any]]:
    """The saved objects; with ``index_pattern`` the data view and the Vega panels point at it, and every object's
    id (and the references to it) and the data view's and dashboard's titles name it, so that importing for another
    pattern adds a dashboard beside the first instead of replacing it."""
    objects = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if index_pattern:
        suffix = _pattern_suffix(index_pattern)
        for obj in objects:
            obj["id"] += suffix
            for ref in obj.get("references", []):
                ref["id"] += suffix
            if obj["type"] in ("index-pattern", "dashboard"):
                name = "name" if obj["type"] == "index-pattern" else "title"
                obj["attributes"][name] = f"{obj['attributes'][name]} · {index_pattern}"
            if obj["type"] == "index-pattern":
                obj["attributes"]["title"] = index_pattern
            elif obj["type"] == "visualization":
                state = json.loads(obj["attributes"]["visState"])
                if state["type"] == "vega":
                    spec = json.loads(state["params"]["spec"])
                    spec["data"]["url"]["index"] = index_pattern
                    state["params"]["spec"] = json.dumps(spec, ensure_ascii=False, indent=2)
                    obj["attributes"]["visState"] = json.dumps(state, ensure_ascii=False)
    return objects


def _pattern_suffix(index_pattern: str) -> str:
    """What the objects' ids of one index pattern end with: its letters and digits, and a hash that keeps patterns
    differing in other characters apart.

    >>> _pattern_suffix("news-*"), _pattern_suffix("news*")
    ('-news-4a8aac21', '-news-b5c5352d')
    """
    readable = "".join(c if c.isascii() and c.isalnum() else "-" for c in index_pattern.lower()).strip("-")[:40]
    digest = hashlib.sha256(index_pattern.encode("utf-8")).hexdigest()[:8]
    return f"-{readable}-{digest}" if readable else f"-{digest}"


@dataclass(frozen=True)
class PanelRequest:
    """The search a panel sends: its index and body (the dashboard's time/filter context left out)."""

    index: str
    body: dict[str, Any]


def _legacy_aggs(state: dict[str, Any]) -> dict[str, Any]:
    """The aggregation tree of an aggregation-based visualization (the agg types neardup ships)."""
    buckets = [a for a in state["aggs"] if a["enabled"] and a["schema"] != "metric"]
    tree: dict[str, Any] = {}
    node = tree
    for agg in buckets:
        p = agg["params"]
        if agg["type"] == "terms":
            body: dict[str, Any] = {"terms": {"field": p["field"], "size": p["size"], "order": {"_count": p["order"]}}}
        elif agg["type"] == "date_histogram":
            body = {
                "date_histogram": {"field": p["field"], "fixed_interval": "1h", "min_doc_count": p["min_doc_count"]}
            }
        else:
            raise ValueError(f"agg type {agg['type']!r} is not one neardup ships")
        node[agg["id"]] = body
        node = body.setdefault("aggs", {})
    return tree


def panel_requests(objects: list[dict[str, Any]]) -> dict[str, PanelRequest]:
    """Visualization id → the search it runs (Vega: its ``url``; aggregation-based: its agg tree)."""
    titles = {o["id"]: o["attributes"]["title"] for o in objects if o["type"] == "index-pattern"}
    out: dict[str, PanelRequest] = {}
    for obj in objects:
        if obj["type"] != "visualization":
            continue
        state = json.loads(obj["attributes"]["visState"])
        if state["type"] == "vega":
            url = json.loads(state["params"]["spec"])["data"]["url"]
            out[obj["id"]] = PanelRequest(url["index"], dict(url["body"]))
        else:
            ref = next(r for r in obj["references"] if r["type"] == "index-pattern")
            out[obj["id"]] = PanelRequest(titles[ref["id"]], {"size": 0, "aggs": _legacy_aggs(state)})
    return out


def import_objects(
    kibana_url: str,
    objects: list[dict[str, Any]],
    timeout: float = 60,
    basic_auth: tuple[str, str] | None = None,
    api_key: str | None = None,
) -> dict[str, Any]:
    """``POST /api/saved_objects/_import?overwrite=true``, as a user of Kibana's security (``basic_auth``, or an
    ``api_key`` as Elasticsearch issues it, base64-encoded) when given; raises :class:`KibanaError` on failure."""
    ndjson = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objects).encode("utf-8")
    headers = {"kbn-xsrf": "neardup"}
    if api_key:
        headers["Authorization"] = f"ApiKey {api_key}"
    elif basic_auth:  # in UTF-8 (RFC 7617), as Elasticsearch reads it: requests would send latin-1 only
        user, password = basic_auth
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    try:
        resp = requests.post(
            kibana_url.rstrip("/") + "/api/saved_objects/_import",
            params={"overwrite": "true"},
            headers=headers,
            files={"file": ("neardup-dashboard.ndjson", ndjson, "application/ndjson")},
            timeout=timeout,
        )
    except requests.RequestException as exc:
        raise KibanaError(f"Kibana at {kibana_url} is unreachable: {type(exc).__name__}") from exc
    if resp.status_code in (401, 403):
        who = "the user given" if basic_auth or api_key else "no user (give --username and --password, or --api-key)"
        raise KibanaError(f"Kibana refused the import ({resp.status_code}) as {who}: {resp.text[:300]}")
    if resp.status_code != 200:
        raise KibanaError(f"Kibana answered {resp.status_code}: {resp.text[:300]}")
    result: dict[str, Any] = resp.json()
    if not result.get("success"):
        errors = [e for e in result.get("errors") or [] if isinstance(e, dict)]
        raise KibanaError(f"Kibana did not import every object: {_refusals(errors)}", errors)
    return result


def _refusals(errors: list[dict[str, Any]], shown: int = 5) -> str:
    """Kibana's per-object import errors, for a message.

    >>> _refusals([{"type": "index-pattern", "id": "nd", "error": {"type": "conflict"}}])
    'index-pattern nd (conflict)'
    >>> _refusals([])
    'Kibana gave no reason'
    """
    if not errors:
        return "Kibana gave no reason"
    listed = [f"{e.get('type')} {e.get('id')} ({(e.get('error') or {}).get('type', 'error')})" for e in errors[:shown]]
    more = f", and {len(errors) - shown} more" if len(errors) > shown else ""
    return ", ".join(listed) + more

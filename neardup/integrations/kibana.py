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
from urllib.parse import urlsplit

import requests

from neardup.errors import NeardupError, UsageError

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
    pattern adds a dashboard beside the first instead of replacing it.

    ``path`` may be an export of Kibana's own: its closing summary line is left out, and a data view exported
    before data views had a ``name`` is named after its ``title``. Raises :class:`UsageError` naming the line that
    is not a saved object."""
    objects = _read_objects(path)
    if index_pattern:
        suffix = _pattern_suffix(index_pattern)
        # a reference to an object the file does not hold keeps pointing at the one already in Kibana
        renamed = {(o["type"], o["id"]) for o in objects}
        for obj in objects:
            obj["id"] += suffix
            for ref in obj.get("references") or []:
                if (ref.get("type"), ref.get("id")) in renamed:
                    ref["id"] += suffix
            attrs = obj["attributes"]
            if obj["type"] == "index-pattern":
                attrs["name"] = f"{attrs.get('name') or attrs.get('title') or obj['id']} · {index_pattern}"
                attrs["title"] = index_pattern
            elif obj["type"] == "dashboard":
                attrs["title"] = f"{attrs.get('title') or obj['id']} · {index_pattern}"
            elif obj["type"] == "visualization" and "visState" in attrs:
                attrs["visState"] = _vega_pointed_at(obj, index_pattern, path)
    return objects


def _read_objects(path: Path) -> list[dict[str, Any]]:
    """The saved objects of an ndjson file, one a line, without the summary line Kibana's export ends with."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path} is not UTF-8 text (byte {exc.start}): not Kibana saved objects") from exc
    objects: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}:{number}: not JSON ({exc.msg}, column {exc.colno})") from exc
        if isinstance(obj, dict) and "exportedCount" in obj and "type" not in obj:
            continue
        missing = _not_saved_object(obj)
        if missing:
            raise UsageError(f"{path}:{number}: not a Kibana saved object ({missing})")
        objects.append(obj)
    if not objects:
        raise UsageError(f"{path} holds no saved objects")
    return objects


def _not_saved_object(obj: Any) -> str:
    """What keeps a parsed line from being a saved object neardup can import ('' when nothing does).

    >>> _not_saved_object({"type": "dashboard", "id": "d", "attributes": {}})
    ''
    >>> _not_saved_object([1]), _not_saved_object({"type": "dashboard", "attributes": {}})
    ('a list, not an object', 'no "id" string')
    """
    if not isinstance(obj, dict):
        return f"a {_json_kind(obj)}, not an object"
    for key in ("type", "id"):
        if not isinstance(obj.get(key), str) or not obj[key]:
            return f'no "{key}" string'
    if not isinstance(obj.get("attributes"), dict):
        return 'no "attributes" object'
    references = obj.get("references", [])
    if not isinstance(references, list) or not all(isinstance(r, dict) for r in references):
        return '"references" is not a list of objects'
    return ""


def _json_kind(value: Any) -> str:
    """The JSON name of a parsed value's kind.

    >>> _json_kind([]), _json_kind("x"), _json_kind(None), _json_kind(1.5)
    ('list', 'string', 'null', 'number')
    """
    kinds = {list: "list", str: "string", type(None): "null", bool: "boolean", dict: "object"}
    return kinds.get(type(value), "number")


def _vega_pointed_at(obj: dict[str, Any], index_pattern: str, path: Path) -> str:
    """A visualization's ``visState`` with its Vega spec's Elasticsearch queries pointed at ``index_pattern``
    (other visualizations follow their data view through their references, and are left as they are)."""
    raw = obj["attributes"]["visState"]
    try:
        state = json.loads(raw)
    except (json.JSONDecodeError, TypeError) as exc:
        raise UsageError(f"{path}: the visState of visualization {obj['id']} is not JSON") from exc
    params = state.get("params") if isinstance(state, dict) else None
    if not isinstance(params, dict) or state.get("type") != "vega" or not isinstance(params.get("spec"), str):
        return str(raw)
    try:
        spec = json.loads(params["spec"])
    except json.JSONDecodeError as exc:  # Kibana also takes Vega specs in HJSON (comments, unquoted keys)
        raise UsageError(
            f"{path}: the Vega spec of visualization {obj['id']} is not JSON, so it cannot be pointed at "
            f"{index_pattern}: import the file without --index-pattern, or save the spec as JSON"
        ) from exc
    data = spec.get("data") if isinstance(spec, dict) else None
    for source in data if isinstance(data, list) else [data]:
        url = source.get("url") if isinstance(source, dict) else None
        if isinstance(url, dict) and "index" in url:
            url["index"] = index_pattern
    params["spec"] = json.dumps(spec, ensure_ascii=False, indent=2)
    return json.dumps(state, ensure_ascii=False)


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
    ``api_key`` as Elasticsearch issues it, base64-encoded) when given; raises :class:`KibanaError` on failure,
    and :class:`UsageError` for a ``kibana_url`` that is no http(s) URL."""
    endpoint = _import_endpoint(kibana_url)
    ndjson = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objects).encode("utf-8")
    headers = {"kbn-xsrf": "neardup"}
    if api_key:
        headers["Authorization"] = f"ApiKey {api_key}"
    elif basic_auth:  # in UTF-8 (RFC 7617), as Elasticsearch reads it: requests would send latin-1 only
        user, password = basic_auth
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    try:
        resp = requests.post(
            endpoint,
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
    result = _import_result(kibana_url, resp)
    if not result["success"]:
        errors = [e for e in result.get("errors") or [] if isinstance(e, dict)]
        raise KibanaError(f"Kibana did not import every object: {_refusals(errors)}", errors)
    return result


def _import_endpoint(kibana_url: str) -> str:
    """The import API under ``kibana_url``, which must give its scheme (requests reads ``localhost:5601`` as a URL
    of scheme ``localhost``, and gives up before sending anything).

    >>> _import_endpoint("https://kb.example:5601/base/")
    'https://kb.example:5601/base/api/saved_objects/_import'
    >>> _import_endpoint("localhost:5601")
    Traceback (most recent call last):
    ...
    neardup.errors.UsageError: the Kibana URL 'localhost:5601' needs a scheme: http://localhost:5601, or https://
    """
    parts = urlsplit(kibana_url)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise UsageError(f"the Kibana URL {kibana_url!r} needs a scheme: http://{kibana_url}, or https://")
    return kibana_url.rstrip("/") + "/api/saved_objects/_import"


def _import_result(kibana_url: str, resp: requests.Response) -> dict[str, Any]:
    """The body of a 200 answer, when it is the import API's (a JSON object whose ``success`` is true or false);
    anything else (a login page of a proxy in front of Kibana, another service at that port) is a
    :class:`KibanaError` saying what came back."""
    content_type = resp.headers.get("Content-Type", "no content type")
    try:
        result = resp.json() if content_type.split(";")[0].strip().lower() == "application/json" else None
    except ValueError:
        result = None
    if isinstance(result, dict) and isinstance(result.get("success"), bool):
        return result
    where = f" (redirected to {resp.url})" if resp.history else ""
    body = " ".join(resp.text[:300].split())
    raise KibanaError(
        f"{kibana_url} did not answer as Kibana's import API does{where}: 200, {content_type}, {body!r}; "
        "check that it is Kibana's URL, with no proxy's login page in front of Kibana"
    )


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

"""The ``/docs`` page works without the internet: Swagger UI's files come from the service itself."""

from __future__ import annotations

import re
from urllib.parse import urljoin

from neardup.service import create_app


def test_the_docs_page_loads_every_file_it_names_from_the_service() -> None:
    api = create_app({"es_url": "http://127.0.0.1:1"}).test_client()  # the page needs no Elasticsearch
    page = api.get("/docs")
    assert page.status_code == 200
    named = re.findall(r'(?:src|href)="([^"]+)"', page.get_data(as_text=True))
    assert len(named) == 4 and not [u for u in named if re.match(r"(?i)(https?:)?//", u)], named
    bodies = {}
    for url in named:
        with api.get(urljoin("http://localhost/docs", url)) as answer:
            assert answer.status_code == 200, url
            bodies[url.rsplit("/", 1)[-1]] = (answer.mimetype, answer.get_data())
    assert bodies["swagger-ui.css"][0] == "text/css"
    assert b"SwaggerUIBundle" in bodies["swagger-ui-bundle.js"][1]
    assert b"SwaggerUIStandalonePreset" in bodies["swagger-ui-standalone-preset.js"][1]
    assert bodies["favicon-32x32.png"][0] == "image/png"

"""The served manage view over both backends, through plain HTTP (no browser): sign in,
list, open an item, archive it with the form's CSRF token; the API sees the change.

PostgreSQL runs without the SQLite request lock, so this is the view's only path there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

import remem
from remem.service.tokens import Tokens
from remem.testing.served import Server


@pytest.fixture
def served(store_url: str) -> Iterator[tuple[Server, str]]:
    store = remem.open(store_url)
    try:
        store.create_memory("m1").remember("user:alice", "diet", "vegan")
        token = Tokens(store).create("m1", "writer", "user:alice")[0]
    finally:
        store.close()
    with Server(store_url, startup_s=90) as srv:
        yield srv, token


def _field(html: str, name: str) -> str:
    return re.search(rf'name="{name}" value="([^"]*)"', html).group(1)


def test_a_writer_signs_in_and_archives_an_item_over_http(served):
    srv, token = served
    with httpx.Client(base_url=srv.base, timeout=30, follow_redirects=True) as web:
        pre = _field(web.get("/ui/login").text, "pre")
        signed = web.post("/ui/login", data={"token": token, "pre": pre})
        assert signed.status_code == 200 and signed.url.path == "/ui/items"
        [item_id] = re.findall(r'data-item="([^"]+)"', signed.text)
        detail = web.get(f"/ui/items/{item_id}")
        assert "vegan" in detail.text
        done = web.post(f"/ui/items/{item_id}/archive", data={"csrf": _field(detail.text,
                                                                            "csrf")})
        assert done.status_code == 200 and 'data-status>archived<' in done.text
    api = httpx.get(f"{srv.base}/memory/m1/items/{item_id}", timeout=30,
                    headers={"Authorization": f"Bearer {token}"}).json()
    assert api["status"] == "archived"

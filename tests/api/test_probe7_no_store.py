"""Round-7 probe: API responses carrying memory text (items, recall, export, fact content,
errors) had no ``Cache-Control``, so a browser or a client-side HTTP cache in an agent host
could keep a copy that outlives a forget; the manage view already sent ``no-store`` and
``nosniff``, the API sent neither. Every API response now carries ``Cache-Control:
no-store`` and ``X-Content-Type-Options: nosniff``. Real ``remem serve`` on loopback, real
SQLite file."""

from __future__ import annotations

import pytest

from security.probe4_kit import Probe


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    p = Probe(tmp_path_factory.mktemp("nostore"))
    item = p.ok("aw", "POST", "/memory/m1/items", json={
        "scope": "user:alice", "key": "diagnosis", "value": "private text"})
    p.item_id = item["item_id"]
    yield p
    p.close()


@pytest.mark.parametrize("who, method, path, body", [
    ("aw", "GET", "/memory/m1/items", None),
    ("aw", "GET", "/memory/m1/items/{item}", None),
    ("aw", "POST", "/memory/m1/recall", {"scopes": ["user:alice"], "query": "diagnosis",
                                         "budget_tokens": 300}),
    ("root", "GET", "/memory/m1/export", None),
    ("aw", "GET", "/memory/m1/items/itm_000000000000000000000000", None),   # 404
    (None, "GET", "/memory/m1/items", None),                                # 401
    (None, "GET", "/healthz", None),
])
def test_every_api_response_says_no_store_and_nosniff(probe, who, method, path, body):
    r = probe.call(who, method, path.replace("{item}", probe.item_id), json=body)
    assert r.headers.get("cache-control") == "no-store", (r.status_code, dict(r.headers))
    assert r.headers.get("x-content-type-options") == "nosniff", dict(r.headers)


def test_the_manage_view_keeps_its_own_headers(probe):
    r = probe.call(None, "GET", "/ui/login")
    assert r.headers.get("cache-control") == "no-store"
    assert "content-security-policy" in r.headers

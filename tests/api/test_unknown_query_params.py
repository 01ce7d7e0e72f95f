"""A query parameter a route does not declare is refused (422 ``validation_failed`` naming it),
on every route of the app, against a real ``remem serve``: a misspelt ``?limt=5`` or
``?scope=`` on a route that takes ``scopes`` is never silently the default."""

from __future__ import annotations

import re

import httpx
import pytest

import remem
from remem.api.app import create_app
from remem.testing.served import Server

from apikit import admin_database

UNKNOWN = "zz_unknown"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(httpx client on a real server over a SQLite file, admin token of memory m1)."""
    db = tmp_path_factory.mktemp("q") / "q.db"
    token = admin_database(db)
    with Server(db, startup_s=60) as srv, httpx.Client(base_url=srv.base, timeout=30) as http:
        yield http, {"Authorization": f"Bearer {token}"}


def _routes(routes):
    """Every (method, path) the app answers, the manage view's and /healthz included."""
    for r in routes:
        if hasattr(r, "original_router"):  # an included router
            yield from _routes(r.original_router.routes)
        elif getattr(r, "methods", None) and r.path != "/openapi.json":
            for m in sorted(r.methods - {"HEAD"}):
                yield m, r.path


ROUTES = sorted(set(_routes(create_app(remem.open(":memory:")).routes)))


def test_the_walk_covers_the_api_and_the_manage_view():
    paths = {p for _, p in ROUTES}
    assert {"/healthz", "/memory/{memory_id}/items", "/memory/{memory_id}/profile",
            "/ui/items", "/ui/login"} <= paths
    assert len(ROUTES) > 60


def test_every_route_refuses_a_query_parameter_it_does_not_declare(served):
    http, admin = served
    answered = []
    for method, path in ROUTES:
        url = re.sub(r"\{memory_id\}", "m1", path)
        url = re.sub(r"\{[a-z_]+\}", "x1", url)
        body = {"json": {}} if method in ("POST", "PUT") else {}
        r = http.request(method, url, params={UNKNOWN: "5"}, headers=admin, **body)
        assert r.status_code == 422, (method, path, r.status_code, r.text[:300])
        if not path.startswith("/ui"):
            err = r.json()["error"]
            assert err["code"] == "validation_failed", (method, path)
            assert err["details"]["errors"][0]["loc"] == ["query", UNKNOWN], (method, path)
            assert UNKNOWN in err["message"]
        answered.append(path)
    assert len(answered) == len(ROUTES)


def test_a_misspelt_or_wrong_parameter_is_named_and_the_right_one_works(served):
    http, admin = served
    assert http.get("/memory/m1/items", params={"limit": 1}, headers=admin).status_code == 200
    r = http.get("/memory/m1/items", params={"limt": 5}, headers=admin)
    assert r.status_code == 422
    assert r.json()["error"]["details"]["errors"][0]["loc"] == ["query", "limt"]
    r = http.get("/memory/m1/profile", params={"scopes": "user:alice", "scope": "user:x"},
                 headers=admin)
    assert r.status_code == 422 and "query.scope" in r.json()["error"]["message"]
    assert http.get("/memory/m1/profile", params={"scopes": "user:alice"},
                    headers=admin).status_code == 200


def test_openapi_and_the_manage_view_still_answer(served):
    http, _ = served
    doc = http.get("/openapi.json")
    assert doc.status_code == 200 and "/memory/{memory_id}/items" in doc.json()["paths"]
    assert http.get("/ui/login").status_code == 200
    assert http.get("/healthz").json() == {"ok": True}


def test_openapi_lists_the_refusal_on_every_operation(served):
    """Every documented operation, /healthz included (no parameters of its own), lists the
    422 an undeclared query parameter gets, with the shared error schema."""
    http, _ = served
    doc = http.get("/openapi.json").json()
    assert "query parameter the route does not declare" in doc["info"]["description"]
    operations = [(path, m, op) for path, ops in doc["paths"].items()
                  for m, op in ops.items()]
    assert len(operations) > 30
    for path, method, op in operations:
        refusal = op["responses"].get("422")
        assert refusal, (method, path)
        assert "query parameter" in refusal["description"], (method, path)
        assert refusal["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/ErrorOut"}, (method, path)

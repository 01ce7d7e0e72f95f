"""Round-8 probe: a memory-wide caller (subject ``admin``) naming the entity ``user`` over HTTP
was told to "pass --scope user:<id>", a command-line option the API does not have. The
message now names the HTTP scope parameter (and the CLI option) and the scope-handle
alternative. Real ``remem serve`` on loopback, real SQLite file."""

from __future__ import annotations

import pytest

from security.probe4_kit import Probe


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    p = Probe(tmp_path_factory.mktemp("entity"))
    yield p
    p.close()


@pytest.mark.parametrize("method, path, kw", [
    ("GET", "/memory/m1/slots/user/home_city", {}),
    ("POST", "/memory/m1/apply", {"json": {"entity": "user", "attribute": "home_city",
                                           "value": "Paris", "kind": "fact",
                                           "operation": "assert"}}),
])
def test_entity_user_without_a_scope_names_the_http_scope_parameter(probe, method, path, kw):
    r = probe.call("root", method, path, **kw)
    assert r.status_code == 400, r.text
    err = r.json()["error"] if "error" in r.json() else r.json()["results"][0]["error"]
    assert err["code"] == "invalid_input" and "HTTP: the scope parameter" in err["message"]

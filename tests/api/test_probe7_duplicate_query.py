"""Round-7 probe: a single-valued query parameter given twice was silently resolved to its
last value (``/items?scope=user:bob&scope=user:alice`` answered with alice's items, the
other order with a 403), while a duplicate field in a JSON body is refused: a proxy or
audit log reading the first value saw another request than the one served. A parameter a
route takes once is now refused when repeated (422 ``validation_failed`` naming it, before
anything runs); list parameters (``scopes``, ``status``) still repeat. Real ``remem serve``
on loopback, real SQLite file."""

from __future__ import annotations

import pytest

from security.probe4_kit import Probe


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    p = Probe(tmp_path_factory.mktemp("dupq"))
    p.ok("aw", "POST", "/memory/m1/items", json={"scope": "user:alice", "key": "home_city",
                                                  "value": "Paris", "kind": "profile_slot"})
    yield p
    p.close()


@pytest.mark.parametrize("path, query, name", [
    ("/memory/m1/items", "scope=user:bob&scope=user:alice", "scope"),
    ("/memory/m1/items", "scope=user:alice&scope=user:alice", "scope"),
    ("/memory/m1/items", "limit=1&limit=500", "limit"),
    ("/memory/m1/inspect", "scope=user:alice&key=diet&key=home_city", "key"),
    ("/ui/items", "text=a&text=b", "text"),
])
def test_a_single_valued_query_parameter_given_twice_is_refused(probe, path, query, name):
    r = probe.call("aw", "GET", f"{path}?{query}")
    assert r.status_code == 422, (r.status_code, r.text[:300])
    if not path.startswith("/ui"):
        err = r.json()["error"]
        assert err["code"] == "validation_failed", err
        assert ["query", name] in [e["loc"] for e in err["details"]["errors"]], err


def test_list_parameters_still_repeat(probe):
    r = probe.call("aw", "GET", "/memory/m1/items?status=current&status=superseded"
                   "&scope=user:alice")
    assert r.status_code == 200, r.text
    assert [i["value"] for i in r.json()["items"]] == ["Paris"]
    r = probe.call("aw", "GET", "/memory/m1/profile?scopes=user:alice&scopes=agent:bot")
    assert r.status_code == 200, r.text

"""Round-8 probe: a request with two ``Authorization`` headers was served as the *first*
token's principal (FastAPI's ``HTTPBearer`` reads one header), while a proxy, gateway or
audit log that reads the last one sees another caller: ``Bearer <alice reader>`` then
``Bearer <bob writer>`` wrote bob's scope although the last-header reader saw alice's reader
token. Like a repeated query parameter (round 7), it is now refused before anything runs:
401 ``unauthenticated`` saying to send one header; nothing written. Real ``remem serve`` on
loopback, real SQLite file."""

from __future__ import annotations

import pytest

from security.probe4_kit import Probe


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    p = Probe(tmp_path_factory.mktemp("dupauth"))
    yield p
    p.close()


def _two(probe, first: str, second: str) -> list[tuple[str, str]]:
    return [("Authorization", f"Bearer {probe.tokens[first]}"),
            ("Authorization", f"Bearer {probe.tokens[second]}")]


@pytest.mark.parametrize("first, second", [("bw", "ar"), ("ar", "bw"), ("aw", "aw")])
def test_two_authorization_headers_are_refused_and_write_nothing(probe, first, second):
    r = probe.http.post("/memory/m1/items", headers=_two(probe, first, second),
                        json={"scope": "user:bob", "key": "home_city", "value": "Oslo"})
    assert r.status_code == 401, (r.status_code, r.text[:300])
    err = r.json()["error"]
    assert err["code"] == "unauthenticated" and "one Authorization header" in err["message"]
    assert probe.ok("root", "GET", "/memory/m1/items?scope=user:bob")["items"] == []


def test_two_authorization_headers_are_refused_on_reads_too(probe):
    r = probe.http.get("/memory/m1/items?scope=user:alice", headers=_two(probe, "aw", "bw"))
    assert r.status_code == 401, (r.status_code, r.text[:300])


def test_one_authorization_header_still_works(probe):
    r = probe.call("bw", "GET", "/memory/m1/items?scope=user:bob")
    assert r.status_code == 200, r.text

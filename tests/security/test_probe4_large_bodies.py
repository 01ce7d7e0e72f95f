"""Round-4 probe: ``POST /facts`` takes bodies up to 65 MiB, and the body-size middleware
granted that before anyone was authenticated. Four anonymous 60 MiB uploads with a made-up
token raised the server's peak RSS from 88 MB to 593 MB before each got its 401. Now the
larger limit needs a live bearer token; anyone else gets the ordinary 64 KiB limit (413)."""

from __future__ import annotations

import pytest

from security.probe4_kit import Probe

ORDINARY_LIMIT = 65_536


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    p = Probe(tmp_path_factory.mktemp("large"))
    yield p
    p.close()


def _fact_body(n_bytes: int) -> bytes:
    return b'{"scope": "user:alice", "key": "diary", "content": "' + b"a" * n_bytes + b'"}'


@pytest.mark.parametrize("auth", [None, "Bearer nope", "Bearer rmm_0123456789abcdef_xyz",
                                  "Basic Zm9vOmJhcg=="])
def test_a_large_body_without_a_live_token_gets_the_ordinary_limit(probe, auth):
    headers = {"content-type": "application/json", **({"Authorization": auth} if auth else {})}
    r = probe.call(None, "POST", "/memory/m1/facts", content=_fact_body(2 * 1024 * 1024),
                   headers=headers)
    assert r.status_code == 413, r.text
    err = r.json()["error"]
    assert err["code"] == "request_too_large" and err["details"]["limit"] == ORDINARY_LIMIT


def test_a_revoked_token_gets_the_ordinary_limit_too(probe):
    token_id = probe.tokens["bw"].split("_")[1]
    probe.ok("root", "DELETE", f"/memory/m1/tokens/{token_id}")
    r = probe.call("bw", "POST", "/memory/m1/facts", content=_fact_body(200_000),
                   headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["error"]["details"]["limit"] == ORDINARY_LIMIT


def test_a_writer_still_stores_a_large_fact_in_the_blob_store(probe):
    r = probe.call("aw", "POST", "/memory/m1/facts", content=_fact_body(2 * 1024 * 1024),
                   headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text[:300]
    record = probe.ok("aw", "GET", f"/memory/m1/facts/{r.json()['item_id']}")
    assert record["contentRef"].startswith("blob://local/m1/")
    assert record["size"] > 2 * 1024 * 1024


def test_a_small_body_without_a_token_still_gets_401(probe):
    r = probe.call(None, "POST", "/memory/m1/facts", json={"scope": "user:alice", "key": "k",
                                                           "content": "v"})
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthenticated"

"""Round-4 probe: tenants are for good ("every memory belongs to one tenant for good"), yet
``GET /memory/{id}/export?tenant=T`` lets a token of tenant acme write every record of its
export as tenant globex (or any well-formed name): a tenant can mint Log+Facts files that
claim to be another tenant's data. The Python/CLI owner override is deliberate
(tests/logfacts/test_export_tenant.py); over HTTP a token should get only its own tenant."""

from __future__ import annotations

import json

import pytest

from security.probe4_kit import Probe


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    p = Probe(tmp_path_factory.mktemp("tenant"))
    p.ok("root", "POST", "/memory/m1/items", json={"scope": "user:alice", "key": "home_city",
                                                   "value": "Lyon"})
    yield p
    p.close()


def test_an_export_by_a_token_names_the_memorys_own_tenant(probe):
    r = probe.call("root", "GET", "/memory/m1/export")
    assert r.status_code == 200
    assert {json.loads(x)["scope"]["tenantId"] for x in r.text.splitlines()
            if isinstance(json.loads(x).get("scope"), dict)} == {"acme"}


@pytest.mark.parametrize("tenant", ["globex", "nosuchtenant"])
def test_a_token_cannot_label_its_export_as_another_tenant(probe, tenant):
    r = probe.call("root", "GET", f"/memory/m1/export?tenant={tenant}")
    labels = {json.loads(x)["scope"]["tenantId"] for x in r.text.splitlines()
              if r.status_code == 200 and isinstance(json.loads(x).get("scope"), dict)}
    assert r.status_code in (400, 403) and tenant not in labels, (r.status_code, labels)

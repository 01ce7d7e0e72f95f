"""Round-5 probe: ``GET /memories/{id}`` and ``PUT /memories/{id}/config`` answered
``"tenant_id": null`` for a memory of tenant acme (only ``POST /memories`` named it), so an
operator reading the memory over HTTP is told it belongs to no tenant, unlike
``GET /memory/{id}/status`` and ``remem memory show``."""

from __future__ import annotations

import pytest

from security.probe4_kit import Probe


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    p = Probe(tmp_path_factory.mktemp("tenant5"))
    yield p
    p.close()


def test_reading_a_memory_names_its_tenant(probe):
    assert probe.ok("root", "GET", "/memories/m1")["tenant_id"] == "acme"
    assert probe.ok("m2root", "GET", "/memories/m2")["tenant_id"] == "globex"


def test_replacing_the_config_names_the_tenant(probe):
    out = probe.ok("root", "PUT", "/memories/m1/config", json={"digests": True})
    assert out == {"memory_id": "m1", "config": {"digests": True}, "tenant_id": "acme"}


def test_another_tenants_memory_still_reads_as_missing(probe):
    a = probe.call("m2root", "GET", "/memories/m1")
    b = probe.call("m2root", "GET", "/memories/nosuch")
    assert a.status_code == b.status_code == 404
    assert a.json()["error"]["code"] == b.json()["error"]["code"] == "not_found_or_not_visible"

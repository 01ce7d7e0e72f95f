"""An export names the memory's own tenant by default (as Memory.fact does), not 'default'."""

from __future__ import annotations

import json

import remem


def test_an_export_names_the_memorys_tenant(tmp_path):
    store = remem.open(str(tmp_path / "t.db"))
    mem = store.create_memory("m1", tenant_id="acme")
    w = mem.remember("user:maya", "home_city", "Lyon")
    mem.observe("user:maya", "hello", source_id="s1", derive=False)
    recs = [json.loads(line) for line in mem.export_log_facts()]
    assert recs and {r["scope"]["tenantId"] for r in recs} == {"acme"}
    assert mem.fact(w.item_id)["scope"]["tenantId"] == "acme"
    default = store.create_memory("m2")
    default.remember("user:maya", "home_city", "Lyon")
    assert {json.loads(x)["scope"]["tenantId"] for x in default.export_log_facts()} == {"default"}


def test_an_export_tenant_follows_the_tenant_id_rule(tmp_path):
    import pytest

    from remem.errors import InvalidInput

    mem = remem.open(str(tmp_path / "t.db")).create_memory("m1")
    mem.remember("user:maya", "home_city", "Lyon")
    for bad in ("a b", "\U0001f600", "\ufffd", "-x", "a/b", ""):
        with pytest.raises(InvalidInput):
            list(mem.export_log_facts(tenant=bad))
    assert {json.loads(x)["scope"]["tenantId"]
            for x in mem.export_log_facts(tenant="acme.eu-1")} == {"acme.eu-1"}

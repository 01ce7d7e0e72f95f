"""An import whose records name another tenant is imported into the target memory's tenant
and the report says so: how many records, per tenant id named, and a warning (Python and the
CLI's --json). A file of the memory's own tenant reports nothing relabelled. Real SQLite."""

from __future__ import annotations

import json
import os

import remem
from _plugins.cli_in_process import run_cli

U = "user:alice"


def _export(mem, path, tenant=None):
    with path.open("wb") as out:
        return mem.export_log_facts_to(out, tenant=tenant)


def _source_memory(store):
    src = store.create_memory("src", tenant_id="acme")
    src.observe(U, "I live in Lyon.", source_id="s1")
    src.remember(U, "diet", "vegan")
    return src


def test_an_import_naming_another_tenant_reports_the_relabelling(store, tmp_path):
    src = _source_memory(store)
    path = tmp_path / "acme.jsonl"
    exported = _export(src, path)
    dst = store.create_memory("dst", tenant_id="globex")
    s = dst.import_log_facts(path)
    named = [json.loads(x)["scope"]["tenantId"] for x in path.read_text().splitlines()]
    assert set(named) == {"acme"} and len(named) == exported.records
    assert s.relabelled_tenants == {"acme": exported.records}
    d = s.to_dict()
    assert d["relabelled_records"] == exported.records
    assert d["relabelled_tenants"] == {"acme": exported.records}
    assert any("'acme'" in w and "'globex'" in w for w in s.warnings)
    assert dst.inspect(U, "diet").value == "vegan"  # imported, into globex's memory
    assert store.adapter.memory_tenant("dst") == "globex"


def test_an_import_of_the_memorys_own_tenant_relabels_nothing(store, tmp_path):
    src = _source_memory(store)
    path = tmp_path / "acme.jsonl"
    _export(src, path)
    dst = store.create_memory("dst", tenant_id="acme")
    s = dst.import_log_facts(path)
    assert s.relabelled_tenants == {} and s.to_dict()["relabelled_records"] == 0
    assert not any("tenant" in w for w in s.warnings)


def test_a_file_naming_two_tenants_counts_each(store, tmp_path):
    src = _source_memory(store)
    a = tmp_path / "a.jsonl"
    _export(src, a)
    lines = [x for x in a.read_text().splitlines() if '"remem-claim-key"' not in x]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines[:1] + [x.replace('"acme"', '"initech"')
                                           for x in lines[1:]]) + "\n")
    dst = store.create_memory("dst")  # tenant 'default'
    s = dst.import_log_facts(path)
    assert s.relabelled_tenants == {"acme": 1, "initech": len(lines) - 1}


def test_the_cli_import_reports_the_tenants_in_json(store, tmp_path, db_path):
    src = _source_memory(store)
    path = tmp_path / "acme.jsonl"
    exported = _export(src, path)
    store.close()
    env = {**os.environ, "REMEM_DATABASE_URL": str(db_path), "NO_COLOR": "1"}
    env.pop("REMEM_MEMORY", None)
    out = run_cli(["--json", "import", str(path), "--memory", "fresh"], env=env, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    doc = json.loads(out.stdout)
    assert doc["relabelled_tenants"] == {"acme": exported.records}
    assert doc["relabelled_records"] == exported.records
    human = run_cli(["import", str(path), "--memory", "fresh2"], env=env, text=True)
    assert "warning:" in human.stdout and "'acme'" in human.stdout

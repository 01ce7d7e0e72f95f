"""``remem memory delete`` goes through the service's legal-hold check, as the HTTP delete
does: a memory with held items is not deleted (legal_hold_active, exit 1, the number held);
after the hold is released it is. Both backends."""

from __future__ import annotations

import json
import os

import remem
from _plugins.cli_in_process import run_cli


def _cli(url: str, *args: str) -> tuple[int, dict]:
    env = {**os.environ, "REMEM_DATABASE_URL": url, "COLUMNS": "200", "NO_COLOR": "1"}
    env.pop("REMEM_MEMORY", None)
    out = run_cli(["--json", *args], env=env, text=True)
    assert "Traceback" not in out.stderr
    return out.returncode, json.loads(out.stdout)


def test_cli_memory_delete_refuses_held_items_until_released(store_url):
    store = remem.open(store_url)
    m = store.create_memory("m1")
    a = m.remember("user:alice", "home_city", "Paris", kind="profile_slot")
    b = m.remember("user:bob", "diet", "vegan")
    m.remember("user:carol", "diet", "vegetarian")
    m.set_legal_hold(a.item_id)
    m.set_legal_hold(b.item_id)
    store.close()

    code, out = _cli(store_url, "memory", "delete", "m1", "--yes")
    assert code == 1
    err = out["error"]
    assert err["code"] == "legal_hold_active" and err["details"]["held"] == 2
    assert "2 items" in err["message"] and "release" in err["message"]
    store = remem.open(store_url)
    assert len(store.memory("m1").items(status="all").items) == 3  # nothing deleted
    m = store.memory("m1")
    m.set_legal_hold(a.item_id, False)
    m.set_legal_hold(b.item_id, False)
    store.close()

    code, out = _cli(store_url, "memory", "delete", "m1", "--yes")
    assert code == 0 and out["deleted"] is True
    code, out = _cli(store_url, "memory", "list")
    assert out == []


def test_human_output_names_the_hold_on_stderr(store_url):
    store = remem.open(store_url)
    m = store.create_memory("m1")
    m.set_legal_hold(m.remember("user:alice", "diet", "vegan").item_id)
    store.close()
    env = {**os.environ, "REMEM_DATABASE_URL": store_url, "COLUMNS": "200", "NO_COLOR": "1"}
    out = run_cli(["memory", "delete", "m1", "--yes"], env=env, text=True)
    assert out.returncode == 1
    assert "legal_hold_active" in out.stderr and "1 item of memory m1 is under legal hold" \
        in out.stderr

"""A JSON number a 64-bit float cannot give back is refused on every write interface (HTTP
body, instantKV apply, CLI, Log+Facts import, agent tool arguments), naming its field: a
non-zero number that underflows to 0 (``1e-400``), a subnormal that loses digits, and (as
before) one that overflows (``1e999``). Ordinary decimals and the smallest subnormal that
round-trips are stored as sent."""

from __future__ import annotations

import json
import os

import httpx
import pytest

import remem
from _plugins.cli_in_process import run_cli
from remem.domain import jsondoc
from remem.errors import InvalidInput
from remem.testing.served import Server

from apikit import admin_database


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    db = tmp_path_factory.mktemp("n") / "n.db"
    token = admin_database(db)
    with Server(db, startup_s=60) as srv, httpx.Client(base_url=srv.base, timeout=30) as http:
        http.headers["Authorization"] = f"Bearer {token}"
        http.headers["Content-Type"] = "application/json"
        yield http


def _count(http) -> int:
    return http.get("/memory/m1/items", params={"status": "all"}).json()["total"]


@pytest.mark.parametrize("number, why", [("1e-400", "stored as 0"),
                                         ("-2.5E-999", "stored as 0"),
                                         ("1.23456789e-320", "smallest normal"),
                                         ("1e999", "out of range")])
def test_http_write_refuses_a_number_a_float_cannot_hold(served, number, why):
    before = _count(served)
    r = served.post("/memory/m1/items", content='{"scope": "user:alice", "key": "tiny", '
                    f'"value": {{"x": [1, {number}]}}}}')
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["code"] == "invalid_input" and err["details"]["field"] == "value.x[1]"
    assert why in err["message"]
    r = served.post("/memory/m1/apply", content=json.dumps({
        "entity": "user:alice", "attribute": "tiny", "value": "v", "kind": "fact",
        "operation": "assert"}).replace('"v"', number))
    assert r.status_code == 400 and r.json()["error"]["details"]["field"] == "value", r.text
    assert _count(served) == before  # nothing written


@pytest.mark.parametrize("number, stored", [("0.1", 0.1), ("5e-324", 5e-324),
                                            ("0.0e-999", 0.0), ("1e308", 1e308),
                                            ("3.14159265358979323846", 3.141592653589793)])
def test_numbers_a_float_holds_are_stored_as_sent(served, number, stored):
    r = served.post("/memory/m1/items", content='{"scope": "user:alice", "key": "num_' +
                    str(abs(hash(number))) + f'", "value": {number}}}')
    assert r.status_code == 200, r.text
    got = served.get(f"/memory/m1/items/{r.json()['item_id']}").json()
    assert got["value"] == stored


def test_cli_json_value_refuses_an_underflow(tmp_path):
    env = {**os.environ, "REMEM_DATABASE_URL": str(tmp_path / "c.db"), "NO_COLOR": "1"}
    env.pop("REMEM_MEMORY", None)
    assert run_cli(["memory", "create", "m1"], env=env).returncode == 0
    out = run_cli(["--json", "--memory", "m1", "remember", "user:alice", "tiny", "1e-400",
                   "--json-value"], env=env, text=True)
    assert out.returncode == 1
    err = json.loads(out.stdout)["error"]
    assert err["code"] == "invalid_input" and "stored as 0" in err["message"]
    store = remem.open(tmp_path / "c.db")
    assert store.memory("m1").items(status="all").items == []


def test_import_refuses_a_line_with_an_underflow_naming_line_and_field(store, tmp_path):
    src = store.create_memory("src")
    src.remember("user:alice", "ratio", 0.5)
    path = tmp_path / "x.jsonl"
    src.export_log_facts_to(path.open("wb"))
    lines = path.read_text().splitlines()
    n = next(i for i, line in enumerate(lines, 1) if '"value":0.5' in line)
    lines[n - 1] = lines[n - 1].replace('"value":0.5', '"value":1e-400')
    path.write_text("\n".join(lines) + "\n")
    dst = store.create_memory("dst")
    with pytest.raises(InvalidInput) as info:
        dst.import_log_facts(path)
    assert info.value.details["line"] == n
    assert info.value.details["field"] == "content.value"
    assert "1e-400" not in info.value.message  # never the value
    assert dst.items(status="all").items == []


def test_agent_tool_arguments_refuse_an_underflow():
    from remem.agent.toolspec import parse_call

    with pytest.raises(InvalidInput) as info:
        parse_call("Remember", '{"key": "tiny", "value": 1e-400}', scopes_note="user:alice")
    assert "stored as 0" in info.value.message


def test_the_parser_names_the_place_of_the_number():
    with pytest.raises(InvalidInput) as info:
        jsondoc.loads('{"proposals": [{"value": 1}, {"value": {"n": 1e-400}}]}')
    assert info.value.details["field"] == "proposals[1].value.n"

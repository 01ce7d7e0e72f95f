"""Secrets belong to the operator: a memory admin cannot point a model at a URL or a variable.

A real `remem serve` on loopback gets an operator providers file registering ``remote`` (a
scripted loopback stand-in for a model service that records every request's headers) with its
key in an environment variable. A second stand-in, the "trap", plays the attacker's URL. A
memory admin tries every way to make the server send a secret to the trap; each is refused with
400 ``config_invalid`` and nothing is stored or sent. Naming ``remote`` works, and the
operator's key goes to the operator's URL only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx

from remem.testing.served import Server
import pytest

from tests.llm.llm_standin import Reply, ScriptedModelService

OPERATOR_KEY = "sk-operator-7f3a9c"
DB_PASSWORD = "pg-s3cret-pw-41"
LYON = {"claims": [{"key": "home_city", "value": "Lyon", "kind": "profile_slot",
                    "quote": "I live in Lyon.", "operation": "assert", "negated": False,
                    "valid_at": None}]}


def _cli(env: dict[str, str], *args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "remem.cli.main", *args], capture_output=True,
                         text=True, timeout=60, check=True, env=env)
    return out.stdout


@pytest.fixture
def services():
    """(operator's model service, the attacker's trap): both record what reaches them."""
    operator, trap = ScriptedModelService(), ScriptedModelService()
    yield operator, trap
    operator.close()
    trap.close()


@pytest.fixture
def server(tmp_path, services):
    """(base URL, admin headers, writer headers) of `remem serve` with the operator's file."""
    operator, _ = services
    providers = tmp_path / "providers.toml"
    providers.write_text(f'[providers.remote]\ntype = "openai"\nbase_url = "{operator.base_url}"'
                         '\napi_key_env = "REMOTE_KEY"\ntimeout_s = 20\n'
                         'models = ["scripted", "scripted-large"]\n')
    env = {**os.environ, "REMOTE_KEY": OPERATOR_KEY, "SECRET_DB_URL":
           f"postgresql://remem:{DB_PASSWORD}@db.internal:5432/remem"}
    db = str(tmp_path / "remem.db")
    base_args = ["--db", db, "--json"]
    admin = json.loads(_cli(env, *base_args, "token", "create", "--memory", "m1", "--role",
                            "admin", "--subject", "admin"))["token"]
    writer = json.loads(_cli(env, *base_args, "token", "create", "--memory", "m1", "--role",
                             "writer", "--subject", "user:alice"))["token"]
    with Server(db, ["--providers-file", str(providers)], env=env, startup_s=30) as srv:
        yield (srv.base, {"Authorization": f"Bearer {admin}"},
               {"Authorization": f"Bearer {writer}"})


def _attacks(trap_url: str) -> list[dict]:
    """Memory configs that try to reach the trap or name a secret, one per way."""
    steal = {"base_url": trap_url, "api_key_env": "SECRET_DB_URL", "model": "scripted"}
    return [
        {"extraction": {"provider": "openai", **steal}},
        {"judge": {"provider": "openai", **steal}},
        {"embedding": {"provider": "openai", **steal, "dimensions": 8}},
        {"extraction": {"provider": "remote", "base_url": trap_url}},  # override the URL
        {"extraction": {"provider": "remote", "api_key_env": "SECRET_DB_URL"}},
        {"extraction": {"provider": "remote", "api_key_file": "/etc/shadow"}},
        {"extraction": {"provider": "remote", "api_key": "sk-mine"}},
        {"embedding": {"provider": "local", "model_path": "/etc/passwd"}},
        {"extraction": {"provider": "openai", "model": "scripted"}},  # unregistered name
        {"extraction": {"provider": "trap", "model": "scripted"}},
        {"embedding": {"provider": "remote-embed", "dimensions": 8}},
        {"extraction": {"provider": "remote", "model": "gpt-4o"}},  # outside the allow-list
        {"judge": {"provider": "local"}},  # a provider that cannot judge
    ]


def _assert_clean(text: str, operator_url: str) -> None:
    """No endpoint, port or key of the operator, and no secret of the server, in a reply."""
    port = operator_url.rsplit(":", 1)[1].split("/")[0]
    for secret in (OPERATOR_KEY, DB_PASSWORD, operator_url, "127.0.0.1:" + port, "REMOTE_KEY"):
        assert secret not in text


def test_a_memory_admin_cannot_point_a_model_at_a_url_variable_or_file(server, services):
    base, admin, _ = server
    operator, trap = services
    with httpx.Client(base_url=base, timeout=20) as http:
        assert http.post("/memories", headers=admin, json={"memory_id": "m1"}).status_code == 201
        for config in _attacks(trap.base_url):
            r = http.put("/memories/m1/config", headers=admin, json=config)
            assert r.status_code == 400, (config, r.text)
            error = r.json()["error"]
            assert error["code"] == "config_invalid", r.text
            _assert_clean(r.text, operator.base_url)
            assert http.get("/memories/m1", headers=admin).json()["config"] == {}
        r = http.put("/memories/m1/config", headers=admin,
                     json={"extraction": {"provider": "nope"}})
        assert "remote" in r.json()["error"]["message"]  # the registered names are listed
        assert "rules" in r.json()["error"]["message"]
    assert trap.requests == [] and operator.requests == []


def test_a_registered_provider_works_and_gets_the_operator_key_only(server, services):
    base, admin, writer = server
    operator, trap = services
    with httpx.Client(base_url=base, timeout=30) as http:
        assert http.post("/memories", headers=admin, json={"memory_id": "m1", "config": {
            "extraction": {"provider": "remote", "model": "scripted", "max_tokens": 256}}}
                         ).status_code == 201
        operator.script(LYON)
        r = http.post("/memory/m1/observe", headers=writer, json={
            "scope": "user:alice", "text": "I live in Lyon.", "source_id": "t1"})
        assert r.status_code == 202, r.text
        receipt = http.get(f"/memory/m1/receipts/{r.json()['receipt_id']}", headers=writer)
        assert receipt.json()["phase"] == "available", receipt.text
        items = http.get("/memory/m1/items", headers=writer,
                         params={"scope": "user:alice"}).json()
        assert [i["value"] for i in items["items"]] == ["Lyon"]
        # a failing model: the run fails with a reason that names the provider, not its URL
        operator.script(*[Reply(status=401, body='{"error": {"message": "bad key"}}')] * 3)
        r = http.post("/memory/m1/observe", headers=writer, json={
            "scope": "user:alice", "text": "I live in Nice.", "source_id": "t2"})
        receipt = http.get(f"/memory/m1/receipts/{r.json()['receipt_id']}", headers=writer)
        assert receipt.json()["phase"] == "failed", receipt.text
        assert "remote" in receipt.text
        _assert_clean(receipt.text, operator.base_url)
    assert operator.requests and all(h["authorization"] == f"Bearer {OPERATOR_KEY}"
                                     for h in operator.headers)
    assert {r["model"] for r in operator.requests} == {"scripted"}
    assert trap.requests == []


# --- configs stored by an older version ------------------------------------------------------
def _legacy(store, memory_id: str, config: dict) -> None:
    """Stores a config the way an older version did: unchecked, endpoint and variable inline."""
    store.adapter.update_memory_config(memory_id, config, "2026-01-01T00:00:00Z")


def test_a_stored_legacy_extraction_endpoint_is_never_called(tmp_path, services, monkeypatch):
    import remem.testing.hashembed  # noqa: F401 - the cheap "hash" embedder
    from remem import ConfigInvalid

    _, trap = services
    monkeypatch.setenv("SECRET_DB_URL", f"postgresql://remem:{DB_PASSWORD}@db:5432/r")
    store = remem_open(tmp_path)
    mem = store.create_memory("m1", {"embedding": {"provider": "hash", "dimensions": 16}})
    mem.remember("user:alice", "home_city", "Paris")
    _legacy(store, "m1", {"embedding": {"provider": "hash", "dimensions": 16},
                          "extraction": {"provider": "openai", "base_url": trap.base_url,
                                         "model": "m", "api_key_env": "SECRET_DB_URL"},
                          "judge": {"provider": "openai", "base_url": trap.base_url,
                                    "model": "m", "api_key_env": "SECRET_DB_URL"}})
    old = store.memory("m1")  # opening works
    assert old.inspect("user:alice", "home_city").value == "Paris"
    assert [i.value for i in old.recall("user:alice", "Paris", budget_tokens=300).items] == \
        ["Paris"]
    old.remember("user:alice", "diet", "vegan")  # explicit writes need no model
    r = old.observe("user:alice", "I live in Lyon.", source_id="t1")
    got = old.receipt(r.receipt_id)
    assert got.phase == "failed" and "operator" in got.reason and "base_url" in got.reason
    assert trap.base_url not in got.reason and DB_PASSWORD not in got.reason
    with pytest.raises(ConfigInvalid, match="register"):
        old.judge.judge([{"item_id": "i1", "key": "k", "value": "v", "kind": "fact",
                          "valid_at": None}], {"key": "k", "value": "w", "kind": "fact"})
    assert trap.requests == []
    store.close()


def test_a_stored_legacy_embedding_endpoint_keeps_reads_and_refuses_writes(tmp_path, services):
    import remem.testing.hashembed  # noqa: F401 - the cheap "hash" embedder
    from remem import ConfigInvalid

    _, trap = services
    store = remem_open(tmp_path)
    mem = store.create_memory("m1", {"embedding": {"provider": "hash", "dimensions": 16}})
    mem.remember("user:alice", "home_city", "Paris")
    _legacy(store, "m1", {"embedding": {"provider": "openai", "base_url": trap.base_url,
                                        "model": "m", "dimensions": 16}})
    old = store.memory("m1")
    assert [i.value for i in old.recall("user:alice", "Paris", budget_tokens=300).items] == \
        ["Paris"]  # full text and key match still answer
    assert old.profile(["user:alice"]).text
    assert [i["value"] for i in old.context("user:alice", "Paris").items] == ["Paris"]
    [item] = old.items(scope="user:alice").items
    assert old.history(item.item_id)["item"]
    with pytest.raises(ConfigInvalid) as info:
        old.remember("user:alice", "diet", "vegan")
    assert "providers file" in info.value.message and trap.base_url not in info.value.message
    assert old.inspect("user:alice", "diet").state == "empty"
    assert item.item_id in old.forget(item.item_id).items  # erasure needs no model
    # the admin's fix: name a registered provider; the memory writes again
    store.update_config("m1", {"embedding": {"provider": "hash", "dimensions": 16}})
    assert store.memory("m1").remember("user:alice", "diet", "vegan").outcome == "created"
    assert trap.requests == []
    store.close()


def test_the_python_api_refuses_endpoints_and_lists_names_not_urls(tmp_path, services):
    from remem import ConfigInvalid

    operator, trap = services
    store = remem_open(tmp_path, providers={"remote": {
        "type": "openai", "base_url": operator.base_url, "models": ["scripted"]}})
    for config in _attacks(trap.base_url):
        with pytest.raises(ConfigInvalid) as info:
            store.create_memory("m1", config)
        _assert_clean(info.value.message + json.dumps(info.value.details), operator.base_url)
    assert store.list_memories() == []
    store.close()


def remem_open(tmp_path, **kw):
    import remem

    return remem.open(tmp_path / "legacy.db", **kw)

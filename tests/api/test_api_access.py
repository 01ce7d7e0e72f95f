"""Per-memory, per-scope access: nobody reaches what is not theirs, and probes learn nothing."""

from __future__ import annotations

import json

import pytest
from apikit import assert_error

FAKE_ITEM = "itm_000000000000000000000000"
FAKE_GROUP = "cfg_000000000000000000000000"

#: Every route under /memory/{m} or /memories/{m}: (method, path, body).
#: {item} and {group} are filled with a real id of another scope or memory, or a fake one.
ROUTES = [
    ("GET", "/memory/{m}/items", None),
    ("POST", "/memory/{m}/items", {"scope": "user:bob", "key": "home_city", "value": "Oslo"}),
    ("GET", "/memory/{m}/items/{item}", None),
    ("PUT", "/memory/{m}/items/{item}", {"value": "Oslo", "expected_revision": 1}),
    ("GET", "/memory/{m}/items/{item}/history", None),
    ("POST", "/memory/{m}/items/{item}/forget", None),
    ("POST", "/memory/{m}/items/{item}/archive", None),
    ("POST", "/memory/{m}/items/{item}/restore", None),
    ("POST", "/memory/{m}/items/{item}/hold", {"hold": True}),
    ("POST", "/memory/{m}/items/{item}/hold/release", None),
    ("POST", "/memory/{m}/items/{item}/retention", {"keep_days": 3}),
    ("GET", "/memory/{m}/inspect?scope=user:bob&key=home_city", None),
    ("POST", "/memory/{m}/observe", {"scope": "user:bob", "text": "I live in Oslo"}),
    ("POST", "/memory/{m}/recall", {"scopes": ["user:bob"], "query": "city",
                                    "budget_tokens": 200}),
    ("POST", "/memory/{m}/context", {"scopes": ["user:bob"], "query": "city"}),
    ("GET", "/memory/{m}/profile?scopes=user:bob", None),
    ("GET", "/memory/{m}/conflicts", None),
    ("POST", "/memory/{m}/conflicts/{group}/resolve", {"keep": "{item}"}),
    ("GET", "/memory/{m}/status", None),
    ("POST", "/memory/{m}/apply", {"entity": "user:bob", "attribute": "diet", "value": "vegan",
                                   "kind": "preference", "operation": "assert"}),
    ("GET", "/memory/{m}/tokens", None),
    ("POST", "/memory/{m}/tokens", {"role": "reader", "subject": "user:bob"}),
    ("DELETE", "/memory/{m}/tokens/{item}", None),
    ("GET", "/memories/{m}", None),
    ("PUT", "/memories/{m}/config", {"description": "taken over"}),
    ("DELETE", "/memories/{m}", None),
]
ITEM_ROUTES = [r for r in ROUTES if "{item}" in json.dumps(r) and "tokens" not in r[1]]


def _fill(text: str, **ids: str) -> str:
    for name, value in ids.items():
        text = text.replace("{" + name + "}", value)
    return text


def _call(api, who, method, path, body, **ids):
    data = json.loads(_fill(json.dumps(body), **ids)) if body is not None else None
    return api.request(method, _fill(path, **ids), who, json=data)


@pytest.fixture
def bob_conflict(api):
    """Bob's item in a conflict group of m1 (two asserts of a single key)."""
    for value in ("Oslo", "Bergen"):
        r = api.post("/memory/m1/apply", "bob", json={
            "entity": "user:bob", "attribute": "home_city", "value": value,
            "kind": "profile_slot", "operation": "assert"})
        assert r.status_code == 200, r.text
    item = r.json()["results"][0]["receipt"]
    assert item["conflict_group"]
    return item


def _snapshot(api):
    m = api.store.memory("m2")
    return m.status(), [v.to_dict() for v in m.items(status="all").items]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES,
                         ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_a_token_of_another_memory_gets_the_same_404_as_a_missing_memory(api, method, path,
                                                                         body):
    real = api.remember("admin2", "user:bob", "home_city", "Oslo", memory="m2")["item_id"]
    before = _snapshot(api)
    probe = _call(api, "admin", method, path, body, m="m2", item=real, group=FAKE_GROUP)
    fake = _call(api, "admin", method, path, body, m="m2", item=FAKE_ITEM, group=FAKE_GROUP)
    missing = _call(api, "admin", method, path, body, m="mX", item=real, group=FAKE_GROUP)
    err = assert_error(probe, 404, "not_found_or_not_visible")
    assert probe.content == fake.content
    assert missing.content == probe.content.replace(b"'m2'", b"'mX'").replace(b'"m2"', b'"mX"')
    assert err["details"] == {"memory": "m2"}
    assert _snapshot(api) == before


@pytest.mark.parametrize(("method", "path", "body"), ITEM_ROUTES,
                         ids=[f"{m} {p}" for m, p, _ in ITEM_ROUTES])
def test_an_item_of_another_scope_gets_the_same_404_as_a_missing_item(api, bob_conflict,
                                                                      method, path, body):
    bob_item = bob_conflict["item_id"]
    group = bob_conflict["conflict_group"]
    fake = FAKE_ITEM[: len(bob_item)]
    fake_group = FAKE_GROUP[: len(group)]
    before = api.store.memory("m1").get(bob_item)
    probe = _call(api, "alice_admin", method, path, body, m="m1", item=bob_item, group=group)
    missing = _call(api, "alice_admin", method, path, body, m="m1", item=fake, group=fake_group)
    assert_error(probe, 404, "not_found_or_not_visible")
    assert probe.content.replace(bob_item.encode(), b"ID").replace(group.encode(), b"G") == \
        missing.content.replace(fake.encode(), b"ID").replace(fake_group.encode(), b"G")
    assert api.store.memory("m1").get(bob_item) == before


def test_a_token_creates_no_memory_but_its_own(api):
    r = api.post("/memories", "admin", json={"memory_id": "m3"})
    assert_error(r, 403, "permission_denied")
    assert_error(api.post("/memories", "admin", json={"memory_id": "m2"}), 403,
                 "permission_denied")
    assert [m["memory_id"] for m in api.store.list_memories()] == ["m1", "m2"]


def test_a_user_lists_only_its_own_scope_by_default(api, bob_conflict):
    api.remember("alice", "user:alice", "home_city", "Paris")
    api.remember("bot", "agent:bot", "persona", "friendly", kind="identity")
    scopes = {i["scope"] for i in api.get("/memory/m1/items", "alice").json()["items"]}
    assert scopes == {"user:alice"}
    assert api.get("/memory/m1/conflicts", "alice").json() == []
    everything = {i["scope"] for i in api.get("/memory/m1/items", "admin").json()["items"]}
    assert everything == {"user:alice", "user:bob", "agent:bot"}


def test_listing_another_users_scope_is_denied_whether_or_not_it_has_data(api, bob_conflict):
    bob = api.get("/memory/m1/items?scope=user:bob", "alice")
    carol = api.get("/memory/m1/items?scope=user:carol", "alice")
    assert_error(bob, 403, "permission_denied")
    assert bob.content.replace(b"user:bob", b"S") == carol.content.replace(b"user:carol", b"S")
    for path in ("/memory/m1/conflicts?scope=user:bob",
                 "/memory/m1/inspect?scope=user:bob&key=home_city"):
        assert_error(api.get(path, "alice"), 403, "permission_denied")


def test_a_user_reads_the_agent_scope_but_does_not_write_it(api):
    persona = api.remember("bot", "agent:bot", "persona", "friendly", kind="identity")
    r = api.get("/memory/m1/items?scope=agent:bot", "alice_reader")
    assert [i["value"] for i in r.json()["items"]] == ["friendly"]
    assert api.get(f"/memory/m1/items/{persona['item_id']}", "alice").status_code == 200
    r = api.post("/memory/m1/items", "alice", json={"scope": "agent:bot", "key": "persona",
                                                    "value": "rude", "kind": "identity"})
    assert_error(r, 403, "permission_denied")
    r = api.put(f"/memory/m1/items/{persona['item_id']}", "alice",
                json={"value": "rude", "expected_revision": 1})
    assert_error(r, 403, "permission_denied")
    assert_error(api.post(f"/memory/m1/items/{persona['item_id']}/forget", "alice"), 403,
                 "permission_denied")
    assert api.store.memory("m1").get(persona["item_id"]).value == "friendly"


def test_an_agent_scope_is_written_by_its_agent_or_an_admin_subject(api):
    api.remember("bot", "agent:bot", "persona", "friendly", kind="identity")
    api.remember("admin", "agent:bot", "tone", "warm", kind="rule")
    api.token("other_bot", "m1", "writer", "agent:other")
    r = api.post("/memory/m1/items", "other_bot", json={"scope": "agent:bot", "key": "tone",
                                                        "value": "cold", "kind": "rule"})
    assert_error(r, 403, "permission_denied")


def test_a_read_only_token_reads_and_is_denied_every_write(api):
    item = api.remember("alice", "user:alice", "home_city", "Paris")
    iid = item["item_id"]
    for path in ("/memory/m1/items", f"/memory/m1/items/{iid}",
                 f"/memory/m1/items/{iid}/history",
                 "/memory/m1/inspect?scope=user:alice&key=home_city", "/memory/m1/conflicts",
                 "/memory/m1/profile?scopes=user:alice"):
        assert api.get(path, "alice_reader").status_code == 200, path
    r = api.post("/memory/m1/recall", "alice_reader", json={
        "scopes": ["user:alice"], "query": "city", "budget_tokens": 200})
    assert r.status_code == 200
    writes = [
        ("POST", "/memory/m1/items", {"scope": "user:alice", "key": "diet", "value": "vegan"}),
        ("PUT", f"/memory/m1/items/{iid}", {"value": "Rome", "expected_revision": 1}),
        ("POST", f"/memory/m1/items/{iid}/forget", None),
        ("POST", f"/memory/m1/items/{iid}/archive", None),
        ("POST", f"/memory/m1/items/{iid}/restore", None),
        ("POST", f"/memory/m1/items/{iid}/hold", None),
        ("POST", f"/memory/m1/items/{iid}/retention", {"keep_days": 1}),
        ("POST", "/memory/m1/apply", {"entity": "user", "attribute": "diet", "value": "vegan",
                                      "kind": "preference", "operation": "assert"}),
        ("POST", "/memory/m1/conflicts/cfg_x/resolve", {"keep": iid}),
        ("POST", "/memory/m1/observe", {"scope": "user:alice", "text": "I moved to Rome"}),
    ]
    head = api.store.memory("m1").status()["head_seq"]
    for method, path, body in writes:
        assert_error(api.request(method, path, "alice_reader", json=body), 403,
                     "permission_denied")
    assert api.store.memory("m1").status()["head_seq"] == head


def test_apply_checks_every_proposal_scope_before_writing(api):
    doc = {"applied": False, "proposals": [
        {"entity": "user", "attribute": "diet", "value": "vegan", "kind": "preference",
         "operation": "assert"},
        {"entity": "user:bob", "attribute": "diet", "value": "meat", "kind": "preference",
         "operation": "assert"}]}
    assert_error(api.post("/memory/m1/apply", "alice", json=doc), 403, "permission_denied")
    assert api.store.memory("m1").status()["head_seq"] == 0
    doc["proposals"].pop()
    r = api.post("/memory/m1/apply", "alice", json=doc)
    assert r.json()["results"][0]["receipt"]["scope"] == "user:alice"


def test_status_and_memory_admin_need_the_admin_subject(api):
    assert_error(api.get("/memory/m1/status", "alice_admin"), 403, "permission_denied")
    assert api.get("/memory/m1/status", "admin").status_code == 200
    for method, path in (("GET", "/memories/m1"), ("GET", "/memory/m1/tokens"),
                         ("DELETE", "/memories/m1")):
        assert_error(api.request(method, path, "alice_admin"), 403, "permission_denied")


def test_a_revoked_token_stops_at_once(api):
    token_id = api.tokens.list("m1")[1].token_id  # alice
    assert api.get("/memory/m1/items", "alice").status_code == 200
    r = api.delete(f"/memory/m1/tokens/{token_id}", "admin")
    assert r.json()["revoked_at"]
    assert_error(api.get("/memory/m1/items", "alice"), 401, "unauthenticated")


def test_holds_and_conflict_resolution_need_the_admin_role(api, bob_conflict):
    iid, group = bob_conflict["item_id"], bob_conflict["conflict_group"]
    assert_error(api.post(f"/memory/m1/items/{iid}/hold", "bob"), 403, "permission_denied")
    r = api.post(f"/memory/m1/conflicts/{group}/resolve", "bob", json={"keep": iid})
    assert_error(r, 403, "permission_denied")
    api.token("bob_admin", "m1", "admin", "user:bob")
    r = api.post(f"/memory/m1/conflicts/{group}/resolve", "bob_admin", json={"keep": iid})
    assert r.status_code == 200 and r.json()["kept"] == iid

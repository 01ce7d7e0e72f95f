"""Item routes do what the Memory API does, through thin handlers."""

from __future__ import annotations

from apikit import assert_error


def test_remember_then_get_returns_the_item_with_its_value(api):
    w = api.remember("alice", "user:alice", "home_city", "Paris", kind="profile_slot",
                     source={"id": "turn-1", "text": "I live in Paris", "role": "user",
                             "occurred_at": "2024-03-01T10:00:00Z"})
    assert (w["outcome"], w["revision"], w["status"]) == ("created", 1, "current")
    item = api.get(f"/memory/m1/items/{w['item_id']}", "alice").json()
    assert (item["value"], item["kind"], item["quote"]) == ("Paris", "profile_slot",
                                                            "I live in Paris")
    assert item["valid_at"].startswith("2024-03-01T10:00:00")


def test_the_same_idempotency_key_replays_the_original_result(api):
    body = {"idempotency_key": "req-1", "valid_at": "2024-05-01T00:00:00Z"}
    first = api.remember("alice", "user:alice", "diet", "vegan", **body)
    again = api.remember("alice", "user:alice", "diet", "vegan", **body)
    assert again["replayed"] is True and again["item_id"] == first["item_id"]


def test_naive_datetimes_are_rejected_before_any_work(api):
    r = api.post("/memory/m1/items", "alice", json={
        "scope": "user:alice", "key": "diet", "value": "vegan",
        "valid_at": "2024-01-01T00:00:00"})
    assert_error(r, 422, "validation_failed")


def test_listing_pages_with_a_cursor_until_it_is_null(api):
    ids = {api.remember("alice", "user:alice", f"fact_{i}", f"value {i}")["item_id"]
           for i in range(5)}
    seen, cursor, pages = [], None, 0
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = api.get("/memory/m1/items", "alice", params=params).json()
        seen += [i["item_id"] for i in page["items"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert sorted(seen) == sorted(ids) and pages == 3
    assert_error(api.get("/memory/m1/items?cursor=bogus", "alice"), 400, "invalid_input")


def test_correct_supersedes_and_history_names_the_token(api):
    w = api.remember("alice", "user:alice", "home_city", "Paris")
    r = api.put(f"/memory/m1/items/{w['item_id']}", "alice",
                json={"value": "Berlin", "expected_revision": 1})
    assert r.status_code == 200 and r.json()["outcome"] == "corrected"
    listed = api.get("/memory/m1/items?status=all", "alice").json()["items"]
    assert {(i["value"], i["status"]) for i in listed} == {("Paris", "superseded"),
                                                           ("Berlin", "current")}
    only = api.get("/memory/m1/items?status=superseded", "alice").json()["items"]
    assert [i["value"] for i in only] == ["Paris"]
    h = api.get(f"/memory/m1/items/{r.json()['item_id']}/history", "alice").json()
    token_id = api.tokens.list("m1")[1].token_id
    assert {e["actor"] for e in h["events"]} == {f"token:{token_id}"}
    assert len(h["versions"]) == 2
    inspected = api.get("/memory/m1/inspect", "alice_reader",
                        params={"scope": "user:alice", "key": "home_city"}).json()
    assert (inspected["value"], inspected["revision"]) == ("Berlin", 2)


def test_archive_and_restore(api):
    w = api.remember("alice", "user:alice", "diet", "vegan")
    r = api.post(f"/memory/m1/items/{w['item_id']}/archive", "alice")
    assert r.json()["status"] == "archived"
    assert api.get("/memory/m1/items", "alice").json()["items"] == []
    r = api.post(f"/memory/m1/items/{w['item_id']}/restore", "alice")
    assert r.json()["status"] == "current"


def test_a_legal_hold_blocks_forget_until_released(api):
    w = api.remember("alice", "user:alice", "diet", "vegan")
    path = f"/memory/m1/items/{w['item_id']}"
    assert api.post(f"{path}/hold", "alice_admin").json() == {"item_id": w["item_id"],
                                                              "legal_hold": True}
    err = assert_error(api.post(f"{path}/forget", "alice"), 409, "legal_hold_active")
    assert err["details"]["report"]["state"] == "blocked"
    api.post(f"{path}/hold", "alice_admin", json={"hold": False})
    report = api.post(f"{path}/forget", "alice").json()
    assert report["state"] == "completed" and report["items"] == [w["item_id"]]
    assert report["surfaces"]["payloads"] == {"erased": 1, "state": "erased"}
    assert_error(api.get(path, "alice"), 404, "not_found_or_not_visible")


def test_retention_sets_keep_until(api):
    w = api.remember("alice", "user:alice", "diet", "vegan")
    r = api.post(f"/memory/m1/items/{w['item_id']}/retention", "alice", json={"keep_days": 2})
    assert r.json()["keep_until"]
    assert api.get(f"/memory/m1/items/{w['item_id']}", "alice").json()["keep_until"] == \
        r.json()["keep_until"]


def _conflict(api, who="alice", scope="user:alice"):
    for value in ("Paris", "Lyon"):
        r = api.post("/memory/m1/apply", who, json={
            "entity": scope, "attribute": "home_city", "value": value,
            "kind": "profile_slot", "operation": "assert"})
    return r.json()["results"][0]["receipt"]


def test_conflicts_are_listed_and_resolved_by_an_admin(api):
    receipt = _conflict(api)
    groups = api.get("/memory/m1/conflicts", "alice").json()
    assert [(g["group_id"], len(g["items"])) for g in groups] == [(receipt["conflict_group"], 2)]
    keep = groups[0]["items"][0]["item_id"]
    r = api.post(f"/memory/m1/conflicts/{receipt['conflict_group']}/resolve", "alice_admin",
                 json={"keep": keep})
    assert r.status_code == 200 and r.json()["kept"] == keep
    assert api.get("/memory/m1/conflicts", "alice").json() == []


def test_resolving_with_an_item_outside_the_group_is_400_naming_keep(api):
    receipt = _conflict(api)
    other = api.remember("alice", "user:alice", "diet", "vegan")["item_id"]
    r = api.post(f"/memory/m1/conflicts/{receipt['conflict_group']}/resolve", "alice_admin",
                 json={"keep": other})
    assert assert_error(r, 400, "invalid_input")["details"]["field"] == "keep"
    r = api.post("/memory/m1/conflicts/grp_no_such_group/resolve", "alice_admin",
                 json={"keep": other})
    assert_error(r, 404, "not_found_or_not_visible")


def test_apply_runs_an_envelope_and_reports_each_proposal(api):
    doc = {"applied": False, "proposals": [
        {"entity": "user", "attribute": "diet", "value": "vegan", "kind": "preference",
         "operation": "assert", "source": {"id": "t1", "text": "I'm vegan"}},
        {"entity": "user:alice", "attribute": "home_city", "value": "Paris",
         "kind": "profile_slot", "operation": "assert"}]}
    out = api.post("/memory/m1/apply", "alice", json=doc).json()
    assert out["ok"] is True
    assert [r["receipt"]["status"] for r in out["results"]] == ["created", "created"]
    assert all("error" not in r for r in out["results"])


def test_apply_rejects_bad_documents_with_400_and_writes_nothing(api):
    bad = [b"[]", b'{"entity": "user", "entity": "user"}',
           b'{"proposals": [], "applied": true}',
           b'{"entity": "user", "attribute": "diet", "value": "v", "kind": "nope", '
           b'"operation": "assert"}']
    for body in bad:
        r = api.post("/memory/m1/apply", "alice", content=body,
                     headers={"content-type": "application/json"})
        assert_error(r, 400, "invalid_input")
    assert api.store.memory("m1").status()["head_seq"] == 0


def test_status_reports_head_and_counts(api):
    api.remember("alice", "user:alice", "diet", "vegan")
    status = api.get("/memory/m1/status", "admin").json()
    assert status["memory"] == "m1" and status["head_seq"] >= 1
    assert status["items"] == {"current": 1}

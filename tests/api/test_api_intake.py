"""Receipts, barriers and the KIP binding over HTTP, with the same access rules."""

from __future__ import annotations

from apikit import assert_error


def _observe(api, as_="alice", scope="user:alice", sid="turn-1", text="I live in Lisbon."):
    r = api.post("/memory/m1/observe", as_, json={"scope": scope, "text": text,
                                                   "source_id": sid})
    assert r.status_code == 202, r.text
    return r.json()


def test_a_receipt_is_readable_by_its_scope_and_neutral_404_elsewhere(api):
    rc = _observe(api)
    got = api.get(f"/memory/m1/receipts/{rc['receipt_id']}", "alice_reader")
    assert got.status_code == 200 and got.json()["phase"] == "available"
    assert got.json()["accepted_seq"] <= got.json()["available_seq"]
    hidden = api.get(f"/memory/m1/receipts/{rc['receipt_id']}", "bob")
    missing = api.get("/memory/m1/receipts/rcpt_nope", "bob")
    assert_error(hidden, 404, "not_found_or_not_visible")
    assert hidden.json()["error"]["message"] != "" and hidden.status_code == missing.status_code
    other_memory = api.get(f"/memory/m2/receipts/{rc['receipt_id']}", "admin2")
    assert other_memory.status_code == 404


def test_recall_with_a_barrier_reports_status_and_eligibility(api):
    rc = _observe(api)
    r = api.post("/memory/m1/recall", "alice", json={
        "scopes": ["user:alice"], "query": "where does alice live", "budget_tokens": 2000,
        "after": [rc["receipt_id"]]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "succeeded" and body["action_eligible"] is True
    assert [i["value"] for i in body["items"] if i["key"] == "home_city"] == ["Lisbon"]
    foreign = api.post("/memory/m1/recall", "bob", json={
        "scopes": ["user:bob"], "query": "x", "budget_tokens": 500,
        "after": [rc["receipt_id"]]})
    assert_error(foreign, 404, "not_found_or_not_visible")


def _kip_failed(r, status: int, code: str) -> None:
    """A refused KIP request: the remem status and a KIP failed response (schema-valid)."""
    from remem.service.kip_schema import errors

    body = r.json()
    assert r.status_code == status and errors(body, "Response") == [], r.text
    assert body["status"] == "failed" and body["error"]["details"]["remem_code"] == code


def test_kip_observe_and_recall_round_trip(api):
    staged = api.post("/memory/m1/kip/sources", "alice", json={
        "scope": "user:alice", "source_ref": "k1", "text": "I'm allergic to peanuts."})
    assert staged.status_code == 201, staged.text
    obs = api.post("/memory/m1/kip", "alice", json={
        "kip_memory": "2.0", "operation": "observe", "scope": {"task_ref": "user:alice"},
        "idempotency_key": "obs-1", "input": {"source_ref": "k1"}})
    assert obs.status_code == 200, obs.text
    rid = obs.json()["receipt"]["receipt_ref"]
    rec = api.post("/memory/m1/kip", "alice_reader", json={
        "kip_memory": "2.0", "operation": "recall", "scope": {"task_ref": "user:alice"},
        "budget": {"max_output_tokens": 1500},
        "input": {"query": "what is alice allergic to", "after": [rid]}})
    assert rec.status_code == 200, rec.text
    assert rec.json()["status"] == "succeeded"
    assert "allergies: peanuts" in [i["text"] for i in rec.json()["result"]["items"]]
    denied = api.post("/memory/m1/kip", "alice_reader", json={
        "kip_memory": "2.0", "operation": "observe", "scope": {"task_ref": "user:alice"},
        "idempotency_key": "obs-2", "input": {"source_ref": "k1"}})
    _kip_failed(denied, 403, "permission_denied")
    other = api.post("/memory/m1/kip", "bob", json={
        "kip_memory": "2.0", "operation": "recall", "scope": {"task_ref": "user:alice"},
        "input": {"query": "allergic"}})
    _kip_failed(other, 403, "permission_denied")
    bad = api.post("/memory/m1/kip", "alice", json={
        "kip_memory": "2.0", "operation": "recall", "scope": {"task_ref": "user:alice"},
        "requires": ["memory_learning"], "input": {"query": "x"}})
    _kip_failed(bad, 422, "unsupported_capability")

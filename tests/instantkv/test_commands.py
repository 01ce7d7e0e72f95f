"""The drop-in verbs on the embedded database: input forms and limits, output budgets, the
slots left out of profile/context, inspect of expired and conflicted slots, per-slot bounds
and diagnostics that echo no input."""

from __future__ import annotations

import json

import pytest
from ikvkit import proposal

import remem
from remem.service.apply import apply_document
from remem.service.slots import MAX_SLOT_HISTORY, MAX_SLOT_RECEIPTS


def test_apply_reads_a_file_stdin_and_dash(ikv, tmp_path):
    f = tmp_path / "create.json"
    f.write_text(json.dumps(proposal()))
    assert ikv("apply", "--file", str(f)).json()["status"] == "created"
    assert ikv("apply", input=f.read_bytes()).json()["replayed"] is True  # apply < F
    assert ikv("apply", "--file", "-", input=f.read_bytes()).json()["replayed"] is True


def test_apply_input_over_65536_bytes_fails_before_anything_is_written(ikv):
    doc = json.dumps(proposal()) + " " * 65_536
    r = ikv.apply(doc)
    assert r.code != 0 and r.error()["error"]["code"] == "invalid_input"
    assert ikv("inspect", "user", "response_style").code != 0  # missing slot: nonzero


@pytest.mark.parametrize("doc", [
    json.dumps([proposal()]),                                         # bare array
    json.dumps({"proposals": [proposal()], "applied": True}),        # an outcomes payload
    '{"entity": "user", "entity": "user"}',                          # duplicate field
    json.dumps({"proposals": [proposal()] * 9, "applied": False}),   # more than eight
])
def test_apply_refuses_documents_the_seed_rejects(ikv, doc):
    r = ikv.apply(doc)
    assert r.code != 0 and r.error()["error"]["code"] == "invalid_input"
    assert ikv("profile").json()["items"] == []


def test_the_preview_envelope_applies_each_proposal_with_results(ikv):
    doc = {"proposals": [proposal(), proposal(attribute="home_city", value="Paris",
                                              kind="fact")], "applied": False}
    out = ikv.apply(json.dumps(doc)).json()
    assert out["applied"] is True
    assert [(r["index"], r["receipt"]["status"]) for r in out["results"]] == [
        (0, "created"), (1, "created")]
    assert all(isinstance(r["next_action"], str) for r in out["results"])


def test_max_bytes_is_bounded_and_truncation_is_reported(ikv):
    for i in range(6):
        ikv.apply(proposal(attribute=f"topic_{i}", value=f"bullets number {i}",
                           source_id=f"turn-{i}"))
    for bad in ("127", "65537"):
        assert ikv("profile", "--max-bytes", bad).code != 0
        assert ikv("context", "bullets", "--max-bytes", bad).code != 0
    for args in (("profile",), ("context", "bullets")):
        full = ikv(*args, "--max-bytes", "65536").json()
        small = ikv(*args, "--max-bytes", "400").json()
        assert full["truncated"] is False and len(full["items"]) == 6
        assert small["truncated"] is True and 0 < len(small["items"]) < 6
        compact = json.dumps(small, ensure_ascii=False, separators=(",", ":"))
        assert len(compact.encode()) <= 400


def test_expired_and_conflicted_slots_are_left_out_and_inspect_says_why(ikv):
    ikv.apply(proposal(attribute="mood", value="sleepy", kind="fact",
                       valid_until_ms=1791504000000 + 1000))  # long past
    ikv.apply(proposal())
    conflict = ikv.apply(proposal(value="long prose", source_id="guide/turn-5"))
    assert conflict.code != 0 and conflict.json()["status"] == "conflict"
    ikv.apply(proposal(attribute="home_city", value="Paris", kind="fact"))
    assert [i["attribute"] for i in ikv("profile").json()["items"]] == ["home_city"]
    assert ikv("context", "sleepy bullets prose Paris").json()["items"][0]["attribute"] == \
        "home_city"
    mood = ikv("inspect", "user", "mood").json()
    assert (mood["state"], mood["expired"], mood["value"]) == ("expired", True, None)
    slot = ikv("inspect", "user", "response_style").json()
    assert slot["state"] == "conflict"
    assert sorted(c["value"] for c in slot["conflicts"]) == ["long prose", "short bullets"]


def test_a_full_history_fails_with_a_typed_error_and_next_action(ikv):
    rev = ikv.apply(proposal()).json()["revision"]
    for i in range(MAX_SLOT_HISTORY):
        r = ikv.apply(proposal(operation="correct", value=f"style {i}",
                               expected_revision=rev, source_id=f"fix-{i}"))
        assert r.code == 0, r.stderr
        rev = r.json()["revision"]
    full = ikv.apply(proposal(operation="correct", value="one more", expected_revision=rev,
                              source_id="fix-full"))
    assert full.code != 0
    body = full.error()
    assert body["error"]["code"] == "slot_full"
    assert body["error"]["details"]["bound"] == "history"
    assert "retry protection" in body["next_action"]
    assert ikv("inspect", "user", "response_style").json()["revision"] == rev  # unwritten
    again = ikv.apply(proposal(operation="correct", value=f"style {MAX_SLOT_HISTORY - 1}",
                               expected_revision=rev - 1, source_id=f"fix-{MAX_SLOT_HISTORY - 1}"))
    assert again.json()["replayed"] is True  # retries of what it holds still replay


def test_replay_receipts_per_slot_are_bounded(tmp_path):
    store = remem.open(tmp_path / "r.db")
    m = store.create_memory("knowledge")
    for i in range(MAX_SLOT_RECEIPTS):
        doc = json.dumps(proposal(source_id=f"seen-{i}"))
        out = apply_document(m, doc, default_scope="user:personal")
        assert "receipt" in out["results"][0], out
    out = apply_document(m, json.dumps(proposal(source_id="seen-full")),
                         default_scope="user:personal")
    assert out["results"][0]["error"]["code"] == "slot_full"
    assert out["results"][0]["error"]["details"]["bound"] == "receipts"
    store.close()


def test_diagnostics_never_echo_input_text(ikv):
    secret_value = "TOPSECRETVALUE" * 80  # over the 1,024-byte value limit
    r = ikv.apply(proposal(value=secret_value))
    assert r.code != 0 and "TOPSECRET" not in r.stderr + r.stdout
    quote = "CONFIDENTIALQUOTE" * 40  # over the 512-byte quote limit
    p = proposal()
    p["source"]["text"] = quote
    r = ikv.apply(p)
    assert r.code != 0 and "CONFIDENTIAL" not in r.stderr + r.stdout
    r = ikv.apply('{"entity": "user", "value": "PRIVATEBYTES" ')  # broken JSON
    assert r.code != 0 and "PRIVATEBYTES" not in r.stderr + r.stdout


def test_scope_maps_a_bare_name_to_a_user_scope_and_a_handle_as_is(ikv):
    ikv.apply(proposal())
    assert ikv("inspect", "user", "response_style").json()["scope"] == "user:personal"
    other = ikv("inspect", "user", "response_style",
                options=("--namespace", "knowledge", "--scope", "user:alice"))
    assert other.code != 0 and other.error()["error"]["code"] == "not_found_or_not_visible"
    by_handle = ikv("inspect", "user:personal", "response_style").json()
    assert by_handle["value"] == "short bullets"


def test_without_namespace_the_verbs_are_remems_own(ikv):
    ikv.apply(proposal())
    r = ikv("--memory", "knowledge", "--json", "inspect", "user:personal", "response_style",
            options=())
    assert r.code == 0 and r.json()["cardinality"] == "single"  # remem's Inspection shape


def test_receipt_statuses_the_seed_names(ikv):
    assert ikv.apply(proposal()).json()["status"] == "created"
    dup = ikv.apply(proposal(source_id="guide/turn-7"))  # same value, new observation
    assert (dup.code, dup.json()["status"], dup.json()["replayed"]) == (0, "duplicate", False)
    reused = ikv.apply(proposal(value="long prose"))  # turn-1 again, another payload
    assert reused.code != 0 and reused.error()["error"]["code"] == "idempotency_conflict"
    other_slot = ikv.apply(proposal(attribute="home_city", value="Paris", kind="fact"))
    assert other_slot.json()["status"] == "created"  # one source id, different slots
    older = proposal(value="long prose", source_id="guide/turn-0")
    older["source"]["occurred_at_ms"] = 1791503000000
    stale = ikv.apply(older)
    assert stale.json()["status"] == "stale"
    assert ikv("inspect", "user", "response_style").json()["value"] == "short bullets"


def test_aggregate_metadata_can_fill_before_the_receipt_count(tmp_path):
    """24 receipts are allowed, but 256-byte source ids fill the 8,192 managed metadata
    bytes first (the seed: "aggregate metadata can fill before the item counts")."""
    store = remem.open(tmp_path / "m.db")
    m = store.create_memory("knowledge")
    for i in range(MAX_SLOT_RECEIPTS):
        sid = f"s{i:02d}-" + "x" * 252  # 256 bytes, the largest source id
        out = apply_document(m, json.dumps(proposal(source_id=sid)),
                             default_scope="user:personal")["results"][0]
        if "error" in out:
            break
    store.close()
    assert i + 1 <= MAX_SLOT_RECEIPTS  # the receipt count alone would take this write
    assert out["error"]["code"] == "slot_full"
    assert out["error"]["details"]["bound"] == "metadata_bytes"

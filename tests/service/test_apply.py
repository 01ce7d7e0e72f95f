"""instantKV proposals through ``service.apply`` (seed 003 "Create, read, correct and forget"
and "Limits and recovery")."""

from __future__ import annotations

import copy
import json

import pytest

from remem.service.apply import apply_document
from remem.errors import InvalidInput

#: The seed's create.json, with the scope handle as entity.
CREATE = {
    "entity": "user:alice",
    "attribute": "response_style",
    "value": "short bullets",
    "kind": "preference",
    "operation": "assert",
    "source": {"id": "guide/turn-1", "text": "Please use short bullets.", "role": "user",
               "occurred_at_ms": 1791504000000},
    "valid_until_ms": None,
}


def proposal(**changes) -> dict:
    p = copy.deepcopy(CREATE)
    src = changes.pop("source", None)
    p.update(changes)
    if src is not None:
        p["source"] = {**p["source"], **src}
    return p


def envelope(*props) -> str:
    return json.dumps({"proposals": list(props), "applied": False})


def head(memory) -> int:
    return memory.status()["head_seq"]


def receipt(out, index=0) -> dict:
    return out["results"][index]["receipt"]


# --- single proposal and the envelope ---------------------------------------------------------


def test_a_single_proposal_is_applied_and_inspectable(memory):
    out = apply_document(memory, json.dumps(CREATE))
    assert out["applied"] is True and out["ok"] is True
    r = receipt(out)
    assert (r["scope"], r["key"], r["revision"], r["status"], r["replayed"]) == (
        "user:alice", "response_style", 1, "created", False)
    assert out["results"][0]["next_action"] == "none"
    i = memory.inspect("user:alice", "response_style")
    assert (i.value, i.kind, i.revision) == ("short bullets", "preference", 1)
    assert i.source == {"id": "guide/turn-1", "text": "Please use short bullets.",
                        "role": "user"}
    assert i.current[0].valid_at == "2026-10-09T00:00:00.000000Z"  # from occurred_at_ms


def test_entity_user_maps_to_the_default_scope(memory):
    out = apply_document(memory, json.dumps(proposal(entity="user")),
                         default_scope="user:alice")
    assert receipt(out)["scope"] == "user:alice"
    with pytest.raises(InvalidInput) as info:
        apply_document(memory, json.dumps(proposal(entity="user")))
    assert info.value.details["field"] == "entity"
    with pytest.raises(InvalidInput):
        apply_document(memory, json.dumps(proposal(entity="alice")))


def test_an_envelope_of_eight_proposals_is_applied_in_order(memory):
    props = [proposal(attribute="hobbies", value=f"hobby {n}", kind="fact",
                      source={"id": f"turn-{n}"}) for n in range(8)]
    out = apply_document(memory, envelope(*props))
    assert out["ok"] and [r["index"] for r in out["results"]] == list(range(8))
    assert [receipt(out, n)["status"] for n in range(8)] == ["created"] * 8
    assert len(memory.inspect("user:alice", "hobbies").value) == 8


def test_nine_proposals_are_rejected_and_nothing_is_written(memory):
    props = [proposal(attribute="hobbies", value=f"hobby {n}", source={"id": f"t{n}"})
             for n in range(9)]
    with pytest.raises(InvalidInput) as info:
        apply_document(memory, envelope(*props))
    assert info.value.details["field"] == "proposals" and "8" in info.value.message
    assert head(memory) == 0


@pytest.mark.parametrize(("text", "field"), [
    (json.dumps([CREATE]), "input"),  # a bare array
    (json.dumps({"proposals": [CREATE], "applied": True}), "applied"),  # an outcomes payload
    (json.dumps({"proposals": [CREATE]}), "applied"),
    (json.dumps({"proposals": [CREATE], "applied": False, "extra": 1}), "applied"),
    (json.dumps({"proposals": [], "applied": False}), "proposals"),
    ("not json", "input"),
    ('"just a string"', "input"),
    (json.dumps(CREATE)[:-1] + ', "value": "other"}', "value"),  # duplicate field
    (json.dumps(CREATE).replace('"role": "user"', '"role": "user", "role": "tool"'), "role"),
    (json.dumps(CREATE).replace('"short bullets"', "NaN"), "value"),
    (json.dumps(CREATE).replace('"short bullets"', "Infinity"), "value"),
    (json.dumps(CREATE).replace('"short bullets"', "-Infinity"), "value"),
    (json.dumps(CREATE).replace('"short bullets"', "1e999"), "value"),
    (json.dumps(proposal(colour="red")), "colour"),
    (json.dumps({k: v for k, v in CREATE.items() if k != "kind"}), "kind"),
    (json.dumps(proposal(operation="upsert")), "operation"),
    (json.dumps(proposal(operation="correct")), "expected_revision"),
    (json.dumps(proposal(operation="correct", expected_revision="1")), "expected_revision"),
    (json.dumps(proposal(valid_until_ms="tomorrow")), "valid_until_ms"),
    (json.dumps(proposal(source={"occurred_at_ms": 1.5})), "source.occurred_at_ms"),
    (json.dumps(proposal(kind="gossip")), "kind"),
    (json.dumps(proposal(valid_until_ms=10**20)), "valid_until_ms"),
    (json.dumps(proposal(source={"occurred_at_ms": -10**20})), "source.occurred_at_ms"),
], ids=["bare-array", "applied-true", "no-applied", "extra-envelope-field", "empty-list",
        "not-json", "not-an-object", "duplicate-field", "duplicate-nested-field", "nan",
        "infinity", "minus-infinity", "overflow-to-inf", "unknown-field", "missing-kind",
        "bad-operation", "correct-without-revision", "revision-not-int", "valid-until-not-int",
        "occurred-at-not-int", "unknown-kind", "valid-until-out-of-range",
        "occurred-at-out-of-range"])
def test_malformed_input_is_rejected_and_nothing_is_written(memory, text, field):
    with pytest.raises(InvalidInput) as info:
        apply_document(memory, text)
    assert info.value.details.get("field") == field, info.value.details
    assert head(memory) == 0


def test_input_over_65536_bytes_is_rejected(memory):
    text = json.dumps(CREATE) + " " * 65_536
    with pytest.raises(InvalidInput) as info:
        apply_document(memory, text)
    assert info.value.details["field"] == "input"
    assert head(memory) == 0


@pytest.mark.parametrize("bad", [
    {"value": "   "},
    {"value": "x" * 1025},
    {"attribute": "style_short_bullets", "value": "short bullets"},
    {"source": {"text": "q" * 513}},
    {"source": {"id": "s" * 257}},
    {"entity": "team:x"},
    {"attribute": "Response Style"},
], ids=["blank-value", "oversize-value", "key-contains-value", "oversize-quote",
        "oversize-source-id", "unknown-scope", "bad-key"])
def test_every_proposal_is_validated_before_any_write(memory, bad):
    good1 = proposal(attribute="diet", value="vegan", source={"id": "t1"})
    good2 = proposal(attribute="home_city", value="Paris", kind="profile_slot",
                     source={"id": "t2"})
    with pytest.raises(InvalidInput) as info:
        apply_document(memory, envelope(good1, good2, proposal(**bad)))
    assert info.value.details["index"] == 2
    assert info.value.message.startswith("proposal 2: ")
    assert head(memory) == 0
    assert memory.items(status="all").items == []


# --- retries and source ids ---------------------------------------------------------------


def test_an_identical_retry_is_replayed_and_writes_nothing(memory):
    first = apply_document(memory, json.dumps(CREATE))
    before = head(memory)
    again = apply_document(memory, json.dumps(CREATE))
    assert again["ok"] and receipt(again)["replayed"] is True
    assert receipt(again)["status"] == receipt(first)["status"] == "created"
    assert receipt(again)["item_id"] == receipt(first)["item_id"]
    assert head(memory) == before


def test_an_identical_retry_without_occurred_at_is_replayed(memory):
    text = json.dumps(proposal(source={"occurred_at_ms": None}))
    apply_document(memory, text)
    before = head(memory)
    again = apply_document(memory, text)
    assert receipt(again)["replayed"] is True
    assert head(memory) == before


def test_a_source_id_reused_with_another_payload_in_the_same_slot_fails(memory):
    apply_document(memory, json.dumps(CREATE))
    before = head(memory)
    out = apply_document(memory, json.dumps(proposal(value="long paragraphs")))
    assert out["ok"] is False
    res = out["results"][0]
    assert "receipt" not in res and res["error"]["code"] == "idempotency_conflict"
    assert res["next_action"]
    assert head(memory) == before
    assert memory.inspect("user:alice", "response_style").value == "short bullets"


def test_one_source_id_may_supply_facts_to_different_slots(memory):
    out = apply_document(memory, envelope(
        proposal(attribute="diet", value="vegan"),
        proposal(attribute="home_city", value="Paris", kind="profile_slot"),
        proposal(attribute="languages", value="French", kind="fact"),
        proposal(attribute="languages", value="German", kind="fact"),
    ))
    assert out["ok"]
    assert [receipt(out, i)["status"] for i in range(4)] == ["created"] * 4
    assert sorted(memory.inspect("user:alice", "languages").value) == ["French", "German"]


def test_a_failure_mid_envelope_does_not_undo_earlier_commits(memory):
    apply_document(memory, json.dumps(CREATE))
    out = apply_document(memory, envelope(
        proposal(attribute="diet", value="vegan", source={"id": "t-diet"}),
        proposal(value="long paragraphs"),  # same source id, same slot, other payload
        proposal(attribute="timezone", value="CET", source={"id": "t-tz"}),
    ))
    assert out["ok"] is False
    assert receipt(out, 0)["status"] == "created"
    assert out["results"][1]["error"]["code"] == "idempotency_conflict"
    assert receipt(out, 2)["status"] == "created"


# --- conflicts, stale, corrections -----------------------------------------------------------


def test_a_different_assert_on_a_single_key_records_a_conflict_and_is_not_ok(memory):
    apply_document(memory, json.dumps(CREATE))
    out = apply_document(memory, json.dumps(proposal(
        value="long paragraphs", source={"id": "guide/turn-2", "occurred_at_ms": 1791504001000})))
    assert out["ok"] is False
    r = receipt(out)
    assert r["status"] == "conflict" and r["conflict_group"]
    assert "conflict" in out["results"][0]["next_action"]
    i = memory.inspect("user:alice", "response_style")
    assert i.state == "conflict" and i.value is None
    assert sorted(v.value for v in i.conflicts) == ["long paragraphs", "short bullets"]


def test_an_older_assert_returns_stale_and_does_not_become_current(memory):
    apply_document(memory, json.dumps(CREATE))
    out = apply_document(memory, json.dumps(proposal(
        value="long paragraphs", source={"id": "guide/turn-0", "occurred_at_ms": 1791503000000})))
    assert out["ok"] is True and receipt(out)["status"] == "stale"
    assert memory.inspect("user:alice", "response_style").value == "short bullets"


def test_the_same_value_from_a_new_source_is_a_duplicate(memory):
    apply_document(memory, json.dumps(CREATE))
    out = apply_document(memory, json.dumps(proposal(
        value="Short  Bullets", source={"id": "guide/turn-3", "occurred_at_ms": 1791504005000})))
    assert out["ok"] and receipt(out)["status"] == "duplicate"


def test_correct_with_the_inspected_revision_is_corrected(memory):
    apply_document(memory, json.dumps(CREATE))
    rev = memory.inspect("user:alice", "response_style").revision
    fix = proposal(operation="correct", value="brief numbered points", expected_revision=rev,
                   source={"id": "guide/turn-2", "text": "Correction: use brief numbered points.",
                           "occurred_at_ms": 1791504001000})
    out = apply_document(memory, json.dumps(fix))
    assert out["ok"] and receipt(out)["status"] == "corrected"
    assert receipt(out)["revision"] == rev + 1
    i = memory.inspect("user:alice", "response_style")
    assert (i.value, i.revision) == ("brief numbered points", rev + 1)
    assert i.source["text"] == "Correction: use brief numbered points."
    # the identical correction file retried: replayed, not a revision mismatch
    again = apply_document(memory, json.dumps(fix))
    assert again["ok"] and receipt(again)["replayed"] is True


def test_correct_settles_a_conflict(memory):
    apply_document(memory, json.dumps(CREATE))
    apply_document(memory, json.dumps(proposal(value="long paragraphs",
                                               source={"id": "t2",
                                                       "occurred_at_ms": 1791504001000})))
    rev = memory.inspect("user:alice", "response_style").revision
    out = apply_document(memory, json.dumps(proposal(
        operation="correct", value="long paragraphs", expected_revision=rev,
        source={"id": "t3", "occurred_at_ms": 1791504002000})))
    assert out["ok"] and receipt(out)["status"] == "corrected"
    i = memory.inspect("user:alice", "response_style")
    assert (i.state, i.value) == ("current", "long paragraphs")


def test_correct_with_a_stale_revision_reports_the_current_one(memory):
    apply_document(memory, json.dumps(CREATE))
    out = apply_document(memory, json.dumps(proposal(
        operation="correct", value="brief numbered points", expected_revision=7,
        source={"id": "guide/turn-2"})))
    assert out["ok"] is False
    err = out["results"][0]["error"]
    assert err["code"] == "revision_mismatch" and err["details"]["current_revision"] == 1
    assert memory.inspect("user:alice", "response_style").value == "short bullets"


def test_valid_until_ms_is_kept(memory):
    out = apply_document(memory, json.dumps(proposal(valid_until_ms=1893456000000)))
    assert out["ok"]
    assert memory.inspect("user:alice", "response_style").valid_until.startswith("2030-01-01")

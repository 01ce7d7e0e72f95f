"""The one access check: every Memory operation asks the guard, on what was parsed.

Python API level (a real SQLite file); tests/security runs the same rules over HTTP.
"""

from __future__ import annotations

import json

import pytest

from remem.domain.access import Principal, Role
from remem.errors import InvalidInput, NotFoundOrNotVisible, PermissionDenied
from remem.service.apply import apply_document

ALICE, BOB = "user:alice", "user:bob"


def as_(mem, role: str, subject: str):
    return mem.as_principal(Principal(mem.id, Role(role), subject, "t" + subject[-3:]))


@pytest.fixture
def seeded(memory):
    memory.remember(BOB, "home_city", "Bobtown-secret", kind="profile_slot")
    memory.observe(BOB, "I work at Bobcorp-secret", source_id="s-bob", derive=False)
    memory.remember(ALICE, "home_city", "Paris", kind="profile_slot")
    return memory


def kip(mem, op, inp, **scope):
    """A KIP request; a failed response raises its remem error (service.kip_responses)."""
    from remem.service.kip_responses import raise_for_failure

    req = {"kip_memory": "2.0", "operation": op, "scope": {"task_ref": ALICE, **scope},
           "input": inp}
    if op != "recall":
        req["idempotency_key"] = "k-" + op
    return raise_for_failure(mem.kip(req))


def error_text(exc: BaseException, ref: str) -> str:
    d = exc.to_dict()  # type: ignore[attr-defined]
    return str(d).replace(repr(ref), "<ref>").replace(ref, "<ref>")


@pytest.mark.parametrize("refs", [{"user:bob": 1}, [["user:bob"]], "user:bob"])
def test_kip_context_refs_in_any_other_json_shape_are_refused(seeded, refs):
    with pytest.raises(InvalidInput):
        kip(as_(seeded, "reader", ALICE), "recall", {"query": "where"}, context_refs=refs)


@pytest.mark.parametrize("ref", ["user:bob", "User:Bob", " user:bob", "user:*"])
def test_kip_context_refs_naming_another_user_never_read_it(seeded, ref):
    with pytest.raises((PermissionDenied, InvalidInput)):
        kip(as_(seeded, "reader", ALICE), "recall", {"query": "Bobtown"}, context_refs=[ref])


def test_kip_forget_of_another_users_source_is_indistinguishable_from_a_missing_one(seeded):
    alice = as_(seeded, "writer", ALICE)
    answers = []
    for ref in ("s-bob", "s-nope"):
        for mode in ("payload_only", "semantic"):
            with pytest.raises(NotFoundOrNotVisible) as info:
                kip(alice, "forget", {"target_ref": ref, "mode": mode})
            answers.append(error_text(info.value, ref))
    assert len(set(answers)) == 1
    assert seeded.store.source(seeded.id, "s-bob")["text"] == "I work at Bobcorp-secret"


def test_by_id_operations_on_another_users_item_answer_like_a_missing_item(seeded):
    bob_item = seeded.inspect(BOB, "home_city").current[0].item_id
    alice = as_(seeded, "writer", ALICE)
    for op in ("get", "history", "archive", "restore", "forget"):
        seen = []
        for ref in (bob_item, "itm_does_not_exist"):
            with pytest.raises(NotFoundOrNotVisible) as info:
                getattr(alice, op)(ref)
            seen.append(error_text(info.value, ref))
        assert seen[0] == seen[1], op
    assert seeded.inspect(BOB, "home_city").value == "Bobtown-secret"


def test_receipts_of_another_scope_answer_like_missing_ones(seeded):
    receipt = seeded.observe(BOB, "hello", source_id="s2", derive=False)
    alice = as_(seeded, "reader", ALICE)
    seen = []
    for ref in (receipt.receipt_id, "rcpt_missing"):
        with pytest.raises(NotFoundOrNotVisible) as info:
            alice.receipt(ref)
        seen.append(error_text(info.value, ref))
        with pytest.raises(NotFoundOrNotVisible):
            alice.recall(ALICE, "hello", budget_tokens=300, after=[ref])
    assert seen[0] == seen[1]


def test_a_scoped_tokens_source_ids_and_idempotency_keys_are_per_scope(seeded):
    alice = as_(seeded, "writer", ALICE)
    bob = as_(seeded, "writer", BOB)
    a = alice.observe(ALICE, "I like tea", source_id="turn-1", idempotency_key="k1")
    b = bob.observe(BOB, "I like coffee", source_id="turn-1", idempotency_key="k1")
    assert a.receipt_id != b.receipt_id and not a.replayed and not b.replayed
    assert alice.observe(ALICE, "I like tea", source_id="turn-1",
                         idempotency_key="k1").receipt_id == a.receipt_id
    w1 = alice.remember(ALICE, "drink", "tea", idempotency_key="req")
    w2 = bob.remember(BOB, "drink", "coffee", idempotency_key="req")
    assert not w2.replayed and w1.item_id != w2.item_id


def test_a_reader_writes_nothing_and_a_writer_only_its_own_scope(seeded):
    head = seeded.status()["head_seq"]
    reader = as_(seeded, "reader", ALICE)
    for call in (lambda: reader.remember(ALICE, "diet", "vegan"),
                 lambda: reader.observe(ALICE, "hi"),
                 lambda: kip(reader, "observe", {"source_ref": "x"})):
        with pytest.raises(PermissionDenied):
            call()
    writer = as_(seeded, "writer", ALICE)
    for call in (lambda: writer.remember(BOB, "diet", "vegan"),
                 lambda: writer.remember("agent:bot", "tone", "rude", kind="rule"),
                 lambda: writer.observe(BOB, "hi"),
                 lambda: apply_document(writer, json.dumps(
                     {"proposals": [{"entity": ALICE, "attribute": "diet", "value": "vegan",
                                     "kind": "preference", "operation": "assert"},
                                    {"entity": BOB, "attribute": "diet", "value": "vegan",
                                     "kind": "preference", "operation": "assert"}],
                      "applied": False}))):
        with pytest.raises(PermissionDenied):
            call()
    assert seeded.status()["head_seq"] == head


def test_memory_wide_operations_need_a_memory_admin(seeded):
    for role, subject in (("admin", ALICE), ("writer", "admin"), ("reader", ALICE)):
        m = as_(seeded, role, subject)
        calls = [m.runs, m.list_tokens, m.delete, m.run_jobs]
        if subject != "admin":  # status needs a memory-wide subject, any role
            calls.append(m.status)
        for call in calls:
            with pytest.raises(PermissionDenied):
                call()
    assert as_(seeded, "admin", "admin").status()["memory"] == seeded.id


def test_a_token_of_another_memory_reaches_nothing(store, seeded):
    store.create_memory("m2")
    other = Principal("m2", Role.ADMIN, "admin", "tx")
    with pytest.raises(NotFoundOrNotVisible) as a:
        store.memory(seeded.id, principal=other)
    with pytest.raises(NotFoundOrNotVisible) as b:
        store.memory("nope", principal=other)
    assert error_text(a.value, seeded.id) == error_text(b.value, "nope")


def test_agent_tools_are_bound_to_the_callers_principal(seeded):
    from remem.agent.tools import MemoryTools

    tools = MemoryTools(seeded, user_scope=ALICE, agent_scope="agent:bot")
    assert tools.memory.principal.subject == ALICE
    out = tools.call("SearchMemory", {"query": "Bobtown-secret city"})
    assert "Bobtown-secret" not in str(out)
    with pytest.raises(PermissionDenied):  # the service refuses, not only the tool layer
        tools.memory.remember(BOB, "home_city", "Elsewhere")
    assert seeded.inspect(BOB, "home_city").value == "Bobtown-secret"


# --- found by trying it as an attacker (closing the holes for good) ---------------------------
def test_a_scoped_token_cannot_cite_and_so_erase_another_scopes_source(seeded):
    bob = as_(seeded, "writer", BOB)
    bob.observe(BOB, "My secret password is hunter2bob", source_id="turn-1", derive=False)
    alice = as_(seeded, "writer", ALICE)
    w = alice.remember(ALICE, "k_x", "v", source={"id": "user:bob/turn-1", "text": "t"})
    report = seeded.forget(w.item_id)  # the owner's forget covers every scope
    assert report.state == "completed"
    assert seeded.store.source(seeded.id, "user:bob/turn-1")["text"].startswith("My secret")
    # payload_only forget of an item citing someone else's id answers like an unknown id
    w2 = alice.remember(ALICE, "k_y", "v2", source={"id": "s-bob", "text": "t"})
    out = kip(alice, "forget", {"target_ref": w2.item_id, "mode": "payload_only"})
    assert out["status"] == "succeeded"  # nothing of its own to erase, and nothing of bob's
    assert seeded.store.source(seeded.id, "s-bob")["text"] == "I work at Bobcorp-secret"


def test_retention_of_a_scopes_item_never_redacts_other_scopes_sources(fixed_store, clock):
    from datetime import timedelta

    m = fixed_store.create_memory("m1")
    m.observe(BOB, "Bob says his pin is 1234", source_id="b1", derive=False)
    alice = as_(m, "writer", ALICE)
    w = alice.remember(ALICE, "fav_word", "says")
    alice.set_retention(w.item_id, keep_until=clock.now() - timedelta(days=1))
    out = m.run_retention()
    assert out["erased"] == [w.item_id]
    assert out["reports"][0]["scopes"] == [ALICE]
    assert m.store.source(m.id, "b1")["text"] == "Bob says his pin is 1234"


def test_retention_takes_keep_until_or_keep_days_not_both(seeded):
    from datetime import UTC, datetime

    item = seeded.inspect(ALICE, "home_city").current[0].item_id
    with pytest.raises(InvalidInput):
        seeded.set_retention(item, keep_until=datetime(2030, 1, 1, tzinfo=UTC), keep_days=3)


def test_token_subjects_cannot_contain_the_namespace_separator(store):
    from remem.service.tokens import Tokens

    with pytest.raises(InvalidInput):
        Tokens(store).create("m1", "writer", "user:alice/x")


def test_a_scoped_tokens_runs_are_its_own_chain_and_its_ledger_actor_is_itself(seeded):
    seeded.observe(BOB, "one", source_id="r1", run_id="bobrun", derive=False)
    seeded.observe(BOB, "two", source_id="r2", run_id="bobrun", derive=False)
    alice = as_(seeded, "writer", ALICE)
    r = alice.observe(ALICE, "hello there", source_id="a1", run_id="bobrun",
                      actor="token:someone-else", derive=False)
    assert r.sequence == 0 and r.run_id == "user:alice/bobrun"  # a new chain, from 0
    last = list(seeded.store.events(seeded.id))[-1]
    assert last["type"] == "source.recorded" and last["actor"] == alice.principal.actor


def test_forgetting_a_number_erases_the_source_texts_that_state_it(memory):
    memory.observe(ALICE, "My bank PIN is 73914628, keep it", source_id="p1", derive=False)
    memory.observe(ALICE, "My street is Wallabyweg 42", source_id="p2", derive=False)
    a = memory.remember(ALICE, "bank_pin", 73914628)
    b = memory.remember(ALICE, "address", {"street": "Wallabyweg 42"})
    for w in (a, b):
        assert memory.forget(w.item_id).state == "completed"
    assert memory.store.source(memory.id, "p1")["text"] is None
    assert memory.store.source(memory.id, "p2")["text"] is None
    assert "73914628" not in str(memory.recall(ALICE, "bank PIN", budget_tokens=400).to_dict())


def test_the_cli_escapes_invisible_format_characters():
    from remem.cli.output import escape_controls, json_text

    raw = "a\u200bb\ufeffc\u2060d\u00ade\U000e0041f"
    shown = escape_controls(raw)
    assert shown == "a\\u200bb\\ufeffc\\u2060d\\xade\\U000e0041f"
    assert json.loads(json_text({"v": raw}))["v"] == raw and "\u200b" not in json_text(raw)


@pytest.mark.parametrize("option", [{"batch_size": 101}, {"intra_op_threads": 64}])
def test_a_memory_admin_cannot_mint_model_sessions_with_runtime_options(memory, option):
    from remem.errors import ConfigInvalid

    admin = as_(memory, "admin", "admin")
    with pytest.raises(ConfigInvalid):
        admin.replace_config({"embedding": {"provider": "local", **option}})
    assert memory.config == {}


def test_erasing_a_source_leaves_no_text_digest_in_its_receipt_and_replays_still_work(memory):
    text = "My passport number is X1234567"
    r = memory.observe(ALICE, text, source_id="pp", derive=False)
    row = memory.store.receipt(memory.id, r.receipt_id)
    assert row["digest"] != "redacted"
    assert memory.forget_source("pp")["state"] == "completed"
    assert memory.store.receipt(memory.id, r.receipt_id)["digest"] == "redacted"
    again = memory.observe(ALICE, text, source_id="pp", derive=False)
    assert again.replayed and again.receipt_id == r.receipt_id and again.redacted

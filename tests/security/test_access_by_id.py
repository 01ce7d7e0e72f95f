"""By-id and by-reference operations on other scopes' (and other memories') ids: refused,
and answered exactly as for an id that does not exist (byte for byte, apart from the id).
Source ids are per scope: reusing one another user used is not refused and reveals
nothing."""

from __future__ import annotations

from typing import Any

import pytest

from security.kit import (
    ALICE,
    BOB,
    BOB_MARK,
    BOT,
    SHARED_SOURCE_ID,
    T1,
    T1_MARK,
    check_others_intact,
    check_response,
    missing_like,
    rebaseline,
    sent_text,
    verdict,
)
from security.routes import fill

ITEM_OPS = {
    "get": ("GET", "/memory/{m}/items/{id}", None),
    "history": ("GET", "/memory/{m}/items/{id}/history", None),
    "correct": ("PUT", "/memory/{m}/items/{id}", {"value": "Lyon", "expected_revision": 1}),
    "forget": ("POST", "/memory/{m}/items/{id}/forget", None),
    "archive": ("POST", "/memory/{m}/items/{id}/archive", None),
    "restore": ("POST", "/memory/{m}/items/{id}/restore", None),
    "hold": ("POST", "/memory/{m}/items/{id}/hold", {"hold": True}),
    "retention": ("POST", "/memory/{m}/items/{id}/retention", {"keep_days": 30}),
}
OTHER_ITEMS = ("bob.home", "bob.archived", "bob.conflict_a", "bob.home.old", "t1.fact")
SOURCES = (SHARED_SOURCE_ID, "src-bob-2", "src-bob-quote", "src-t1-1")


def _same_answer(world, principal: str, send, real: dict[str, str], *,
                 erases: bool = True) -> None:
    """``send(ids)`` with the real ids and with missing ids of the same shape: refused, no
    leak, nothing changed, and the two answers equal once each id is a placeholder."""
    fake = {k: missing_like(v) for k, v in real.items()}
    r_real, sent = send(real)
    r_fake, _ = send(fake)
    verdict(world, principal, r_real, sent, full=erases or None)
    a, b = r_real.content, r_fake.content
    for k in real:
        a = a.replace(real[k].encode(), b"<" + k.encode() + b">")
        b = b.replace(fake[k].encode(), b"<" + k.encode() + b">")
    assert (r_real.status_code, a) == (r_fake.status_code, b), \
        f"oracle: {r_real.status_code} {a[:300]!r} vs {r_fake.status_code} {b[:300]!r}"


def _item_cases():
    for op, (method, _, _) in ITEM_OPS.items():
        principals = ("alice_reader",) if method == "GET" else \
            ("alice_reader", "alice_writer", "alice_admin")
        for target in OTHER_ITEMS:
            for p in principals:
                yield pytest.param(p, op, target, id=f"{p}-{op}-{target}")


@pytest.mark.parametrize(("principal", "op", "target"), list(_item_cases()))
def test_items_of_other_scopes_look_absent(world, principal, op, target):
    method, path, body = ITEM_OPS[op]

    def send(ids):
        url = path.format(m="m1", id=ids["id"])
        return world.call(principal, method, url, json=body), sent_text(url, body)

    _same_answer(world, principal, send, {"id": world.seed.ids[target]},
                 erases=method != "GET")


@pytest.mark.parametrize("op", ["get", "history", "forget", "archive"])
def test_items_of_another_memory_look_absent(world, op):
    method, path, body = ITEM_OPS[op]

    def send(ids):
        url = path.format(m="m2", id=ids["id"])
        return world.call("m2_admin", method, url, json=body), sent_text(url, body)

    _same_answer(world, "m2_admin", send, {"id": world.seed.ids["alice.home"]})


@pytest.mark.parametrize("principal", ["alice_reader", "m2_probe"])
@pytest.mark.parametrize("target", ["bob.obs", "t1.obs", "alice.obs"])
def test_receipts_of_other_scopes_look_absent(world, principal, target):
    if principal == "alice_reader" and target == "alice.obs":
        pytest.skip("alice's own receipt is visible to her")
    m = "m2" if principal.startswith("m2") else "m1"

    def send(ids):
        url = f"/memory/{m}/receipts/{ids['id']}"
        return world.call(principal, "GET", url), url

    _same_answer(world, principal, send, {"id": world.seed.ids[target]}, erases=False)


@pytest.mark.parametrize("via", ["http", "kip"])
@pytest.mark.parametrize("target", ["bob.obs", "t1.obs"])
def test_barriers_on_receipts_of_other_scopes_look_absent(world, via, target):
    def send(ids):
        if via == "http":
            body = {"scopes": [ALICE], "query": "home city", "budget_tokens": 500,
                    "after": [ids["id"]]}
            path = "/memory/m1/recall"
        else:
            body = {"kip_memory": "2.0", "operation": "recall", "scope": {"task_ref": ALICE},
                    "input": {"query": "home city", "after": [ids["id"]]}}
            path = "/memory/m1/kip"
        return world.call("alice_reader", "POST", path, json=body), sent_text(body)

    _same_answer(world, "alice_reader", send, {"id": world.seed.ids[target]}, erases=False)


@pytest.mark.parametrize(("group", "keep"), [("bob.group", "bob.conflict_a"),
                                             ("bob.group", "alice.conflict_a"),
                                             ("alice.group", "bob.conflict_a")])
def test_conflict_groups_of_other_scopes_look_absent(world, group, keep):
    names = {n: world.seed.ids[n] for n in {group, keep} if not n.startswith("alice")}

    def send(ids):
        g = ids.get(group, world.seed.ids[group])
        body = {"keep": ids.get(keep, world.seed.ids[keep])}
        url = f"/memory/m1/conflicts/{g}/resolve"
        return world.call("alice_admin", "POST", url, json=body), sent_text(url, body)

    _same_answer(world, "alice_admin", send, names)


def _forget_targets():
    for mode in ("semantic", "payload_only"):
        for target in ("bob.home", "bob.archived", "bob.quoted", "t1.fact", "bob.obs",
                       *SOURCES):
            for p in ("alice_writer", "alice_admin"):
                if p == "alice_writer" or target in ("bob.home", SHARED_SOURCE_ID):
                    yield pytest.param(p, mode, target, id=f"{p}-{mode}-{target}")


@pytest.mark.parametrize(("principal", "mode", "target"), list(_forget_targets()))
def test_kip_forget_of_other_scopes_refs_looks_absent_and_erases_nothing(world, principal,
                                                                         mode, target):
    ref = world.seed.ids.get(target, target)

    def send(ids):
        body = {"kip_memory": "2.0", "operation": "forget", "scope": {"task_ref": ALICE},
                "idempotency_key": f"forget-{principal}-{mode}-{ids['ref']}",
                "input": {"target_ref": ids["ref"], "mode": mode}}
        return world.call(principal, "POST", "/memory/m1/kip", json=body), sent_text(body)

    _same_answer(world, principal, send, {"ref": ref})


def test_kip_forget_from_another_memory_looks_absent(world):
    def send(ids):
        body = {"kip_memory": "2.0", "operation": "forget", "scope": {"task_ref": ALICE},
                "idempotency_key": f"forget-m2-{ids['ref']}",
                "input": {"target_ref": ids["ref"], "mode": "semantic"}}
        return world.call("m2_admin", "POST", "/memory/m2/kip", json=body), sent_text(body)

    _same_answer(world, "m2_admin", send, {"ref": world.seed.ids["alice.home"]})


@pytest.mark.parametrize(("principal", "memory", "token"), [
    ("root", "m1", "m2_probe"), ("m2_admin", "m2", "m1_spare")])
def test_tokens_of_another_memory_look_absent(world, principal, memory, token):
    def send(ids):
        url = f"/memory/{memory}/tokens/{ids['id']}"
        return world.call(principal, "DELETE", url), url

    _same_answer(world, principal, send, {"id": world.token_ids[token]})


# --- source ids and runs are per scope -----------------------------------------------------
def _own_write(world, principal: str, r, sent: str) -> None:
    """A permitted write by alice: no leak, bob's, the thread's and the agent's state as
    before; then alice's new state becomes the baseline."""
    verdict(world, principal, r, sent, refused=False, full=True, head=False,
            scopes=(BOB, T1, BOT))
    rebaseline(world)


def _observe(world, source_id: str | None = None, run_id: str | None = None,
             via: str = "http", text: str = "I like green tea."):
    if via == "http":
        body = {"scope": ALICE, "text": text, "source_id": source_id, "run_id": run_id}
        r = world.call("alice_writer", "POST", "/memory/m1/observe",
                       json={k: v for k, v in body.items() if v is not None})
        return r, sent_text(body), (r.json() if r.status_code < 300 else None)
    stage = {"scope": ALICE, "source_ref": source_id, "text": text,
             **({"run_id": run_id} if run_id else {})}
    staged = world.call("alice_writer", "POST", "/memory/m1/kip/sources", json=stage)
    check_response(world, "alice_writer", staged, sent_text(stage))
    body = {"kip_memory": "2.0", "operation": "observe", "scope": {"task_ref": ALICE},
            "idempotency_key": f"obs-{source_id}-{run_id}-{text}",
            "input": {"source_ref": source_id}}
    r = world.call("alice_writer", "POST", "/memory/m1/kip", json=body)
    if r.status_code >= 300 or staged.status_code >= 300:
        return r, sent_text(stage, body), None
    out, src = r.json(), staged.json()
    return r, sent_text(stage, body), {
        "receipt_id": out["receipt"]["receipt_ref"], "phase": out["progress"]["phase"],
        "sequence": src["sequence"], "replayed": src["replayed"]}


@pytest.mark.parametrize("via", ["http", "kip"])
@pytest.mark.parametrize("source_id", [SHARED_SOURCE_ID, "src-t1-1"])
def test_a_source_id_another_scope_used_is_free_for_alice(world, via, source_id):
    world.dirty = True  # alice's own use of the id must not meet the next variant's
    fresh = f"src-fresh-{via}-{source_id}"
    r_fresh, _, fresh_receipt = _observe(world, fresh, via=via, text=f"Tea {via}.")
    _own_write(world, "alice_writer", r_fresh, "")
    r, sent, receipt = _observe(world, source_id, via=via, text=f"Tea {via} {source_id}.")
    _own_write(world, "alice_writer", r, sent)
    assert r.status_code == r_fresh.status_code, r.text
    assert receipt["replayed"] is False and receipt["phase"] == fresh_receipt["phase"]
    assert receipt["receipt_id"] not in world.seed.ids.values()


@pytest.mark.parametrize("via", ["http", "kip"])
@pytest.mark.parametrize("run", ["run-bob.obs", "run-t1.obs"])
def test_another_scopes_run_id_tells_alice_nothing(world, via, run):
    """Alice's first source in a run she names starts at sequence 1 whether or not bob's
    sources already use a run of that name."""
    world.dirty = True  # alice's own sources in the run must not meet the next variant's
    r_fresh, _, fresh = _observe(world, f"src-run-fresh-{via}-{run}", f"fresh-{via}-{run}",
                                 via=via, text=f"Coffee {via} {run} a.")
    _own_write(world, "alice_writer", r_fresh, "")
    r, sent, got = _observe(world, f"src-run-{via}-{run}", run, via=via,
                            text=f"Coffee {via} {run} b.")
    _own_write(world, "alice_writer", r, sent)
    assert r.status_code == r_fresh.status_code, r.text
    shape = {k: v for k, v in got.items() if k in ("sequence", "phase", "replayed")}
    assert shape == {k: v for k, v in fresh.items() if k in shape}


@pytest.mark.parametrize("source_id", [SHARED_SOURCE_ID, "src-bob-quote"])
@pytest.mark.parametrize("via", ["remember", "correct", "kip-revise"])
def test_naming_another_scopes_source_links_nothing_of_it(world, source_id, via):
    """Alice may cite a source id bob used; her item never shows bob's source text."""
    key = f"cited_{via.replace('-', '_')}_{source_id[-1]}"
    if via == "remember":
        body: Any = {"scope": ALICE, "key": key, "value": "tea", "kind": "fact",
                     "source": {"id": source_id}}
        r = world.call("alice_writer", "POST", "/memory/m1/items", json=body)
    elif via == "correct":
        body = {"value": f"GR{len(source_id)}", "expected_revision": 1,
                "source": {"id": source_id}}
        r = world.call("alice_writer", "PUT", f"/memory/m1/items/{world.seed.ids['alice.old']}",
                       json=body)
    else:
        stage = {"scope": ALICE, "source_ref": source_id, "text": "I live in Lisbon."}
        staged = world.call("alice_writer", "POST", "/memory/m1/kip/sources", json=stage)
        check_response(world, "alice_writer", staged, sent_text(stage))
        body = {"kip_memory": "2.0", "operation": "revise", "scope": {"task_ref": ALICE},
                "idempotency_key": f"revise-{key}",
                "input": {"source_ref": source_id, "change_kind": "world_change"}}
        r = world.call("alice_writer", "POST", "/memory/m1/kip", json=body)
    _own_write(world, "alice_writer", r, sent_text(body))
    for path, params in (("/memory/m1/items", {"status": "all"}),
                         ("/memory/m1/inspect", {"scope": ALICE, "key": key})):
        check_response(world, "alice_writer",
                       world.call("alice_writer", "GET", path, params=params), "")
    items = world.ok("alice_writer", "GET", "/memory/m1/items",
                     params={"status": "all", "limit": 1000})["items"]
    for item in items:
        h = world.call("alice_writer", "GET", f"/memory/m1/items/{item['item_id']}/history")
        check_response(world, "alice_writer", h, "")
    assert BOB_MARK not in str(items) and T1_MARK not in str(items)


def test_bob_and_the_thread_are_intact_at_the_end(world):
    """Re-read as root after this module's cases: values, sources and ledger events of
    bob's and the thread's items are as seeded."""
    check_others_intact(world)

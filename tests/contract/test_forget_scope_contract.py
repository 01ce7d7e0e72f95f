"""Forget a whole scope (issue 13.4), on SQLite and PostgreSQL: one report covering every
item and source of the scope, tombstones for every claim, nothing outside the scope touched,
legal holds refuse the whole call, and the scope is always explicit."""

from __future__ import annotations

import pytest

from remem.domain.access import Principal, Role
from remem.errors import InvalidInput, LegalHoldActive, PermissionDenied


def _fill(mem):
    """user:a holds 3 keys (one superseded, one archived, one multi) and 2 sources; user:b
    holds a value equal to one of user:a's and a source of its own."""
    ids = [mem.remember("user:a", "home_city", "Lyon").item_id]
    ids.append(mem.remember("user:a", "home_city", "Paris").item_id)  # supersedes Lyon
    ids.append(mem.remember("user:a", "employer", "Acme Robotics").item_id)
    mem.archive(ids[-1])
    ids.append(mem.remember("user:a", "allergies", "peanuts").item_id)
    mem.observe("user:a", "My sister lives in Berlin.", source_id="s1", derive=False)
    mem.observe("user:a", "I live in Paris now.", source_id="s2", derive=False)
    other = mem.remember("user:b", "home_city", "Paris").item_id
    mem.observe("user:b", "I live in Paris too.", source_id="s3", derive=False)
    return ids, other


def test_forget_scope_erases_every_item_and_source_of_the_scope(mem):
    ids, other = _fill(mem)
    rep = mem.forget_scope("user:a")
    assert rep.state == "completed" and rep.scopes == ["user:a"]
    assert set(rep.items) == set(ids)
    assert rep.tombstones == 4  # Lyon, Paris, Acme Robotics, peanuts
    assert set(rep.sources) == {"s1", "s2"}
    assert rep.surfaces["payloads"]["state"] == "erased"
    assert rep.surfaces["sources"]["state"] == "erased"
    for item_id in ids:
        assert mem.store.item(mem.id, item_id) is None  # forgotten: no readable record
    assert mem.store.source(mem.id, "s1")["text"] is None
    assert mem.store.source(mem.id, "s2")["text"] is None
    assert [i.status for i in mem.items(scope="user:a", status="all").items
            if i.status != "forgotten"] == []
    # the other scope is untouched: its equal value and its source stay
    assert mem.get(other).value == "Paris"
    assert mem.store.source(mem.id, "s3")["text"] == "I live in Paris too."
    # tombstones: the claims are not learned again by automatic paths
    for key in ("home_city", "employer", "allergies"):
        assert mem.store.key_meta(mem.id, "user:a", key)["tombstones"] >= 1
    again = mem.forget_scope("user:a")  # nothing left: an honest empty report
    assert again.state == "completed" and again.items == [] and again.sources == []


def test_forget_scope_leaves_no_text_in_the_database_files(mem, database_bytes):
    mem.remember("user:a", "diet", "zyxwvut-pescatarian")
    mem.observe("user:a", "I eat qwertyfish on fridays.", source_id="s1", derive=False)
    assert mem.forget_scope("user:a").state == "completed"
    raw = database_bytes()
    assert b"zyxwvut-pescatarian" not in raw and b"qwertyfish" not in raw


def test_a_legal_hold_refuses_the_whole_call_naming_the_count(mem):
    ids, _ = _fill(mem)
    mem.set_legal_hold(ids[3])
    mem.set_legal_hold(ids[1])
    with pytest.raises(LegalHoldActive) as exc:
        mem.forget_scope("user:a")
    assert "2 items of scope user:a are under legal hold" in exc.value.message
    assert exc.value.details["held"] == 2
    assert exc.value.details["report"]["state"] == "blocked"
    assert mem.get(ids[3]).value == "peanuts"  # nothing erased
    assert mem.store.source(mem.id, "s1")["text"] == "My sister lives in Berlin."


def test_the_scope_is_explicit_and_a_valid_handle(mem):
    mem.remember("user:a", "diet", "vegan")
    for bad in (None, "", "  ", "*", "user:*", "all"):
        with pytest.raises(InvalidInput):
            mem.forget_scope(bad)
    assert mem.inspect("user:a", "diet").revision == 1


def _token(mem, role: Role, subject: str):
    return mem.as_principal(Principal("m1", role, subject, token_id="tok_" + subject))


def test_a_scoped_writer_forgets_its_own_scope_only(mem):
    a = mem.remember("user:a", "diet", "vegan").item_id
    b = mem.remember("user:b", "diet", "keto").item_id
    bob = _token(mem, Role.WRITER, "user:b")
    with pytest.raises(PermissionDenied):
        bob.forget_scope("user:a")
    assert mem.get(a).value == "vegan"
    rep = bob.forget_scope("user:b")
    assert rep.state == "completed" and rep.items == [b]
    with pytest.raises(PermissionDenied):
        _token(mem, Role.READER, "user:a").forget_scope("user:a")
    with pytest.raises(PermissionDenied):  # a memory-wide writer is not enough
        _token(mem, Role.WRITER, "admin").forget_scope("user:a")
    assert _token(mem, Role.ADMIN, "admin").forget_scope("user:a").items == [a]

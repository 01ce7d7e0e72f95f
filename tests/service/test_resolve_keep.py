"""Resolving a conflict with a ``keep`` id that is not one of the group's items says so
(invalid_input, field ``keep``, the group's item ids), while a group that does not exist or
is not visible still reads as not found. Both backends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import remem
from remem.domain.access import Principal, Role
from remem.errors import InvalidInput, NotFoundOrNotVisible

T = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def conflicted(store_url):
    store = remem.open(store_url)
    mem = store.create_memory("mc", {"keys": {"home_city": {"on_change": "conflict"}}})
    a = mem.remember("user:alice", "home_city", "Paris", valid_at=T)
    b = mem.remember("user:alice", "home_city", "Rome", valid_at=T + timedelta(days=1))
    c = mem.remember("user:bob", "home_city", "Oslo", valid_at=T)
    d = mem.remember("user:bob", "home_city", "Kyiv", valid_at=T + timedelta(days=1))
    yield store, mem, a, b, c, d
    store.close()


def _head(mem) -> int:
    return mem.store.head_seq(mem.id)


def test_a_keep_id_outside_the_group_is_invalid_input_naming_keep(conflicted):
    store, mem, a, b, c, d = conflicted
    assert b.conflict_group and d.conflict_group and b.conflict_group != d.conflict_group
    other = mem.remember("user:alice", "diet", "vegan")
    before = _head(mem)
    for keep in (other.item_id, c.item_id, "itm_no_such_item"):
        with pytest.raises(InvalidInput) as info:
            mem.resolve_conflict(b.conflict_group, keep=keep)
        assert info.value.details["field"] == "keep"
        assert sorted(info.value.details["items"]) == sorted([a.item_id, b.item_id])
        assert "not one of the items" in info.value.message
    assert _head(mem) == before
    mem.resolve_conflict(b.conflict_group, keep=a.item_id)  # a member is kept
    assert mem.inspect("user:alice", "home_city").value == "Paris"


def test_a_missing_or_closed_group_is_still_not_found(conflicted):
    store, mem, a, b, c, d = conflicted
    with pytest.raises(NotFoundOrNotVisible) as info:
        mem.resolve_conflict("grp_no_such_group", keep=a.item_id)
    assert info.value.details == {"group_id": "grp_no_such_group"}
    mem.resolve_conflict(b.conflict_group, keep=a.item_id)
    with pytest.raises(NotFoundOrNotVisible):  # closed now
        mem.resolve_conflict(b.conflict_group, keep=b.item_id)


def test_a_group_the_caller_cannot_see_reads_as_not_found(conflicted):
    store, mem, a, b, c, d = conflicted
    alice_admin = mem.as_principal(Principal(mem.id, Role.ADMIN, "user:alice"))
    for keep in (a.item_id, c.item_id, "itm_x"):  # bob's group: never "wrong keep"
        with pytest.raises(NotFoundOrNotVisible) as info:
            alice_admin.resolve_conflict(d.conflict_group, keep=keep)
        assert "items" not in info.value.details
    with pytest.raises(InvalidInput):  # her own group with bob's item: the keep is wrong
        alice_admin.resolve_conflict(b.conflict_group, keep=c.item_id)

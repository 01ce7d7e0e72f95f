"""Every route of the live OpenAPI document against every kind of principal: no token, a
token of another memory, a reader, and scoped admins on the memory-admin routes."""

from __future__ import annotations

import pytest

from security.kit import ALICE_MARK, ALICE_PRINCIPALS, check_others_intact, sent_text, \
    verdict
from security.routes import Route, request_for, routes

ROUTES = routes()


def _send(world, principal: str, route: Route, memory_id: str = "m1"):
    req = request_for(route, world.names(memory_id))
    r = world.call(principal, req.pop("method"), req.pop("url"), **req)
    return r, sent_text(route.path, req.get("params"), req.get("json"))


def test_the_live_server_documents_exactly_the_routes_probed(world):
    live = world.ok("anon", "GET", "/openapi.json")
    assert {r.id for r in routes(live)} == {r.id for r in ROUTES}
    assert len(ROUTES) >= 29


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.id)
def test_no_token_gets_401_on_every_route(world, route):
    r, sent = _send(world, "anon", route)
    verdict(world, "anon", r, sent, full=False)
    assert r.status_code == 401, r.text


@pytest.mark.parametrize("route", [r for r in ROUTES if r.names_memory], ids=lambda r: r.id)
def test_a_token_of_m2_reaches_nothing_in_m1_and_m1_looks_absent(world, route):
    """m2's admin on m1 answers exactly as on a memory that does not exist (m9)."""
    r1, sent = _send(world, "m2_admin", route, "m1")
    r2, _ = _send(world, "m2_admin", route, "m9")
    verdict(world, "m2_admin", r1, sent, full=route.mutates)
    assert r1.status_code == r2.status_code
    assert r1.content.replace(b"m1", b"MEM") == r2.content.replace(b"m9", b"MEM")


@pytest.mark.parametrize("route", [r for r in ROUTES if r.mutates], ids=lambda r: r.id)
def test_a_reader_writes_nothing(world, route):
    r, sent = _send(world, "alice_reader", route)
    verdict(world, "alice_reader", r, sent, full=True)


@pytest.mark.parametrize("route", [r for r in ROUTES if r.memory_admin], ids=lambda r: r.id)
@pytest.mark.parametrize("principal", ALICE_PRINCIPALS)
def test_only_the_admin_subject_manages_the_memory(world, principal, route):
    r, sent = _send(world, principal, route)
    verdict(world, principal, r, sent, full=route.mutates)


@pytest.mark.parametrize("route", [r for r in ROUTES if r.method == "GET"], ids=lambda r: r.id)
def test_reads_by_alice_show_nothing_of_bob_or_the_thread(world, route):
    r, sent = _send(world, "alice_reader", route)
    verdict(world, "alice_reader", r, sent, refused=False, full=False)


@pytest.mark.parametrize("subject", ["user:*", "*", "user:%", "User:Bob", " user:bob",
                                     "user:bob ", "user: bob", "user:bob\u200b"])
def test_token_subjects_are_exact_scope_handles(world, subject):
    body = {"role": "reader", "subject": subject}
    r = world.call("root", "POST", "/memory/m1/tokens", json=body)
    verdict(world, "root", r, sent_text(body), full=False)


def test_the_principals_do_reach_what_they_own(world):
    """Positive control: the refusals above are about rights, not broken tokens."""
    r = world.call("alice_reader", "GET", "/memory/m1/items")
    assert r.status_code == 200 and ALICE_MARK in r.text
    assert world.call("root", "GET", "/memory/m1/tokens").status_code == 200
    assert world.call("m2_admin", "GET", "/memories/m2").status_code == 200


def test_bob_and_the_thread_are_intact_at_the_end(world):
    """Re-read as root after this module's cases: values, sources and ledger events of
    bob's and the thread's items are as seeded."""
    check_others_intact(world)

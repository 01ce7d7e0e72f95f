"""Round-5 probe: a scoped token's source ids and runs live under its scope
(``user:alice/t1``, ``user:alice/default``) so that "two users can neither collide on nor
probe each other's ids". A memory-wide caller (subject ``admin``) names things as given, so
it could record a source of ``user:bob`` under the id ``user:alice/t1`` and into the run
``user:alice/default``. Then alice's own ``observe(source_id="t1")`` failed with 409
``idempotency_conflict`` naming ``user:alice/t1`` — an id she never used, held by a scope she
cannot see (an existence oracle, and her id is taken for good) — and her first turn in her
own run got sequence 1, not 0. Now a memory-wide caller's name inside another scope's
namespace is put under the target scope's (``user:bob/user:alice/t1``), as the README's rule
for a source id another scope holds; the scoped namespace stays the token's own."""

from __future__ import annotations

import pytest

from security.probe4_kit import Probe


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    p = Probe(tmp_path_factory.mktemp("names"))
    yield p
    p.close()


def _squat(probe: Probe, **extra) -> dict:
    return probe.ok("root", "POST", "/memory/m1/observe", json={
        "scope": "user:bob", "text": "Bob: my PIN is 4411.", "role": "user", **extra})


def test_an_admin_cannot_take_a_source_id_in_alices_namespace(probe):
    squat = _squat(probe, source_id="user:alice/t1")
    assert squat["scope"] == "user:bob"
    assert not squat["source_id"].startswith("user:alice/")
    r = probe.call("aw", "POST", "/memory/m1/observe", json={
        "scope": "user:alice", "text": "I like tea.", "source_id": "t1"})
    assert r.status_code == 202, r.text
    assert r.json()["source_id"] == "user:alice/t1" and r.json()["scope"] == "user:alice"


def test_observe_many_and_kip_staging_keep_alices_namespace_too(probe):
    _squat(probe, source_id="user:alice/t2")
    probe.ok("root", "POST", "/memory/m1/kip/sources", json={
        "scope": "user:bob", "source_ref": "user:alice/k1", "text": "Bob staged."})
    r = probe.call("aw", "POST", "/memory/m1/observe_many", json={
        "scope": "user:alice", "turns": [{"id": "t2", "text": "I like tea."}]})
    assert r.status_code == 202, r.text
    assert r.json()["receipts"][0]["source_id"] == "user:alice/t2"
    r = probe.call("aw", "POST", "/memory/m1/kip/sources", json={
        "scope": "user:alice", "source_ref": "k1", "text": "Alice staged."})
    assert r.status_code == 201, r.text


def test_an_admin_cannot_write_into_alices_run(probe):
    squat = _squat(probe, source_id="s1", run_id="user:alice/r3")
    assert squat["run_id"] != "user:alice/r3"
    r = probe.ok("aw", "POST", "/memory/m1/observe", json={
        "scope": "user:alice", "text": "I like tea.", "source_id": "t3", "run_id": "r3"})
    assert (r["run_id"], r["sequence"]) == ("user:alice/r3", 0)


def test_an_admin_still_names_its_own_scopes_ids_as_given(probe):
    own = _squat(probe, source_id="user:bob/t9", run_id="chat")
    assert (own["source_id"], own["run_id"]) == ("user:bob/t9", "chat")
    plain = _squat(probe, source_id="chat/7")
    assert plain["source_id"] == "chat/7"

"""Fact retention (keepUntil / keepDays / legalHold) runs on a schedule through the job
runner: the retention slot job is armed per memory, erases expired facts (their blobs too),
never a held one, and re-arms itself; only an admin releases a hold (Python, HTTP on a real
``remem serve``, CLI). Both backends for the service; the served server and CLI on SQLite."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta

import httpx
import pytest
from logfacts.fact_kit import (  # noqa: F401
    ALICE,
    T0,
    assert_valid_fact,
    big_text,
    blob_dir,
    blob_files,
    clock,
    store,
)

import remem
from remem.domain.timefmt import to_iso
from remem.errors import NotFound, PermissionDenied
from remem.service.tokens import Tokens

CONFIG = {"retention": {"interval_hours": 1}}


@pytest.fixture
def mem(store):
    return store.create_memory("m1", config=CONFIG)


def as_token(store, mem, role, subject):
    token, _ = mem.create_token(role, subject)
    return store.memory("m1", principal=Tokens(store).authenticate(token))


def test_scheduled_retention_erases_expired_facts_but_never_a_held_one(store, mem, clock):
    plain = mem.remember_fact(ALICE, "diet", "vegan", retention={"keep_days": 1})
    big = mem.remember_fact(ALICE, "trip_report", big_text(100_000),
                            retention={"keep_until": T0 + timedelta(hours=12)})
    held = mem.remember_fact(ALICE, "home_city", "Berlin",
                             retention={"keep_days": 1, "legal_hold": True})
    kept = mem.remember_fact(ALICE, "pets", "a cat")  # no retention: kept
    assert mem.store.job_scheduled("m1", "retention")["run_at"] == to_iso(
        T0 + timedelta(hours=1))
    assert len(blob_files(store)) == 1
    clock.advance(days=2)
    runs = [o for o in mem.run_jobs() if o["kind"] == "retention"]
    assert len(runs) == 1  # one armed job ran (not one per interval missed)
    assert runs[0]["stats"] == {"erased": 2, "blocked": 1, "blobs": 1, "orphan_blobs": 0}
    for gone in (plain, big):
        with pytest.raises(NotFound):
            mem.fact(gone.item_id)
    assert blob_files(store) == []  # the blob file went with its fact
    rec = mem.fact(held.item_id)
    assert_valid_fact(rec)
    assert rec["retention"]["legalHold"] is True
    assert mem.fact(kept.item_id)["content"]["value"] == "a cat"
    # re-armed one interval after the run
    assert mem.store.job_scheduled("m1", "retention")["run_at"] == to_iso(
        T0 + timedelta(days=2, hours=1))
    clock.advance(hours=2)
    mem.run_jobs()  # the next scheduled run: still held, still there
    assert mem.fact(held.item_id)["retention"]["legalHold"] is True


def test_only_an_admin_releases_a_hold_and_the_next_run_erases_it(store, mem, clock):
    held = mem.remember_fact(ALICE, "home_city", "Berlin",
                             retention={"keep_days": 1, "legal_hold": True})
    writer = as_token(store, mem, "writer", ALICE)
    with pytest.raises(PermissionDenied):
        writer.release_hold(held.item_id)
    with pytest.raises(PermissionDenied):  # nor may a writer set one while writing
        writer.remember_fact(ALICE, "diet", "vegan", retention={"legal_hold": True})
    assert writer.items(scope=ALICE, key="diet").items == []
    admin = as_token(store, mem, "admin", ALICE)
    assert admin.release_hold(held.item_id) == {"item_id": held.item_id, "legal_hold": False}
    assert mem.fact(held.item_id)["retention"]["legalHold"] is False
    clock.advance(days=2)
    mem.run_jobs()
    with pytest.raises(NotFound):
        mem.fact(held.item_id)


def test_a_hold_blocks_forget_until_released(mem):
    held = mem.remember_fact(ALICE, "home_city", "Berlin", retention={"legal_hold": True})
    with pytest.raises(remem.LegalHoldActive):
        mem.forget(held.item_id)
    mem.release_hold(held.item_id)
    assert mem.forget(held.item_id).state == "completed"


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_release_hold_over_http_needs_the_admin_role(store_url):
    from remem.testing.served import Server

    s = remem.open(store_url)
    mem = s.create_memory("m1")
    held = mem.remember_fact(ALICE, "home_city", "Berlin", retention={"legal_hold": True})
    writer, _ = mem.create_token("writer", ALICE)
    admin, _ = mem.create_token("admin", "admin")
    s.close()
    path = f"/memory/m1/items/{held.item_id}/hold/release"
    with Server(store_url) as srv:
        denied = httpx.post(srv.base + path, headers={"Authorization": f"Bearer {writer}"})
        assert denied.status_code == 403
        assert denied.json()["error"]["code"] == "permission_denied"
        ok = httpx.post(srv.base + path, headers={"Authorization": f"Bearer {admin}"})
        assert ok.status_code == 200 and ok.json() == {"item_id": held.item_id,
                                                       "legal_hold": False}
        missing = httpx.post(srv.base + "/memory/m1/items/itm_000000000000000000000000/hold"
                             "/release", headers={"Authorization": f"Bearer {admin}"})
        assert missing.status_code == 404
    s = remem.open(store_url)
    assert s.memory("m1").fact(held.item_id)["retention"]["legalHold"] is False
    s.close()


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_release_hold_from_the_cli(store_url):
    s = remem.open(store_url)
    held = s.create_memory("m1").remember_fact(ALICE, "home_city", "Berlin",
                                               retention={"legal_hold": True})
    s.close()
    out = subprocess.run([sys.executable, "-m", "remem.cli.main", "--db", store_url,
                          "--memory", "m1", "--json", "hold", held.item_id, "--release"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    s = remem.open(store_url)
    assert s.memory("m1").fact(held.item_id)["retention"]["legalHold"] is False
    s.close()

"""Cached facts on both backends: stored beside the item, refreshed through the decision,
labelled stale in recall, and erased with the item."""

from __future__ import annotations

import time

import pytest

from remem.errors import (
    IdempotencyConflict,
    InvalidInput,
    NotFoundOrNotVisible,
    PermissionDenied,
)
from remem.domain.access import Principal, Role

from .cached_kit import (  # noqa: F401 - fixtures
    block,
    clock,
    cmem,
    cstore,
    loopback_handler,
    source_server,
)

SCOPE, KEY = "user:alice", "eur_usd"


def _events(mem) -> list[dict]:
    return list(mem.store.events(mem.id))


def _recall(mem, **kw):
    return mem.recall(SCOPE, "eur_usd rate", budget_tokens=300, **kw)


def test_a_cached_fact_keeps_its_source_block_beside_the_item(cmem, source_server):
    uri = source_server.url("/rate?token=s3cret")
    r = cmem.remember(SCOPE, KEY, 1.08, cached_source=block(uri, etag='"v1"'))
    got = cmem.cached_source(r.item_id)
    assert got["kind"] == "http-api" and got["uri"] == uri
    assert got["freshness"]["etag"] == '"v1"' and got["freshness"]["ttlSeconds"] == 60
    assert got["freshness"]["lastVerifiedAt"].startswith("2026-06-01T12:00:00")
    assert got["stale"] is False
    ledger = "".join(str(e["data"]) for e in _events(cmem))
    assert "s3cret" not in ledger and "127.0.0.1" not in ledger  # the ledger stays text-free


def test_a_changed_value_supersedes_through_the_decision(cmem, source_server, clock):
    source_server.resources["/rate"] = {"body": 1.09, "etag": '"v2"'}
    r = cmem.remember(SCOPE, KEY, 1.08, cached_source=block(source_server.url("/rate"),
                                                            etag='"v1"'))
    clock.advance(seconds=30)
    out = cmem.refresh(r.item_id)
    assert out["state"] == "changed" and out["new_item_id"] != r.item_id
    assert source_server.log == [("/rate", '"v1"')]  # conditional GET with the stored etag
    assert cmem.get(out["new_item_id"]).value == 1.09
    assert cmem.get(r.item_id).status == "superseded"
    superseded = [e for e in _events(cmem) if e["type"] == "item.superseded"]
    assert superseded[-1]["actor"] == "system:refresh"
    assert superseded[-1]["data"]["by"] == out["new_item_id"]
    moved = cmem.cached_source(out["new_item_id"])
    assert moved["freshness"]["etag"] == '"v2"'
    assert moved["freshness"]["lastVerifiedAt"].startswith("2026-06-01T12:00:30")
    assert cmem.cached_source(r.item_id) is None  # the old version is history, not cached


def test_304_advances_only_last_verified_at(cmem, source_server, clock):
    source_server.resources["/rate"] = {"body": 1.08, "etag": '"v1"'}
    r = cmem.remember(SCOPE, KEY, 1.08, cached_source=block(source_server.url("/rate"),
                                                            etag='"v1"'))
    head = cmem.store.head_seq(cmem.id)
    clock.advance(minutes=5)
    assert _recall(cmem).items[0].stale  # past its 60 s TTL
    out = cmem.refresh(r.item_id)
    assert out["state"] == "unchanged"
    assert cmem.store.head_seq(cmem.id) == head  # no new item, no ledger event
    assert cmem.cached_source(r.item_id)["freshness"]["lastVerifiedAt"].startswith(
        "2026-06-01T12:05:00")
    assert not _recall(cmem).items[0].stale


def test_the_same_body_writes_no_new_item(cmem, source_server):
    source_server.resources["/rate"] = {"body": 1.08}  # no etag: a full 200 every time
    r = cmem.remember(SCOPE, KEY, 1.08, cached_source=block(source_server.url("/rate")))
    head = cmem.store.head_seq(cmem.id)
    assert cmem.refresh(r.item_id)["state"] == "unchanged"
    assert cmem.store.head_seq(cmem.id) == head
    assert cmem.items(status="all").total == 1


def test_a_failed_refresh_keeps_the_fact_labelled_stale_with_the_reason(cmem, source_server):
    source_server.resources["/rate"] = {"status": 500}
    r = cmem.remember(SCOPE, KEY, 1.08, cached_source=block(source_server.url("/rate")))
    out = cmem.refresh(r.item_id)
    assert out["state"] == "failed" and "HTTP 500" in out["reason"]
    res = _recall(cmem)
    item = res.items[0]
    assert item.id == r.item_id and item.value == 1.08 and item.stale
    assert "HTTP 500" in item.cached["stale_reason"]
    assert "eur_usd: 1.08 (fact, stale, " in res.text
    assert res.tokens <= 300


def test_on_read_refreshes_a_stale_fact_before_recall_returns(cmem, source_server, clock):
    source_server.resources["/rate"] = {"body": 1.10, "etag": '"v3"'}
    cmem.remember(SCOPE, KEY, 1.08, cached_source=block(source_server.url("/rate"),
                                                        "on-read", etag='"v1"'))
    assert not _recall(cmem).items[0].stale and source_server.log == []  # fresh: not asked
    clock.advance(minutes=2)
    res = _recall(cmem)
    assert [(i.value, i.stale) for i in res.items] == [(1.10, False)]
    assert "stale" not in res.text


def test_on_read_past_the_deadline_comes_back_stale_never_silently_fresh(cmem,
                                                                         source_server, clock):
    source_server.resources["/rate"] = {"body": 1.10, "delay_s": 2.0}
    r = cmem.remember(SCOPE, KEY, 1.08, cached_source=block(source_server.url("/rate"),
                                                            "on-read"))
    clock.advance(minutes=2)
    started = time.monotonic()
    res = _recall(cmem, deadline_ms=300)
    assert time.monotonic() - started < 1.8
    assert [(i.id, i.value, i.stale) for i in res.items] == [(r.item_id, 1.08, True)]
    assert "did not answer" in res.items[0].cached["stale_reason"]
    assert "(fact, stale, " in res.text
    asked = len(source_server.log)
    clock.advance(seconds=10)  # a source that just failed is not asked again at once
    assert _recall(cmem, deadline_ms=300).items[0].stale and len(source_server.log) == asked
    source_server.resources["/rate"] = {"body": 1.10}
    clock.advance(seconds=30)
    assert [(i.value, i.stale) for i in _recall(cmem).items] == [(1.10, False)]


def test_manual_facts_are_not_refreshed_by_recall_or_the_sweep(cmem, source_server, clock):
    source_server.resources["/rate"] = {"body": 1.10}
    cmem.remember(SCOPE, KEY, 1.08, cached_source=block(source_server.url("/rate")))
    clock.advance(minutes=2)
    assert _recall(cmem).items[0].stale
    assert cmem.refresh_due() == {"unchanged": 0, "changed": 0, "failed": 0, "skipped": 0}
    assert source_server.log == []


def test_the_background_job_sweeps_stale_facts_by_priority(cmem, source_server, clock):
    for key, prio in (("low", 1), ("high", 9), ("mid", 5)):
        source_server.resources[f"/{key}"] = {"body": f"{key}-new", "type": "text/plain"}
        cmem.remember(SCOPE, key, f"{key}-old", cached_source=block(
            source_server.url(f"/{key}"), "background", priority=prio))
    job = cmem.store.job_scheduled(cmem.id, "refresh")
    assert job is not None and job["run_at"].startswith("2026-06-01T12:01:00")  # first TTL
    clock.advance(minutes=2)
    ran = [r for r in cmem.ctx.run_jobs() if r["kind"] == "refresh"]
    assert ran and ran[0]["status"] == "succeeded" and ran[0]["stats"]["changed"] == 3
    assert [p for p, _ in source_server.log] == ["/high", "/mid", "/low"]
    assert [i.value for i in cmem.inspect(SCOPE, "high").current] == ["high-new"]
    rearmed = cmem.store.job_scheduled(cmem.id, "refresh")  # for the refreshed facts' TTL
    assert rearmed is not None and rearmed["run_at"].startswith("2026-06-01T12:03:00")


def test_refresh_is_guarded_like_a_write(cstore, cmem, source_server):
    r = cmem.remember(SCOPE, KEY, 1.08, cached_source=block(source_server.url("/rate")))
    reader = cmem.as_principal(Principal(memory_id="m1", role=Role.READER, subject=SCOPE, token_id="t1"))
    with pytest.raises(PermissionDenied):
        reader.refresh(r.item_id)
    bob = cmem.as_principal(Principal(memory_id="m1", role=Role.WRITER, subject="user:bob", token_id="t2"))
    with pytest.raises(NotFoundOrNotVisible):
        bob.refresh(r.item_id)
    with pytest.raises(NotFoundOrNotVisible):
        bob.cached_source(r.item_id)
    with pytest.raises(PermissionDenied):
        bob.refresh_due()
    assert source_server.log == []


def test_forgetting_a_cached_fact_erases_its_source_block(cmem, source_server, backend,
                                                         store_url):
    uri = source_server.url("/rate?token=s3cret-4f1d")
    r = cmem.remember(SCOPE, KEY, 1.08, cached_source=block(uri))
    report = cmem.forget(r.item_id)
    assert cmem.store.cached_sources(cmem.id, [r.item_id]) == {}
    assert report.state == "completed"
    if backend == "sqlite":  # the bytes left the file and its WAL too
        from pathlib import Path

        files = [Path(store_url + s) for s in ("", "-wal", "-journal")]
        assert not any(b"s3cret-4f1d" in p.read_bytes() for p in files if p.exists())


def test_the_source_block_is_part_of_an_idempotent_remembers_meaning(cmem, source_server):
    src = block(source_server.url("/rate"))
    first = cmem.remember(SCOPE, KEY, 1.08, cached_source=src, idempotency_key="k1")
    again = cmem.remember(SCOPE, KEY, 1.08, cached_source=src, idempotency_key="k1")
    assert again.replayed and again.item_id == first.item_id
    with pytest.raises(IdempotencyConflict):
        cmem.remember(SCOPE, KEY, 1.08, cached_source=block(source_server.url("/other")),
                      idempotency_key="k1")
    assert cmem.cached_source(first.item_id)["uri"] == source_server.url("/rate")


def test_remember_many_takes_source_blocks_all_or_nothing(cmem, source_server):
    ok = {"scope": SCOPE, "key": "a", "value": 1,
          "cached_source": block(source_server.url("/a"), "background")}
    bad = {"scope": SCOPE, "key": "b", "value": 2,
           "cached_source": {**block(source_server.url("/b")), "kind": "ftp"}}
    with pytest.raises(InvalidInput) as exc:
        cmem.remember_many([ok, bad])
    assert exc.value.details["index"] == 1 and cmem.items().total == 0
    [w] = cmem.remember_many([ok])
    assert cmem.cached_source(w.item_id)["refresh"]["strategy"] == "background"
    assert cmem.store.job_scheduled(cmem.id, "refresh") is not None

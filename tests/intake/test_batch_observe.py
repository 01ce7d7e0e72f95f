"""``observe_many`` and batched ``capture``: one embedding call and one transaction per batch,
with every receipt, chain, idempotency and read-barrier guarantee of ``observe`` — on SQLite
and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import remem
from remem.errors import IdempotencyConflict, InvalidInput
from remem.service.jobs.runner import Worker

SCOPE = "user:ann"


@pytest.fixture
def store(store_url: str) -> Iterator[remem.RememStore]:
    s = remem.open(store_url)
    yield s
    s.close()


@pytest.fixture
def worker_store(store_url: str) -> Iterator[remem.RememStore]:
    s = remem.open(store_url, derive="worker")
    yield s
    s.close()


def turns(*texts: str, prefix: str = "t") -> list[dict]:
    return [{"id": f"{prefix}{i}", "role": "user", "text": t, "occurred_at": f"2026-03-0{1 + i % 9}T10:00:00Z"}
            for i, t in enumerate(texts)]


def state(mem: remem.Memory) -> tuple[int, int, int]:
    """(ledger head, sources recorded, source vectors) of the memory."""
    report = mem.owner.verify()["memories"][mem.id]
    assert report["ok"] and report["sources_ok"]
    return mem.store.head_seq(mem.id), report["sources"], _vectors(mem)


def _vectors(mem: remem.Memory) -> int:
    with mem.ctx.embedding.index.read(mem.id) as snap:
        return sum(1 for d in snap.embedding_docs() if d[1] == "source")


def test_a_batch_with_one_invalid_turn_writes_nothing(store):
    mem = store.create_memory("m1")
    mem.observe(SCOPE, "I live in Lisbon.", source_id="first")
    before = state(mem)
    bad = turns("I like green tea.", "   ", "My dog is called Rex.")
    with pytest.raises(InvalidInput) as err:
        mem.observe_many(SCOPE, bad)
    assert err.value.details["index"] == 1
    with pytest.raises(InvalidInput) as err:
        mem.observe_many(SCOPE, turns("ok") + [{"id": "x", "text": "hi", "colour": "red"}])
    assert err.value.details["index"] == 1
    assert state(mem) == before
    assert mem.store.source(mem.id, "t0") is None


def test_a_conflicting_turn_in_a_batch_writes_nothing(store):
    mem = store.create_memory("m1")
    mem.observe_many(SCOPE, turns("I like green tea."))
    before = state(mem)
    with pytest.raises(IdempotencyConflict):
        mem.observe_many(SCOPE, turns("I like black coffee.", "I play chess.", prefix="u")
                         + turns("I like oolong now."))
    assert state(mem) == before
    assert mem.store.source(mem.id, "u0") is None


def test_a_replayed_batch_duplicates_nothing(store):
    mem = store.create_memory("m1")
    batch = turns("I like green tea.", "We walked to the harbour.", "My dog is called Rex.")
    first = mem.observe_many(SCOPE, batch, run_id="chat-1")
    after_first = state(mem)
    again = mem.observe_many(SCOPE, batch, run_id="chat-1")
    assert [r.receipt_id for r in again] == [r.receipt_id for r in first]
    assert all(r.replayed for r in again) and not any(r.replayed for r in first)
    assert state(mem) == after_first
    # a batch repeating a turn inside itself records it once
    mixed = mem.observe_many(SCOPE, turns("I swim on Sundays.", prefix="s")
                             + turns("I swim on Sundays.", prefix="s"), run_id="chat-1")
    assert mixed[0].receipt_id == mixed[1].receipt_id and mixed[1].replayed
    assert state(mem)[1] == after_first[1] + 1


def test_receipts_advance_and_chain_like_observe_one_by_one(store):
    mem = store.create_memory("m1")
    texts = ("I like green tea.", "We walked to the harbour.", "My dog is called Rex.")
    many = mem.observe_many(SCOPE, turns(*texts), run_id="chat-1")
    assert [r.phase for r in many] == ["available"] * 3
    assert [r.sequence for r in many] == [0, 1, 2]  # schema LogEntry: from 0
    assert [r.accepted_seq for r in many] == sorted({r.accepted_seq for r in many})
    assert all(r.accepted_seq <= r.resolved_seq <= r.available_seq for r in many)
    nxt = mem.observe(SCOPE, "I moved to Porto.", source_id="t9", run_id="chat-1")
    assert nxt.sequence == 3 and nxt.accepted_seq > many[-1].accepted_seq
    rows = [mem.store.source(mem.id, sid) for sid in ("t0", "t1", "t2", "t9")]
    assert [r["prev_hash"] for r in rows[1:]] == [r["entry_hash"] for r in rows[:-1]]
    assert mem.inspect(SCOPE, "likes").current  # derive ran on the batch
    hits = mem.recall([SCOPE], "dog name", budget_tokens=300)
    assert "t2" in [s.id for s in hits.sources]


def test_one_embedding_call_per_batch(store, monkeypatch):
    mem = store.create_memory("m1")
    mem.observe(SCOPE, "warm up", source_id="w")  # records the model
    calls: list[int] = []
    real = mem.ctx.embedding.embed

    def counting(texts, **kw):
        calls.append(len(texts))
        return real(texts, **kw)

    monkeypatch.setattr(mem.ctx.embedding, "embed", counting)
    mem.observe_many(SCOPE, turns(*(f"We talked about topic number {i}." for i in range(12))),
                     derive=False)
    assert calls == [12]
    calls.clear()
    mem.capture(SCOPE, "chat", "c1", turns(*(f"Note {i} about the trip." for i in range(7)),
                                           prefix="c"))
    assert calls[0] == 7 and len(calls) == 1  # no claims in these turns: no derive embeds


def test_recall_after_a_batch_waits_for_the_worker(worker_store):
    mem = worker_store.create_memory("m1")
    rs = mem.observe_many(SCOPE, turns("I like green tea.", "My dog is called Rex."))
    assert [r.phase for r in rs] == ["recorded", "recorded"]
    pending = mem.recall([SCOPE], "what do I like", budget_tokens=300,
                         after=[r.receipt_id for r in rs])
    assert pending.status == "pending"
    Worker(worker_store).run_until_idle(mem.id)
    done = mem.recall([SCOPE], "what do I like", budget_tokens=300,
                      after=[r.receipt_id for r in rs])
    assert done.status != "pending"
    assert any(i.value == "green tea" for i in done.items)
    assert all(mem.receipt(r.receipt_id).phase == "available" for r in rs)


def test_batched_capture_resent_duplicates_nothing(store):
    mem = store.create_memory("m1")
    convo = turns("I like green tea.", "We walked to the harbour.", "My dog is called Rex.",
                  prefix="m")
    out = mem.capture(SCOPE, "chat", "c1", convo)
    assert out["position"] == 3 and len(out["captured"]) == 3
    before = state(mem)
    again = mem.capture(SCOPE, "chat", "c1", convo)
    assert again["captured"] == [] and again["skipped"] == 3
    assert state(mem) == before
    runs = [r for r in mem.runs(10) if r["kind"] == "derive"]
    assert len(runs) == 3
    assert all(r["stats"]["capture"]["span"]["last_event_id"] == "m2" for r in runs)


def test_derive_of_a_batch_embeds_its_claims_in_one_call(store, monkeypatch):
    mem = store.create_memory("m1")
    mem.observe(SCOPE, "warm up", source_id="w")
    calls: list[int] = []
    real = mem.ctx.embedding.embed

    def counting(texts, **kw):
        calls.append(len(texts))
        return real(texts, **kw)

    monkeypatch.setattr(mem.ctx.embedding, "embed", counting)
    rs = mem.observe_many(SCOPE, turns("I like green tea.", "I like sailing.",
                                       "I like old maps.", "We met at noon."))
    assert calls == [4, 3]  # the turns, then the three claims: one call each
    assert sorted(i.value for i in mem.items(scope=SCOPE).items) == [
        "green tea", "old maps", "sailing"]
    assert [mem.receipt(r.receipt_id).disposition for r in rs] == [
        "formed", "formed", "formed", "evidence_only"]
    assert mem.ctx.intake.extracted == {}

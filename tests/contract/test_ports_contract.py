"""The store ports, the same on both backends.

First without a database: both adapters implement the ``Store`` / ``UnitOfWork`` ports with the
same signatures (names, order and kinds of parameters). Then, on a real SQLite file and a real
PostgreSQL database (``store_url`` is parametrized), the behaviour of what ``stores/sql``
shares: memory admin, the ledger insert and ``HeadMoved``, idempotency, jobs (claim, lease,
retry), runs, receipts, capture cursors and tokens - called at the port, below the service."""

from __future__ import annotations

import inspect

import pytest

from remem import ports
from remem.stores.postgres.store import PostgresStore
from remem.stores.postgres.uow import PostgresUnitOfWork
from remem.stores.sqlite.store import SQLiteStore
from remem.stores.sqlite.uow import SQLiteUnitOfWork


def _methods(proto: type) -> dict:
    out: dict = {}
    for klass in proto.__mro__:
        if klass is object or klass.__name__ in ("Protocol", "Generic"):
            continue
        for name, value in vars(klass).items():
            if callable(value) and not name.startswith("_"):
                out.setdefault(name, value)
    return out


def _shape(fn) -> list[tuple[str, object]]:
    return [(p.name, p.kind) for p in inspect.signature(fn).parameters.values()]


CASES = [(ports.Store, SQLiteStore), (ports.Store, PostgresStore),
         (ports.UnitOfWork, SQLiteUnitOfWork), (ports.UnitOfWork, PostgresUnitOfWork),
         (ports.SearchIndex, __import__("remem.stores.sqlite.search",
                                        fromlist=["x"]).SQLiteSearchIndex),
         (ports.SearchIndex, __import__("remem.stores.postgres.search",
                                        fromlist=["x"]).PostgresSearchIndex)]


@pytest.mark.parametrize(("port", "adapter"), CASES,
                         ids=[f"{p.__name__}-{a.__name__}" for p, a in CASES])
def test_each_adapter_has_every_port_method_with_the_same_signature(port, adapter):
    for name, fn in _methods(port).items():
        impl = getattr(adapter, name, None)
        assert impl is not None, f"{adapter.__name__} lacks {name}"
        assert _shape(impl) == _shape(fn), f"{adapter.__name__}.{name}"


@pytest.mark.parametrize("kind", ["snapshot", "writer"])
def test_the_search_snapshot_and_writer_have_the_same_methods_on_both_backends(kind):
    from remem.stores.postgres import search as pg
    from remem.stores.sqlite import search as lite

    name = "SearchSnapshot" if kind == "snapshot" else "SearchWriter"
    a, b = getattr(lite, name), getattr(pg, name)
    public = {n for n in vars(a) if not n.startswith("_")}
    assert public <= {n for n in vars(b) if not n.startswith("_")}
    for n in public:
        assert _shape(getattr(a, n)) == _shape(getattr(b, n)), f"{name}.{n}"


# --- behaviour at the port, on both backends ------------------------------------------------

T = "2024-01-01T00:00:{:02d}.000000Z".format


@pytest.fixture
def adapter(store_url):
    from remem.stores import open_store

    a = open_store(store_url)
    yield a
    a.close()


def test_memory_admin_round_trips_config_and_refuses_duplicates(adapter):
    from remem.errors import AlreadyExists, NotFound

    cfg = {"zeta": 1, "alpha": {"b": [1, 2], "a": None}}
    for mid in ("b-2", "B1", "a"):
        adapter.create_memory(mid, cfg, T(1))
    with pytest.raises(AlreadyExists):
        adapter.create_memory("a", {}, T(2))
    assert list(adapter.memory_config("a")) == ["zeta", "alpha"]  # key order kept
    adapter.update_memory_config("a", {"x": True}, T(3))
    assert adapter.memory_config("a") == {"x": True}
    with pytest.raises(NotFound):
        adapter.update_memory_config("nope", {}, T(3))
    with pytest.raises(NotFound):
        adapter.memory_config("nope")
    rows = adapter.list_memories()
    assert [r["memory_id"] for r in rows] == ["B1", "a", "b-2"]  # bytewise, like SQLite
    assert rows[1] == {"memory_id": "a", "created_at": T(1), "updated_at": T(3),
                       "tenant_id": "default"}  # every memory has a tenant (issue 16)


def _events(n: int):
    from remem.domain.events import Event, EventType

    return [Event(EventType.KEY_DECLARED, {"key": f"k{i}", "cardinality": "multi",
                                           "on_change": "supersede"}) for i in range(n)]


def test_the_store_inserts_chained_events_and_a_taken_seq_is_head_moved(adapter):
    from remem.domain.ledger import EMPTY, chain
    from remem.errors import HeadMoved

    adapter.create_memory("m1", {}, T(0))
    stored = chain(_events(2), EMPTY, memory_id="m1", actor="owner", at=T(1))
    with adapter.unit_of_work("m1") as uow:
        assert uow.head() == tuple(EMPTY)
        uow.insert_events(stored)
        assert uow.head() == (2, stored[1]["hash"])
    with pytest.raises(HeadMoved) as exc:  # a writer that read the old head collides
        with adapter.unit_of_work("m1") as uow:
            uow.put_payload("pl_1", "itm_1", {"v": 1}, "quote", b"salt")
            uow.insert_events(chain(_events(1), EMPTY, memory_id="m1", actor="x", at=T(2)))
    assert exc.value.retryable
    assert adapter.payloads("m1", ["pl_1"]) == {}  # nothing staged stayed behind
    rows = list(adapter.ledger_rows("m1"))
    assert [(r["seq"], r["hash"]) for r in rows] == [(1, stored[0]["hash"]),
                                                    (2, stored[1]["hash"])]
    assert isinstance(rows[0]["data"], str)  # as stored: verify parses it itself
    assert adapter.verify_ledger("m1") is None and adapter.head_seq("m1") == 2
    assert [e["data"]["key"] for e in adapter.events("m1", after_seq=1)] == ["k1"]


def test_idempotency_records_round_trip_inside_the_unit_of_work(adapter):
    adapter.create_memory("m1", {}, T(0))
    with adapter.unit_of_work("m1") as uow:
        assert uow.idempotency_get("key-1") is None
        uow.idempotency_put("key-1", "digest-1", {"outcome": "add", "n": [1]}, "itm_1", T(1))
    with adapter.unit_of_work("m1") as uow:
        assert uow.idempotency_get("key-1") == ("digest-1", {"outcome": "add", "n": [1]})
    with pytest.raises(Exception):  # noqa: B017 - the key is unique per memory
        with adapter.unit_of_work("m1") as uow:
            uow.idempotency_put("key-1", "digest-2", {}, None, T(2))
    with adapter.unit_of_work("m1") as uow:
        assert uow.idempotency_get("key-1")[0] == "digest-1"


def test_a_job_is_claimed_once_under_a_lease_and_again_after_it_expires(adapter):
    adapter.create_memory("m1", {}, T(0))
    adapter.create_memory("m2", {}, T(0))
    adapter.enqueue_job("m1", "derive", {"n": 1}, run_at=T(5), now=T(1), job_id="job_a")
    adapter.enqueue_job("m1", "consolidate", {}, run_at=T(2), now=T(1), job_id="job_b")
    adapter.enqueue_job("m2", "derive", {}, run_at=T(3), now=T(1), job_id="job_c")
    assert adapter.pending_jobs("m1") == 2 and adapter.pending_jobs("m1", "derive") == 1
    assert adapter.claim_job("w1", T(4), T(30), kinds=["derive"], memory_id="m1") is None
    job = adapter.claim_job("w1", T(6), T(30), kinds=["derive"], memory_id="m1")
    assert (job["job_id"], job["attempts"], job["payload"]) == ("job_a", 1, {"n": 1})
    assert adapter.claim_job("w2", T(7), T(30), kinds=["derive"], memory_id="m1") is None
    again = adapter.claim_job("w2", T(31), T(50), kinds=["derive"], memory_id="m1")
    assert (again["job_id"], again["attempts"]) == ("job_a", 2)  # the lease expired
    adapter.finish_job("job_a", state="done", now=T(32))
    assert adapter.claim_job("w2", T(59), T(60), kinds=["derive"], memory_id="m1") is None
    first = adapter.claim_job("w3", T(40), T(41))
    assert first["job_id"] == "job_b"  # oldest due first, any memory and kind
    adapter.finish_job("job_b", state="queued", now=T(40), error="later", run_at=T(45))
    assert adapter.job_scheduled("m1", "consolidate")["run_at"] == T(45)
    adapter.reschedule_job("job_b", T(44), T(41))
    assert adapter.job_scheduled("m1", "consolidate")["run_at"] == T(44)
    assert adapter.pending_jobs("m1") == 1 and adapter.pending_jobs("m2") == 1


def test_concurrent_claims_never_take_the_same_job(adapter):
    from concurrent.futures import ThreadPoolExecutor

    adapter.create_memory("m1", {}, T(0))
    for i in range(8):
        adapter.enqueue_job("m1", "derive", {}, run_at=T(1), now=T(1), job_id=f"job_{i}")
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda w: adapter.claim_job(f"w{w}", T(2), T(59)), range(12)))
    ids = [j["job_id"] for j in got if j is not None]
    assert sorted(ids) == [f"job_{i}" for i in range(8)]


def test_runs_record_status_and_stats(adapter):
    adapter.create_memory("m1", {}, T(0))
    assert adapter.start_run("m1", "job_a", "derive", "w1", T(1), run_id="run_1") == "run_1"
    adapter.start_run("m1", "job_b", "derive", "w1", T(2), run_id="run_2")
    adapter.finish_run("run_1", status="succeeded", now=T(3), stats={"items": 2})
    runs = adapter.list_runs("m1")
    assert [r["run_id"] for r in runs] == ["run_2", "run_1"]  # newest first
    assert (runs[1]["status"], runs[1]["stats"], runs[1]["finished_at"]) == (
        "succeeded", {"items": 2}, T(3))
    assert runs[0]["stats"] is None and runs[0]["status"] == "running"


def test_receipts_only_move_forward_and_failed_is_final(adapter):
    from remem.errors import NotFoundOrNotVisible

    adapter.create_memory("m1", {}, T(0))
    row = {"memory_id": "m1", "receipt_id": "rcpt_1", "intent": "observe", "idem_key": "k1",
           "digest": "d", "scope": "user:alice", "source_id": "s1", "phase": "recorded",
           "accepted_seq": 3, "created_at": T(1), "updated_at": T(1)}
    with adapter.unit_of_work("m1") as uow:
        assert adapter.receipt_by_key("m1", "k1", conn=uow.conn) is None
        adapter.insert_receipt(uow.conn, row)
    assert adapter.receipt_by_key("m1", "k1")["receipt_id"] == "rcpt_1"
    assert adapter.receipts_pending("m1") == 1
    adapter.advance_receipt("m1", "rcpt_1", phase="available", now=T(3), available_seq=5)
    adapter.advance_receipt("m1", "rcpt_1", phase="processed", now=T(4), resolved_seq=4)
    adapter.advance_receipt("m1", "rcpt_1", phase="failed", now=T(5), reason="late")
    got = adapter.receipt("m1", "rcpt_1")
    assert (got["phase"], got["available_seq"], got["resolved_seq"], got["updated_at"]) == (
        "available", 5, None, T(3))
    assert adapter.receipts_pending("m1") == 0
    with pytest.raises(NotFoundOrNotVisible):
        adapter.receipt("m1", "rcpt_other")


def test_capture_cursors_advance_by_compare_and_set(adapter):
    from remem.errors import CursorMismatch

    adapter.create_memory("m1", {}, T(0))
    assert adapter.capture_cursor("m1", "chat", "c1") is None
    with adapter.unit_of_work("m1") as uow:
        adapter.advance_capture_cursor(uow.conn, "m1", "chat", "c1", expected_position=0,
                                       last_event_id="e2", position=2, now=T(1))
    with pytest.raises(CursorMismatch) as exc:
        with adapter.unit_of_work("m1") as uow:
            adapter.advance_capture_cursor(uow.conn, "m1", "chat", "c1", expected_position=0,
                                           last_event_id="e9", position=9, now=T(2))
    assert exc.value.details["position"] == 2
    with adapter.unit_of_work("m1") as uow:
        adapter.advance_capture_cursor(uow.conn, "m1", "chat", "c1", expected_position=2,
                                       last_event_id="e3", position=3, now=T(3))
    cur = adapter.capture_cursor("m1", "chat", "c1")
    assert (cur["position"], cur["last_event_id"], cur["updated_at"]) == (3, "e3", T(3))


def test_tokens_store_only_a_hash_list_without_it_and_revoke_once(adapter):
    from remem.errors import AlreadyExists

    adapter.create_memory("m1", {}, T(0))
    base = {"memory_id": "m1", "role": "reader", "subject": "user:alice",
            "secret_hash": "ab" * 32, "label": None}
    adapter.create_token({**base, "token_id": "tok_b", "created_at": T(1)})
    adapter.create_token({**base, "token_id": "tok_a", "created_at": T(1), "label": "ci"})
    with pytest.raises(AlreadyExists):
        adapter.create_token({**base, "token_id": "tok_a", "created_at": T(2)})
    assert adapter.token("tok_a")["secret_hash"] == "ab" * 32
    assert adapter.token("tok_zz") is None
    listed = adapter.list_tokens("m1")
    assert [t["token_id"] for t in listed] == ["tok_a", "tok_b"]
    assert all("secret_hash" not in t for t in listed) and listed[0]["label"] == "ci"
    assert adapter.revoke_token("tok_a", T(5)) and adapter.revoke_token("tok_a", T(6))
    assert adapter.token("tok_a")["revoked_at"] == T(5)  # the first revocation stays
    assert adapter.revoke_token("tok_zz", T(5)) is False
    assert adapter.list_tokens() == listed[:0] + adapter.list_tokens("m1")

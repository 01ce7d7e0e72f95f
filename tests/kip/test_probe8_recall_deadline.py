"""Round-8 probe: a KIP recall's ``budget.deadline_ms`` (the schema allows up to 2**53 - 1)
went unchanged into the ``after`` barrier's wait, so a recall naming a receipt still being
formed (a memory whose derive runs in ``remem worker``) polled the database for as long as
the caller asked: forty such requests from a reader token held every thread of ``remem
serve``. ``Memory.recall`` now waits at most ``MAX_DEADLINE_MS`` (60 s; HTTP /recall already
refused more) and answers ``pending`` as for any passed deadline. The test lowers the cap so
it runs in seconds. Real SQLite file, worker-mode derive."""

from __future__ import annotations

import threading
import time

import remem.service.memory as memory_module
from remem.service.jobs.runner import Worker

MAX_WAIT_S = 20


def test_a_huge_kip_deadline_waits_at_most_the_cap(paused, monkeypatch):
    monkeypatch.setattr(memory_module, "MAX_DEADLINE_MS", 300, raising=False)
    store, py = paused
    py.stage("s1", "I live in Lyon.")
    rid = py.kip("observe", {"source_ref": "s1"}, key="o1")["receipt"]["receipt_ref"]
    out: dict = {}

    def ask() -> None:
        out["doc"] = py.kip("recall", {"query": "where does the user live", "after": [rid]},
                            budget={"deadline_ms": 10**12})

    started = time.monotonic()
    asker = threading.Thread(target=ask, daemon=True)
    asker.start()
    asker.join(MAX_WAIT_S)
    still_waiting = asker.is_alive()
    if still_waiting:  # release it (form the receipt) so the store can close
        Worker(store).run_until_idle()
        asker.join(MAX_WAIT_S)
    assert not still_waiting, f"the recall still waited after {MAX_WAIT_S} s"
    assert time.monotonic() - started < MAX_WAIT_S
    doc = out["doc"]
    assert doc["status"] == "pending", doc
    assert doc["result"]["coverage"]["pending_receipts"] == [rid]


def test_the_cap_is_sixty_seconds():
    from remem.domain.limits import MAX_DEADLINE_MS

    assert MAX_DEADLINE_MS == 60_000 == memory_module.MAX_DEADLINE_MS

"""Round-8 probe: ``forget_scope`` reported ``completed`` while the scope's feedback text
(``Memory.feedback(scope, text)``, stored in the ``feedback`` table) was still in the database:
the report said every surface was erased, and the bytes stayed in the file. Now forgetting a
scope deletes its feedback rows too (surface ``feedback`` in the report; on PostgreSQL the
table is rewritten before ``completed``); another scope's feedback stays. Both backends,
every byte of the database files."""

from __future__ import annotations

ALICE, BOB = "user:alice", "user:bob"


def test_forget_scope_erases_the_scopes_feedback_text(mem, database_bytes):
    mem.remember(ALICE, "home_city", "Paris")
    mem.feedback(ALICE, "my boss zqxalicefeedbackz is awful", role="user")
    mem.feedback(BOB, "keep zqxbobfeedbackz", role="user")
    assert b"zqxalicefeedbackz" in database_bytes()
    report = mem.forget_scope(ALICE).to_dict()
    assert report["state"] == "completed", report
    assert report["surfaces"]["feedback"] == {"erased": 1, "state": "erased"}, report
    data = database_bytes()
    assert b"zqxalicefeedbackz" not in data
    assert b"zqxbobfeedbackz" in data


def test_an_item_forget_reports_no_feedback_surface_work(mem):
    mem.remember(ALICE, "home_city", "Paris")
    report = mem.forget(scope=ALICE, key="home_city", expected_revision=1).to_dict()
    assert report["surfaces"]["feedback"] == {"erased": 0, "state": "none"}

"""Round-8 probe: KIP feedback (and ``Memory.feedback``) treated an idempotency key it had
seen as a replay whatever the request said: feedback citing another staged source, or other
text, under the same key answered ``succeeded`` with the first receipt, and the second
feedback was silently dropped. DESIGN.md: same key + different meaning is
``IdempotencyConflict``. Now a different source, target, text, role or actor under a used key
is refused (KIP ``failed`` with IdempotencyConflict; Python raises it) and nothing is stored;
the same request again still replays. Real SQLite file."""

from __future__ import annotations

import pytest

from remem.errors import IdempotencyConflict

from kip.kit import U


def test_kip_feedback_with_another_source_under_a_used_key_is_a_conflict(py):
    py.stage("f1", "That answer was great.", role="user", actor="maya")
    py.stage("f2", "That answer was awful.", role="user", actor="maya")
    first = py.kip("feedback", {"source_ref": "f1"}, key="fb")
    assert first["status"] == "succeeded", first
    again = py.kip("feedback", {"source_ref": "f1"}, key="fb")
    assert again["status"] == "succeeded" and again["receipt"] == first["receipt"]
    other = py.kip("feedback", {"source_ref": "f2"}, key="fb")
    assert other["status"] == "failed", other
    assert other["error"]["code"] == "IdempotencyConflict", other
    row = py.memory.store.feedback_row("m1", first["receipt"]["receipt_ref"])
    assert row["target"] == "f1"


def test_kip_feedback_with_another_target_under_a_used_key_is_a_conflict(py):
    py.stage("f1", "That answer was wrong.", role="user", actor="maya")
    py.kip("feedback", {"source_ref": "f1", "attempt_ref": "attempt-1"}, key="fb")
    other = py.kip("feedback", {"source_ref": "f1", "attempt_ref": "attempt-2"}, key="fb")
    assert other["status"] == "failed" and other["error"]["code"] == "IdempotencyConflict"


def test_python_feedback_with_other_text_under_a_used_key_is_a_conflict(py):
    mem = py.memory
    first = mem.feedback(U, "good answer", role="user", idempotency_key="k1")
    assert mem.feedback(U, "good answer", role="user", idempotency_key="k1")["replayed"]
    with pytest.raises(IdempotencyConflict):
        mem.feedback(U, "terrible answer", role="user", idempotency_key="k1")
    with pytest.raises(IdempotencyConflict):
        mem.feedback(U, "good answer", role="agent", idempotency_key="k1")
    assert mem.store.feedback_row("m1", first["feedback_id"])["text"] == "good answer"


def test_feedback_naming_a_decision_still_cites_its_staged_source(py):
    """Probe 8: with a decision_ref or attempt_ref the row kept only that ref, so the staged
    source holding the feedback's words was linked from nowhere."""
    py.stage("f1", "That answer was wrong.", role="user", actor="maya")
    out = py.kip("feedback", {"source_ref": "f1", "attempt_ref": "attempt-3"}, key="fb")
    row = py.memory.store.feedback_row("m1", out["receipt"]["receipt_ref"])
    assert (row["target"], row["source_ref"], row["text"]) == ("attempt-3", "f1", None)
    again = py.kip("feedback", {"source_ref": "f1", "attempt_ref": "attempt-3"}, key="fb")
    assert again["status"] == "succeeded" and again["receipt"] == out["receipt"]
    py.stage("f2", "No, it was right.", role="user", actor="maya")
    other = py.kip("feedback", {"source_ref": "f2", "attempt_ref": "attempt-3"}, key="fb")
    assert other["status"] == "failed" and other["error"]["code"] == "IdempotencyConflict"

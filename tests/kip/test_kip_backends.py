"""The five intents with staged sources give the same schema-valid answers on SQLite and on
PostgreSQL (durable receipts of revise and forget, replays, barriers, erasure)."""

from __future__ import annotations

from kip.kit import U


def test_the_five_intents_on_both_backends(both):
    py = both
    py.stage("s1", "I live in Lyon.")
    obs = py.kip("observe", {"source_ref": "s1"}, key="o1")
    assert obs["status"] == "succeeded" and obs["progress"]["disposition"] == "formed"
    [old] = obs["result"]["memory_refs"]
    assert py.kip("observe", {"source_ref": "s1"}, key="o1")["receipt"] == obs["receipt"]
    rec = py.kip("recall", {"query": "where do I live",
                            "after": [obs["receipt"]["receipt_ref"]]})
    assert rec["status"] == "succeeded"
    assert "home_city: Lyon" in [i["text"] for i in rec["result"]["items"]]
    py.stage("s2", "Sorry, I live in Paris.")
    rev = py.kip("revise", {"source_ref": "s2", "target_ref": old,
                            "change_kind": "correction"}, key="r1")
    [new] = rev["result"]["memory_refs"]
    assert py.kip("revise", {"source_ref": "s2", "target_ref": old,
                             "change_kind": "correction"}, key="r1")["receipt"] == \
        rev["receipt"]
    after = py.kip("recall", {"query": "where do I live",
                              "after": [rev["receipt"]["receipt_ref"]]})
    assert [i["text"] for i in after["result"]["items"] if i["role"] == "fact"] == [
        "home_city: Paris"]
    py.stage("f1", "Thanks, that was right.")
    fb = py.kip("feedback", {"source_ref": "f1"}, key="f1")
    assert fb["status"] == "succeeded" and fb["result"]["memory_refs"] == []
    gone = py.kip("forget", {"target_ref": new, "mode": "semantic"}, key="g1")
    assert gone["status"] == "succeeded" and gone["progress"]["disposition"] == "erased"
    assert py.memory.inspect(U, "home_city").state == "forgotten"

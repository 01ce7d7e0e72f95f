"""Round-6 finding: a KIP recall that expands an unknown ``target_ref`` (an item id that
does not exist, or one the caller cannot read) answered "Source 'itm_…' was not found", with
``details.source_id``: the caller named an item or a source, never only a source. Now the
answer names both kinds and the request field (``details["input.target_ref"]``), in KIP's
failed shape (``NotFoundOrNotVisible``, category ``data``), and a hidden item reads exactly
like a missing one. In process and through a real ``remem serve``; every document is checked
against the KIP schema by the kit."""

from __future__ import annotations

from kip.kit import PyClient, as_token


def _unknown(out: dict, ref: str) -> None:
    assert out["status"] == "failed"
    err = out["error"]
    assert (err["code"], err["category"]) == ("NotFoundOrNotVisible", "data")
    assert err["message"] == (f"Item or source {ref!r} was not found or is not visible to "
                              "this caller.")
    assert err["details"]["input.target_ref"] == ref
    assert "source_id" not in err["details"]


def test_an_unknown_or_hidden_item_ref_is_named_an_item_or_source(py):
    py.stage("s1", "I live in Lyon.")
    [item] = py.kip("observe", {"source_ref": "s1"}, key="o1")["result"]["memory_refs"]
    bob = PyClient(as_token(py.memory, "reader", "user:bob"))
    _unknown(bob.kip("recall", {"target_ref": "itm_nope"}, scope="user:bob"), "itm_nope")
    _unknown(bob.kip("recall", {"target_ref": item}, scope="user:bob"), item)
    _unknown(py.kip("recall", {"target_ref": "itm_nope"}), "itm_nope")


def test_the_same_answer_over_http(served):
    maya = served["maya"]
    maya.stage("u1", "I live in Porto.")
    [item] = maya.kip("observe", {"source_ref": "u1"}, key="u1")["result"]["memory_refs"]
    bob = served["bob"]
    for ref in ("itm_nope", item):
        _unknown(bob.kip("recall", {"target_ref": ref}, scope="user:bob"), ref)
        assert bob.last_status == 404

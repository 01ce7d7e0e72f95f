"""Round-6 probe: a schema-valid KIP ``feedback`` whose ``decision_ref`` is 513-1024
characters (the published ``Ref`` allows 1,024) was refused with ``InvalidInput`` naming
``input.target``, a field the request does not have (remem stores the ref as the feedback's
target, checked at 512 bytes). A ref the schema allows must be taken; one over the schema's
limit is the schema's refusal. Real server on loopback, real SQLite file."""

from __future__ import annotations

import pytest

from security.probe4_kit import Probe


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    p = Probe(tmp_path_factory.mktemp("kipfb"))
    p.ok("aw", "POST", "/memory/m1/kip/sources", json={
        "scope": "user:alice", "source_ref": "fb-1", "role": "user", "actor": "alice",
        "text": "That answer was wrong."})
    yield p
    p.close()


def _feedback(probe: Probe, ref: str, key: str):
    return probe.call("aw", "POST", "/memory/m1/kip", json={
        "kip_memory": "2.0", "operation": "feedback", "scope": {"task_ref": "user:alice"},
        "idempotency_key": key, "input": {"source_ref": "fb-1", "decision_ref": ref}})


def test_a_decision_ref_of_1024_characters_is_taken(probe):
    r = _feedback(probe, "d" * 1024, "fb-long")
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "succeeded"


def test_a_decision_ref_over_the_schema_limit_is_refused_by_the_schema(probe):
    r = _feedback(probe, "d" * 1025, "fb-too-long")
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["code"] == "InvalidInput" and "input.target" not in err["message"]

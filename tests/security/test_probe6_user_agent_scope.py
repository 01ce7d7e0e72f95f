"""Round-6 probe: a *user* whose id starts with ``agent:`` (scope ``user:agent:x``) was accepted
by every write path and exported as ``{"userId": "agent:x"}``, exactly the shape of remem's
agent scope ``agent:x``; a restore read it back as the agent scope, which every reader of the
memory can read, so after an ordinary backup and restore that user's private facts were shown
to every other user's token. Fixed: ``Scope.parse`` refuses such user ids (writes, reads,
token subjects), so no such scope can be stored or exported. Real server on loopback, real
SQLite files."""

from __future__ import annotations

import pytest

from remem.domain.model import Scope
from remem.errors import InvalidInput
from security.probe4_kit import Probe


def test_a_user_id_that_would_restore_as_an_agent_scope_is_refused_and_nothing_is_written(
        tmp_path):
    p = Probe(tmp_path)
    try:
        r = p.call("root", "POST", "/memory/m1/items", json={
            "scope": "user:agent:x", "key": "diagnosis", "value": "private thing"})
        assert r.status_code == 400, r.text
        assert r.json()["error"]["code"] == "invalid_input"
        assert "agent:" in r.json()["error"]["message"]
        export = p.call("root", "GET", "/memory/m1/export").text
        assert "private thing" not in export
    finally:
        p.close()


@pytest.mark.parametrize("handle", ["user:agent:x", "user:agent:"])
def test_the_scope_parser_refuses_user_ids_starting_with_agent(handle):
    with pytest.raises(InvalidInput):
        Scope.parse(handle)


def test_agent_scopes_and_other_user_ids_still_parse():
    assert str(Scope.parse("agent:x")) == "agent:x"
    assert str(Scope.parse("user:agentx")) == "user:agentx"
    assert str(Scope.parse("user:x-agent:y")) == "user:x-agent:y"

"""Round-6 probe: a *user* whose id starts with ``agent:`` (scope ``user:agent:x``, accepted by
every write path) is exported as ``{"userId": "agent:x"}``, exactly the shape of remem's agent
scope ``agent:x``; a restore reads it back as the agent scope. Agent scopes are readable by
every reader of the memory, so after an ordinary backup and restore (README: export, restore
into another database under the same memory id) that user's private facts are shown to every
other user's token. README only says "avoid such user ids when exporting"; nothing refuses
or warns. Real server on loopback, real SQLite files, the owner's import.

Fix needed (not small): refuse ``user:agent:...`` at the write boundary (scope parsing of
writes and token subjects), and make export refuse (or import warn about) such scopes that
already exist, so a restore never widens who can read them."""

from __future__ import annotations

import pytest

import remem
from security.probe4_kit import Probe


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "export maps user:agent:x to userId 'agent:x', which import reads as the agent scope "
    "agent:x: readable by every reader after a restore"))
def test_a_restored_users_facts_do_not_become_readable_by_everyone(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "dst").mkdir()
    src = Probe(tmp_path / "src")
    try:
        src.ok("root", "POST", "/memory/m1/items", json={
            "scope": "user:agent:x", "key": "diagnosis", "value": "private thing"})
        assert src.call("bw", "GET", "/memory/m1/items?scope=user:agent:x").status_code == 403
        export = src.call("root", "GET", "/memory/m1/export").text
    finally:
        src.close()
    dst = Probe(tmp_path / "dst")
    try:
        path = tmp_path / "m1.jsonl"
        path.write_text(export)
        store = remem.open(dst.db)
        try:
            store.memory("m1").import_log_facts(path)
        finally:
            store.close()
        r = dst.call("bw", "GET", "/memory/m1/items?scope=agent:x")
        assert "private thing" not in r.text
    finally:
        dst.close()

"""The seed's command sequences, unchanged, with ``memory`` = ``remem`` + the global options.

``test_product_smoke_against_a_restarted_server`` is the seed's "Verify and stop" scenario
against a real ``remem serve`` that is stopped and started again in the middle: creation,
retry, read-only grants, conflict, correction, profile/context, restart, forgetting, replay
rejection and a raw-bytes check of the database files after forgetting.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import seedkit
from seedkit import AFTER_RESTART, CREATE_READ, FORGET, Seed

from remem.testing.served import Server

INSPECT_FIELDS = ["key", "revision", "scope", "entity", "attribute", "state", "value", "kind",
                  "source", "valid_until_ms", "history", "conflicts", "expired"]
ITEM_FIELDS = ["key", "revision", "entity", "attribute", "value", "kind", "source",
               "valid_until_ms"]


def _check_create_read_correct(seed: Seed) -> None:
    first = seed.json("apply_file")
    assert (first["status"], first["replayed"], first["revision"]) == ("created", False, 1)
    assert first["key"] == "user:personal/response_style"
    retry = seed.json("apply_stdin")  # `apply < file`: identical retry, nothing written
    assert (retry["status"], retry["replayed"], retry["revision"]) == ("created", True, 1)
    for name in ("profile1", "context1"):
        doc = seed.json(name)
        assert doc["truncated"] is False and len(doc["items"]) == 1, name
        assert list(doc["items"][0]) == ITEM_FIELDS
        assert doc["items"][0]["value"] == "short bullets"
    corrected = seed.json("apply_correct")
    assert (corrected["status"], corrected["revision"]) == ("corrected", 2)
    assert [i["value"] for i in seed.json("profile2")["items"]] == ["brief numbered points"]
    inspection = seed.file("inspection.json")
    assert list(inspection) == INSPECT_FIELDS
    assert (inspection["state"], inspection["value"], inspection["revision"]) == (
        "current", "brief numbered points", 2)
    assert [h["value"] for h in inspection["history"]] == ["short bullets"]
    assert inspection["source"] == {"id": "guide/turn-2", "role": "user",
                                    "text": "Correction: use brief numbered points."}


def _check_forgotten(seed: Seed) -> None:
    assert seed.rc("forget") == 0
    report = seed.json("forget")
    assert report["status"] == "forgotten" and report["erasure"]["state"] == "completed"
    assert seed.json("profile3") == {"items": [], "truncated": False}
    after = seed.json("inspect3")
    assert list(after) == INSPECT_FIELDS
    assert (after["state"], after["value"], after["history"], after["conflicts"]) == (
        "forgotten", None, [], [])
    assert seed.rc("replay") != 0  # replay of the original apply fails
    assert json.loads(seed.err("replay"))["error"]["code"] == "claim_forgotten"


def test_seed_commands_run_unchanged_on_the_embedded_database(tmp_path):
    db = tmp_path / "embedded.db"
    env = seedkit.environment(db)
    seedkit.remem(env, "memory", "create", "knowledge")
    seed = Seed(tmp_path, f"--db {db} --namespace knowledge --scope personal", env)
    seed.run(CREATE_READ + AFTER_RESTART + FORGET)
    _check_create_read_correct(seed)
    assert seed.json("inspect_restarted")["value"] == "brief numbered points"
    _check_forgotten(seed)


def _raw_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(db.parent.glob(db.name + "*")))


def test_product_smoke_against_a_restarted_server(tmp_path):
    db = tmp_path / "node.db"
    env = seedkit.environment(db)
    seedkit.remem(env, "memory", "create", "knowledge")
    writer = seedkit.secrets_file(tmp_path / "credentials.env",
                                  seedkit.token(env, "knowledge", "writer", "user:personal"))
    reader = seedkit.secrets_file(tmp_path / "reader.env",
                                  seedkit.token(env, "knowledge", "reader", "user:personal"),
                                  name="REMEM_TOKEN")
    work = tmp_path / "work"
    work.mkdir()
    with Server(db, env=env) as server:
        seed = Seed(work, f"--url {server.base} --secrets-file {writer} "
                          "--namespace knowledge --scope personal", env)
        seed.run(CREATE_READ)
        _check_create_read_correct(seed)
        readonly = Seed(work, f"--url {server.base} --secrets-file {reader} "
                              "--namespace knowledge --scope personal", env)
        readonly.run([("ro_profile", "memory profile"),
                      ("ro_context", 'memory context "numbered" --max-bytes 4096'),
                      ("ro_inspect", "memory inspect user response_style"),
                      ("ro_apply", 'memory apply --file "$controller_work/create.json"'),
                      ("ro_forget", "memory forget user response_style --expected-revision 2"),
                      ("ro_turn", "echo 'I live in Paris.' > \"$controller_work/turn.txt\""),
                      ("ro_capture", 'memory capture --file "$controller_work/turn.txt" '
                                     "--source-id guide/turn-4 --model rules --apply")])
        assert readonly.json("ro_inspect")["revision"] == 2
        assert [i["value"] for i in readonly.json("ro_context")["items"]] == [
            "brief numbered points"]
        assert len(readonly.json("ro_profile")["items"]) == 1
        for denied in ("ro_apply", "ro_forget", "ro_capture"):
            assert readonly.rc(denied) != 0
            assert json.loads(readonly.err(denied))["error"]["code"] == "permission_denied"
        conflict = _conflicting_assert(seed, work)
        assert conflict["status"] == "conflict" and seed.rc("conflict") != 0
        assert seed.json("profile_conflicted") == {"items": [], "truncated": False}
        _resolve_by_correction(seed)
    with Server(db, env=env) as restarted:  # "Stop the node with Ctrl-C and repeat"
        seed.options = (f"--url {restarted.base} --secrets-file {writer} "
                        "--namespace knowledge --scope personal")
        seed.run(AFTER_RESTART + [("inspect_for_forget", 'memory inspect user response_style '
                                   '> "$controller_work/inspection.json"')] + FORGET)
        assert seed.json("inspect_restarted")["value"] == "brief numbered points"
        _check_forgotten(seed)
    _check_tombstone_bytes(db)


def _conflicting_assert(seed: Seed, work: Path) -> dict:
    """A different assert records a conflict; profile leaves the conflicted slot out."""
    proposal = json.loads((work / "create.json").read_text())
    proposal["value"] = "long prose"
    proposal["source"] = {"id": "guide/turn-5", "text": "Write long prose.", "role": "user",
                          "occurred_at_ms": 1791504003000}
    (work / "conflict.json").write_text(json.dumps(proposal))
    seed.run([("conflict", 'memory apply --file "$controller_work/conflict.json"'),
              ("profile_conflicted", "memory profile"),
              ("inspect_conflicted", 'memory inspect user response_style '
                                     '> "$controller_work/inspection.json"')])
    return seed.json("conflict")


def _resolve_by_correction(seed: Seed) -> None:
    """An explicit correct at the inspected revision resolves the conflict (a new source id:
    turn-2 already carried another payload in this slot)."""
    detail = seed.file("inspection.json")
    assert detail["state"] == "conflict" and len(detail["conflicts"]) == 2
    proposal = seed.file("create.json")
    proposal.update(operation="correct", value="brief numbered points",
                    expected_revision=detail["revision"])
    proposal["source"] = {"id": "guide/turn-6", "text": "Correction: use brief numbered "
                          "points.", "role": "user", "occurred_at_ms": 1791504004000}
    (seed.work / "resolve.json").write_text(json.dumps(proposal))
    seed.run([("resolve", 'memory apply --file "$controller_work/resolve.json"')])
    assert seed.rc("resolve") == 0, seed.err("resolve")
    assert seed.json("resolve")["status"] == "corrected"


def _check_tombstone_bytes(db: Path) -> None:
    """No value or quote survives in any file of the database (main file and WAL); the
    tombstones name the claims by keyed hashes (HMAC with the per-memory secret)."""
    import remem
    from remem.domain.canonical import claim_id

    raw = _raw_bytes(db)
    for text in (b"short bullets", b"brief numbered points", b"long prose",
                 b"Please use short bullets.", b"Correction: use brief numbered points."):
        assert text not in raw, text
    store = remem.open(db)
    try:
        secret = store.memory("knowledge").writer.claim_secret
    finally:
        store.close()
    with sqlite3.connect(db) as con:
        stones = {r[0] for r in con.execute("SELECT claim_id FROM tombstones")}
    for value in ("short bullets", "brief numbered points", "long prose"):
        keyed = claim_id("knowledge", "user:personal", "response_style", value, secret=secret)
        assert keyed in stones and keyed.encode() in raw
        assert value.encode() not in raw


def test_a_forgotten_slot_leaves_no_raw_identity_labels(tmp_path):
    db = tmp_path / "labels.db"
    env = seedkit.environment(db)
    seedkit.remem(env, "memory", "create", "knowledge")
    seed = Seed(tmp_path, f"--db {db} --namespace knowledge --scope personal", env)
    seed.run(CREATE_READ[:2] + [("inspect", 'memory inspect user response_style '
                                            '> "$controller_work/inspection.json"')] + FORGET)
    assert seed.json("forget")["status"] == "forgotten"
    raw = _raw_bytes(db)
    assert b"response_style" not in raw and b"user:personal" not in raw

"""Round-4 probe: a Log+Facts file imported into memory ``ma3`` (tenant acme) could name
another tenant's blob (``blob://local/m2/<blob>``, with its contentHash). The import
accepted it: acme's fact then served globex's content, and forgetting it deleted globex's
blob file, so globex's own fact lost its content. Now a file may name only its target
memory's blobs or those of a memory the store does not hold (copied with the file, into
the target's own bucket); the victim's content stays readable over HTTP."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from security.probe4_kit import Probe

from _plugins.cli_in_process import run_cli

VICTIM_TEXT = "GLOBEXSECRET " + "g" * 70_000  # over the inline limit: a blob


def _cli(db: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return run_cli(["--db", db, *args], text=True, env=env)


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    p = Probe(tmp_path_factory.mktemp("imports"))
    yield p
    p.close()


def _crafted_file(probe: Probe, tmp_path, victim: dict) -> str:
    """An export of m1 with one blob fact whose contentRef/hash/size name m2's blob."""
    probe.ok("root", "POST", "/memory/m1/facts", json={
        "scope": "user:eve", "key": "note", "content": "e" * 70_000})
    lines = [json.loads(x) for x in probe.call("root", "GET", "/memory/m1/export").text
             .splitlines()]
    patched = 0
    for rec in lines:
        if rec.get("contentRef"):
            rec.update(contentRef=victim["contentRef"], contentHash=victim["contentHash"],
                       size=victim["size"])
            patched += 1
    assert patched == 1
    path = tmp_path / "crafted.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return str(path)


def test_an_import_cannot_adopt_or_erase_another_tenants_blob(probe, tmp_path):
    w = probe.ok("m2root", "POST", "/memory/m2/facts", json={
        "scope": "user:gina", "key": "diary", "content": VICTIM_TEXT})
    victim = probe.ok("m2root", "GET", f"/memory/m2/facts/{w['item_id']}")
    assert victim["contentRef"].startswith("blob://local/m2/")
    crafted = _crafted_file(probe, tmp_path, victim)

    assert _cli(probe.db, "memory", "create", "ma3", "--tenant", "acme").returncode == 0
    r = _cli(probe.db, "--json", "import", crafted, "-m", "ma3")
    assert r.returncode != 0, r.stdout
    err = json.loads(r.stdout or r.stderr)["error"]
    assert err["code"] == "invalid_input" and err["details"]["field"] == "contentRef"
    assert "GLOBEXSECRET" not in r.stdout + r.stderr
    shown = _cli(probe.db, "--json", "-m", "ma3", "items")
    assert "diary" not in shown.stdout and "note" not in shown.stdout  # nothing written

    got = probe.ok("m2root", "GET", f"/memory/m2/facts/{w['item_id']}/content")
    assert got["content"] == VICTIM_TEXT


def test_a_restore_under_a_new_id_copies_the_blob_into_its_own_bucket(probe, tmp_path):
    """A legitimate restore of m1's export into another database under a new id (m1's
    bucket copied with the file) keeps the content, in the new memory's own bucket, and
    forgetting it leaves the copied directory's file alone."""
    probe.ok("root", "POST", "/memory/m1/facts", json={
        "scope": "user:eve", "key": "essay", "content": "ESSAY " + "x" * 70_000})
    export = tmp_path / "m1.jsonl"
    export.write_text(probe.call("root", "GET", "/memory/m1/export?claim_key=false").text)
    new_db = str(tmp_path / "new.db")
    subprocess.run(["cp", "-r", probe.db + ".blobs", new_db + ".blobs"], check=True)
    assert _cli(new_db, "memory", "create", "copy").returncode == 0
    r = _cli(new_db, "--json", "import", str(export), "-m", "copy")
    assert r.returncode == 0, r.stdout + r.stderr
    items = json.loads(_cli(new_db, "--json", "-m", "copy", "items", "--scope",
                            "user:eve").stdout)["items"]
    essay = next(i for i in items if i["key"] == "essay")
    fact = json.loads(_cli(new_db, "--json", "-m", "copy", "fact", "show",
                           essay["item_id"]).stdout)
    assert fact["contentRef"].startswith("blob://local/copy/")
    source_files = set(os.listdir(new_db + ".blobs/m1"))
    f = _cli(new_db, "--json", "-m", "copy", "forget", "user:eve", "essay",
             "--expected-revision", str(essay["revision"]))
    assert f.returncode == 0, f.stdout + f.stderr
    assert set(os.listdir(new_db + ".blobs/m1")) == source_files

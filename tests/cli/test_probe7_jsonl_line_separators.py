"""Round-7 probe: ``observe-many --file`` split its JSON Lines with ``str.splitlines``, which
also breaks at U+2028, U+2029, U+0085 and other separators that JSON allows raw inside a
string, so a turn quoting such text failed with "line 1 of --file is not JSON". Lines now
end at ``\\n`` only (JSON Lines), since the bounded line reader of the same round (c4ed951).
Real subprocess, real SQLite file."""

from __future__ import annotations

import json
import subprocess
import sys

import remem


def test_turns_with_unicode_line_separators_inside_strings_are_recorded(tmp_path):
    db = str(tmp_path / "j.db")
    remem.open(db).create_memory("m1")
    turns = tmp_path / "turns.jsonl"
    texts = ["First line\u2028second line, I like tea.", "I live in Lyon.\u0085 ok",
             "Para one\u2029para two\x1c\x1d\x1e end"]
    turns.write_text("".join(json.dumps({"id": f"t{i}", "text": t}, ensure_ascii=False) + "\n"
                             for i, t in enumerate(texts)), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "remem.cli.main", "--db", db, "-m", "m1",
                           "--json", "observe-many", "user:maya", "--file", str(turns)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [r["source_id"] for r in json.loads(done.stdout)] == ["t0", "t1", "t2"]
    store = remem.open(db)
    try:
        res = store.memory("m1").recall(["user:maya"], "tea Lyon para", budget_tokens=2000)
        assert sorted(s["text"] if isinstance(s, dict) else s.text for s in res.sources) == \
            sorted(texts)
    finally:
        store.close()

"""A file made before a forget (an old backup) imported into the memory that forgot the claim
does not bring it back: the fact's outcome is forgotten, the summary warns, the value stays
gone."""

from __future__ import annotations

import remem


def test_an_old_export_does_not_resurrect_a_forgotten_claim(tmp_path):
    mem = remem.open(str(tmp_path / "t.db")).create_memory("m1")
    w = mem.remember("user:maya", "diet", "vegan-zz9", kind="preference")
    mem.remember("user:maya", "home_city", "Lyon")
    backup = tmp_path / "before.jsonl"
    with open(backup, "wb") as fh:
        mem.export_log_facts_to(fh)
    assert mem.forget(scope="user:maya", key="diet",
                      expected_revision=w.revision).state == "completed"
    summary = mem.import_log_facts(backup)
    assert any("forgot" in x for x in summary.warnings)
    after = mem.inspect("user:maya", "diet")
    assert after.value is None and after.state == "forgotten"
    assert b"vegan-zz9" not in b"".join(mem.export_log_facts())
    assert mem.inspect("user:maya", "home_city").value == "Lyon"
    mem.remember("user:maya", "diet", "vegan-zz9", kind="preference")  # the owner still may
    assert mem.inspect("user:maya", "diet").value == "vegan-zz9"


def test_a_claim_stated_again_after_its_forget_imports_as_itself(tmp_path):
    mem = remem.open(str(tmp_path / "t.db")).create_memory("m1")
    w = mem.remember("user:maya", "diet", "vegan-zz9", kind="preference")
    mem.forget(scope="user:maya", key="diet", expected_revision=w.revision)
    mem.remember("user:maya", "diet", "vegan-zz9", kind="preference")  # the owner again
    now = tmp_path / "now.jsonl"
    now.write_bytes(b"".join(line for line in mem.export_log_facts()  # the facts only
                             if b'"remem-' not in line))
    summary = mem.import_log_facts(now)  # a re-import: the live claim is seen again
    assert not any("forgot" in x for x in summary.warnings)
    assert mem.inspect("user:maya", "diet").value == "vegan-zz9"

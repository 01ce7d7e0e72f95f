"""Import reads each line as strict JSON (the HTTP body rules): a line nested deeper than the
decoder can go, NaN, a duplicate field or a lone surrogate is invalid_input naming the line,
never an internal error, and nothing is imported."""

from __future__ import annotations

import pytest

import remem
from remem.errors import InvalidInput

ZERO = "sha256:" + "0" * 64


def _entry(payload: str) -> str:
    return ('{"id":"s1","kind":"user-message","scope":{"tenantId":"t","userId":"a"},'
            '"runId":"r","timestamp":"2024-01-01T00:00:00Z","sequence":0,"payload":'
            + payload + f',"prevHash":"{ZERO}","entryHash":"{ZERO}"}}')


@pytest.mark.parametrize("line", [
    "[" * 100_000,
    _entry('{"text":"hi","role":"user","scope":"user:a","x":NaN}'),
    _entry('{"text":"hi","text":"other","role":"user","scope":"user:a"}'),
    _entry('{"text":"hi","role":"user","scope":"user:a","y":"\\ud800"}'),
    _entry('{"text":"hi","role":"user","scope":"user:a","z":' + "[" * 80 + "]" * 80 + "}"),
])
def test_a_line_that_is_not_strict_json_is_refused_by_line(tmp_path, line):
    f = tmp_path / "in.jsonl"
    f.write_text(line + "\n", encoding="utf-8")
    mem = remem.open(str(tmp_path / "t.db")).create_memory("m1")
    with pytest.raises(InvalidInput) as err:
        mem.import_log_facts(f)
    assert err.value.details == {"line": 1, "field": "(line)"}
    # nothing imported: the export holds only the claim key, which always goes first
    assert [ln for ln in mem.export_log_facts() if b'"remem-claim-key"' not in ln] == []


def test_a_plain_line_still_imports(tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text(_entry('{"text":"hi","role":"user","scope":"user:a"}') + "\n", "utf-8")
    mem = remem.open(str(tmp_path / "t.db")).create_memory("m1")
    assert mem.import_log_facts(f).log_entries == 1

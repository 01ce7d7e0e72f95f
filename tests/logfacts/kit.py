"""Shared helpers: a memory with every kind of row the export maps, and an independent
schema check (the test builds its own validator from the shared schema file)."""

from __future__ import annotations

import hashlib
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import rfc8785
from jsonschema import Draft202012Validator

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "src" / "remem" / "specs"
                     / "logfacts" / "memory.schema.json").read_text("utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA)
T = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
FORGOTTEN = "pescatarian-zz9"
ERASED = "my passport number is X-ERASED-77"


def populate(mem) -> None:
    """Sources in two runs (one erased), a superseded single key, a multi key, an archived
    item, metadata, retention and a hold, and a forgotten claim."""
    mem.observe("user:maya", "hello, I am Maya", run_id="r1", source_id="s1", derive=False,
                occurred_at=T, metadata={"channel": "chat"})
    mem.observe("user:maya", ERASED, run_id="r1", source_id="s2", derive=False,
                occurred_at=T + timedelta(minutes=1))
    mem.observe("user:maya", "see you", run_id="r1", source_id="s3", derive=False,
                occurred_at=T + timedelta(minutes=2), kind="agent-message")
    mem.observe("agent:bot", "tool said 42", run_id="r2", source_id="t1", derive=False,
                occurred_at=T, kind="tool-result", role="tool", actor="calc")
    mem.forget_source("s2")
    mem.remember("user:maya", "home_city", "Lisbon", valid_at=T,
                 source={"id": "s1", "text": "I live in Lisbon"})
    mem.remember("user:maya", "home_city", "Porto", valid_at=T + timedelta(days=30),
                 metadata={"confidence": "high"})
    for v in ("hiking", "chess"):
        mem.remember("user:maya", "hobbies", v, valid_at=T)
    old = mem.remember("user:maya", "nickname", "Em", valid_at=T)
    mem.archive(old.item_id)
    kept = mem.remember("agent:bot", "rule_tone", "answer briefly", kind="rule", valid_at=T)
    mem.set_retention(kept.item_id, keep_until=T + timedelta(days=3650))
    mem.set_legal_hold(kept.item_id)
    gone = mem.remember("user:maya", "diet", FORGOTTEN, valid_at=T)
    mem.forget(gone.item_id)


def export_bytes(mem) -> bytes:
    buf = io.BytesIO()
    mem.export_log_facts_to(buf)
    return buf.getvalue()


def records(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.splitlines()]


def sorted_lines(data: bytes, drop_types: tuple[str, ...] = ()) -> list[bytes]:
    return sorted(line for line in data.splitlines()
                  if json.loads(line).get("type") not in drop_types)


def content_hash(payload: dict) -> str:
    """The schema's contentHash of a payload, computed here independently of remem (the
    entryHash commits to a salted digest that never leaves remem: docs/log-facts.md)."""
    return "sha256:" + hashlib.sha256(rfc8785.dumps(payload)).hexdigest()

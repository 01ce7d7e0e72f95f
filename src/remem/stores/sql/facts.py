"""Reads behind a Fact record (``service.facts``), shared by both SQL backends.

Each function takes the store (``SqlStore``) and reads with its own connection; none writes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def payload_fact(store: Any, memory_id: str, payload_id: str
                 ) -> tuple[bool, Any, dict[str, Any] | None]:
    """(found, value, fact attributes JSON or None) of a payload row; (False, None, None)
    when the payload was erased."""
    row = store._one("SELECT value, fact FROM payloads WHERE memory_id=? AND payload_id=?",
                     (memory_id, payload_id))
    if row is None:
        return False, None, None
    return True, json.loads(row["value"]), json.loads(row["fact"]) if row["fact"] else None


def content_refs(store: Any, memory_id: str, item_ids: Sequence[str]) -> list[str]:
    """Blob references held by the payloads of ``item_ids`` (every revision)."""
    refs: list[str] = []
    for item_id in item_ids:
        for r in store._all("SELECT fact FROM payloads WHERE memory_id=? AND item_id=? AND "
                            "fact IS NOT NULL", (memory_id, item_id)):
            ref = json.loads(r["fact"]).get("content_ref")
            if ref:
                refs.append(ref)
    return refs


def memory_content_refs(store: Any, memory_id: str) -> set[str]:
    """Every blob reference any payload of the memory holds (the orphan sweep keeps these)."""
    refs: set[str] = set()
    for r in store._all("SELECT fact FROM payloads WHERE memory_id=? AND fact IS NOT NULL",
                        (memory_id,)):
        ref = json.loads(r["fact"]).get("content_ref")
        if ref:
            refs.add(ref)
    return refs


def referenced(store: Any, memory_id: str, ref: str) -> bool:
    """Whether any payload of the memory still refers to blob ``ref``."""
    for r in store._all("SELECT fact FROM payloads WHERE memory_id=? AND fact LIKE ?",
                        (memory_id, f"%{ref}%")):
        if json.loads(r["fact"]).get("content_ref") == ref:
            return True
    return False


def vector_model(store: Any, memory_id: str, item_id: str) -> str | None:
    """The embedding model of the item's stored vector (None: not embedded)."""
    row = store._one("SELECT model FROM vectors WHERE memory_id=? AND doc_id=?",
                     (memory_id, item_id))
    return row["model"] if row else None


def event_at(store: Any, memory_id: str, seq: int) -> str | None:
    """The ``at`` time of ledger event ``seq``."""
    row = store._one("SELECT at FROM ledger WHERE memory_id=? AND seq=?", (memory_id, seq))
    return row["at"] if row else None


def merged_into(store: Any, memory_id: str, item_id: str) -> list[str]:
    """Ids of the items merged into ``item_id`` (``item.merged`` events), in ledger order."""
    out: list[str] = []
    for r in store._all("SELECT data FROM ledger WHERE memory_id=? AND type='item.merged' "
                        "AND data LIKE ? ORDER BY seq", (memory_id, f"%{item_id}%")):
        data = json.loads(r["data"])
        if data.get("into") == item_id:
            out.extend(i for i in data.get("item_ids", []) if i != item_id)
    return out


__all__ = ["content_refs", "event_at", "memory_content_refs", "merged_into", "payload_fact",
           "referenced", "vector_model"]

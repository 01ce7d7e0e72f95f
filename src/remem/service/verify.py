"""``verify``: walks every memory's ledger and source chains and reports every broken link.

The walk is :func:`remem.domain.ledger.chain_breaks` over the rows exactly as stored (event
data still JSON text), so damage of any kind - a changed byte, JSON that no longer parses, a
missing, duplicated or reordered seq, a rewritten hash - is reported with its position and
never raises.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from remem.domain.ledger import MAX_BREAKS, chain_breaks


def verify_store(adapter: Any) -> dict[str, Any]:
    """Every memory's chains.

    Returns:
        ``{"ok": bool, "memories": {memory_id: entry}}`` with each entry as
        :func:`verify_memory` returns it.
    """
    report: dict[str, Any] = {"ok": True, "memories": {}}
    for m in adapter.list_memories():
        entry = verify_memory(adapter, m["memory_id"])
        report["memories"][m["memory_id"]] = entry
        report["ok"] = report["ok"] and entry["ok"]
    return report


def verify_memory(adapter: Any, memory_id: str) -> dict[str, Any]:
    """One memory's ledger and source chains.

    Returns:
        ``{"ok", "events" (rows walked), "broken" (first break: {seq, position, reason}) |
        None, "breaks" (every break, at most ``MAX_BREAKS``), "sources_ok", "sources",
        "sources_broken" (first source-chain break), "sources_breaks" (every one)}``.
    """
    walked = 0

    def rows() -> Iterator[dict[str, Any]]:
        nonlocal walked
        for row in adapter.ledger_rows(memory_id):
            walked += 1
            yield row

    breaks = [b.to_dict() for b in chain_breaks(rows(), limit=MAX_BREAKS)]
    entry: dict[str, Any] = {"ok": not breaks, "events": walked,
                             "broken": breaks[0] if breaks else None, "breaks": breaks}
    entry.update(adapter.verify_extras(memory_id))
    entry["ok"] = entry["ok"] and entry.get("sources_ok", True)
    return entry

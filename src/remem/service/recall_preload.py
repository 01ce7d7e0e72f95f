"""Rows read while the query is embedded, reused by recall's main snapshot when nothing changed.

Recall reads its lexical candidates (full text, keys) in a first snapshot while a worker thread
embeds the query (``service.query_vectors``). That thread takes most of a recall's time, so the
first snapshot also loads the item rows, payloads and source refs of those candidates
(:func:`preload`). The main snapshot, opened once the vector is there, uses them only when the
ledger head is the one they were read at (every change to items, payloads or provenance
appends a ledger event), else reads everything again; rows it lacks (vector-only candidates)
it reads itself. So every row of a result is the row at its ``basis_seq``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Preloaded:
    """Rows read in the first snapshot at ledger head ``head``."""

    head: int
    items: dict[str, Any] = field(default_factory=dict)
    payloads: dict[str, dict[str, Any]] = field(default_factory=dict)
    refs: dict[str, list[str]] = field(default_factory=dict)


def preload(snap: Any, item_ids: Sequence[str]) -> Preloaded:
    """Item rows, their payloads and source refs of ``item_ids`` (forgotten ones have none)."""
    ids = list(dict.fromkeys(item_ids))
    rows = snap.items(ids) if ids else {}
    found = list(rows)
    payloads = snap.payloads([r.payload_id for r in rows.values()]) if rows else {}
    refs = snap.source_refs(found) if found else {}
    return Preloaded(snap.head_seq(), rows, payloads, {i: refs.get(i, []) for i in found})


class PreloadedSnapshot:
    """A search snapshot that answers ``items``, ``payloads`` and ``source_refs`` from
    :class:`Preloaded` rows first (same results, same order as the store's: items by id) and
    delegates everything else to ``snap``."""

    def __init__(self, snap: Any, pre: Preloaded) -> None:
        self._snap, self._pre = snap, pre

    def __getattr__(self, name: str) -> Any:
        return getattr(self._snap, name)

    def items(self, item_ids: Sequence[str]) -> dict[str, Any]:
        have = self._pre.items
        missing = [i for i in item_ids if i not in have]
        if missing:
            have.update(self._snap.items(missing))
        return {i: have[i] for i in sorted(set(item_ids)) if i in have}  # the store: by id

    def payloads(self, payload_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        have = self._pre.payloads
        missing = [p for p in payload_ids if p not in have]
        if missing:
            have.update(self._snap.payloads(missing))
        return {p: have[p] for p in payload_ids if p in have}

    def source_refs(self, item_ids: Sequence[str]) -> dict[str, list[str]]:
        have = self._pre.refs
        missing = [i for i in item_ids if i not in have]
        if missing:
            got = self._snap.source_refs(missing)
            have.update({i: got.get(i, []) for i in missing})
        return {i: have[i] for i in item_ids if have.get(i)}

"""The one place the view reads fields that other work may add to the service.

Each function reads today's API and, where a newer field exists, uses it; when the service
grows the field (exact ``Page.total``, ``text``/``metadata`` filters on ``Memory.items``,
index health in ``status()``, a compact recall text), wire it here and nowhere else.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

#: Most items the text filter reads when the service cannot filter text itself.
TEXT_SCAN_MAX_ITEMS = 2000


@dataclass
class ItemsView:
    """One page of the items table: rows, the cursor of the next page and the total."""

    items: list[Any]
    next_cursor: str | None
    total: int | None
    scanned: int | None = None
    notes: list[str] = field(default_factory=list)


def _accepts(fn: Any, name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _matches(view: Any, needle: str) -> bool:
    hay = " ".join(str(x) for x in (view.key, view.value, view.quote or "", view.scope))
    return needle.casefold() in hay.casefold()


def list_items(memory: Any, *, text: str | None, metadata: dict[str, str] | None = None,
               **filters: Any) -> ItemsView:
    """A page of ``memory.items(**filters)`` with the text (and metadata) filter applied.

    When ``Memory.items`` takes ``text`` it filters; otherwise pages are read until
    ``limit`` matches or ``TEXT_SCAN_MAX_ITEMS`` items were scanned (said in ``notes``).
    """
    notes = []
    if metadata:
        filters["filters"] = {"metadata": dict(metadata)}
    if not text or _accepts(memory.items, "text"):
        if text:
            filters["text"] = text
        page = memory.items(**filters)
        return ItemsView(page.items, page.next_cursor, getattr(page, "total", None),
                         notes=notes)
    limit, rows, scanned = filters["limit"], [], 0
    cursor = filters.pop("cursor", None)
    while True:
        page = memory.items(cursor=cursor, **filters)
        scanned += len(page.items)
        rows += [v for v in page.items if _matches(v, text)]
        cursor = page.next_cursor
        if cursor is None or len(rows) >= limit or scanned >= TEXT_SCAN_MAX_ITEMS:
            break
    notes.append(f"Text filter read {scanned} items after the cursor (key, value, quote, "
                 "scope).")
    return ItemsView(rows, cursor, None, scanned, notes)


def index_health(status: dict[str, Any]) -> Any:
    """Index health from ``Memory.status()`` when the service reports it, else None."""
    for name in ("index_health", "indexes", "index"):
        if name in status:
            return status[name]
    return None


def model_facing(result: Any) -> tuple[str, int]:
    """What the model is given for a recall result and its token count under the result's
    tokenizer: the compact model-facing ``text`` (the budgeted part) and ``result.tokens``.
    The structured items beside it are for the program and are shown separately."""
    return result.text, result.tokens

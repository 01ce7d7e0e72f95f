"""Memory methods for Kind-B cached facts: refresh one now, sweep the due ones, read a
fact's Source block. Mixed into :class:`remem.service.memory.Memory`; every method asks the
guard first (``service.cached`` does the work; remembering one is ``Memory.remember`` with
``cached_source``)."""

from __future__ import annotations

from typing import Any


class CachedMethods:
    """refresh / refresh_due / cached_source (see ``Memory``)."""

    guard: Any
    ctx: Any

    def refresh(self, item_id: str) -> dict[str, Any]:
        """Refreshes one Kind-B cached fact now, whatever its strategy (``manual`` facts
        refresh only this way): asks its source through the registered handler; a new value
        supersedes through the decision (actor ``system:refresh``), an unchanged one only
        advances ``lastVerifiedAt``, a failure labels the fact stale with the reason.

        Returns:
            ``{"item_id", "state": unchanged | changed | failed | skipped, "new_item_id",
            "stale", "reason"}`` (skipped: not a current cached fact).

        Raises:
            NotFoundOrNotVisible: no such item visible to the caller.
            PermissionDenied: the caller may not write the item's scope.
        """
        self.guard.refreshable(item_id)
        return self.ctx.cached.refresh(item_id)

    def refresh_due(self) -> dict[str, int]:
        """Runs the background sweep now (what the ``refresh`` job does): refreshes stale
        ``background`` cached facts, highest priority first; returns counts per state.

        Raises:
            PermissionDenied: not a memory-wide admin.
        """
        self.guard.manage("refresh due cached facts")
        return self.ctx.cached.sweep()

    def cached_source(self, item_id: str) -> dict[str, Any] | None:
        """A visible item's Source block (schema shape) with ``stale`` and
        ``stale_reason``; None when the item is not a cached fact."""
        self.guard.item(item_id)
        return self.ctx.cached.source_block(item_id)


__all__ = ["CachedMethods"]

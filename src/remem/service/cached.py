"""Kind-B cached facts: items that cache external state, their freshness and their refresh.

A remembered item may carry a Log+Facts Source block (``service.cached_source``); it is
stored beside the item (``cached_sources``), never in the ledger. Stale means the TTL ran out
(``lastVerifiedAt + ttlSeconds <= now``) or the last check failed (the reason is kept).

A refresh asks the handler registered under the block's ``refresh.handler`` (else its
``kind``; ``providers.registry.refresh_handler``):

- ``unchanged`` (HTTP 304, or a body equal to the cached value): only the freshness advances
  (``lastVerifiedAt``, etag); no item, no ledger event.
- ``changed``: the new value goes through the one decision (``Writer``, actor
  ``system:refresh``, authority owner, ``valid_at`` now), so history and the ledger see the
  supersession; the source row moves to the new item in the same transaction.
- ``failed`` (or no handler, or a deadline): the fact stays and is labelled stale with the
  reason.

Strategies: ``on-read`` facts are refreshed by recall before it returns, within the recall
deadline (a fact not refreshed in time comes back labelled stale, never silently fresh);
``background`` facts by the ``refresh`` job (``service.jobs.refresh``), highest priority first;
``manual`` facts only by ``Memory.refresh``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from remem.domain.canonical import normalize_value
from remem.domain.model import Authority
from remem.domain.timefmt import to_iso
from remem.errors import InvalidInput, RememError
from remem.ports import RefreshAnswer, RefreshCheck
from remem.service.cached_source import CachedSource, due_at, is_stale, schema_block, source_row
from remem.service.candidates import candidate
from remem.service.writer import WriteRequest

REFRESH_ACTOR = "system:refresh"
DEFAULT_ON_READ_MS = 2000
"""The on-read refresh budget of a recall that sets no ``deadline_ms``."""
ON_READ_RETRY_S = 30
"""After a failed check, recall does not ask the source again for this many seconds (the
fact stays labelled stale), so a down source does not slow every recall."""
DEFAULT_CHECK_S = 10.0
"""The most one manual or background check may take, in seconds."""
SWEEP_LIMIT = 100
"""The most facts one background sweep refreshes."""


class CachedFacts:
    """The cached facts of one memory (hangs off its ``MemoryContext``).

    Args:
        ctx: the memory's context (store, id, clock, writer, config).
    """

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        ctx.writer.on_commit.append(self._drop_forgotten)

    # --- writes beside the decision ---------------------------------------------------------
    def written_hook(self, src: CachedSource) -> Callable[[Any, Any], None]:
        """The ``WriteRequest.on_written`` that stores ``src`` beside the written item."""
        def put(uow: Any, result: Any) -> None:
            if result.item_id is None or result.status not in ("current", "conflict"):
                return
            from remem.stores.sql.cached import put_cached

            put_cached(uow, source_row(src, item_id=result.item_id, scope=result.scope,
                                       key=result.key, now=self.ctx.clock.now()))
        return put

    def _drop_forgotten(self, uow: Any, proj: Any, _new: Any) -> None:
        """Forgetting an item deletes its source block too (a URI may hold a secret)."""
        if proj.forgotten:
            from remem.stores.sql.cached import drop_cached

            drop_cached(uow, sorted(proj.forgotten), to_iso(self.ctx.clock.now()))

    # --- reads -------------------------------------------------------------------------------
    def labels(self, item_ids: list[str]) -> dict[str, dict[str, Any]]:
        """{item_id: {"stale", "strategy", "last_verified_at"[, "stale_reason"]}} of the
        cached items among ``item_ids`` (others are absent: not cached)."""
        rows = self.ctx.store.cached_sources(self.ctx.id, item_ids)
        now = to_iso(self.ctx.clock.now())
        out = {}
        for item_id, row in rows.items():
            label = {"stale": is_stale(row, now), "strategy": row["strategy"],
                     "last_verified_at": row["last_verified_at"]}
            if row.get("stale_reason"):
                label["stale_reason"] = row["stale_reason"]
                label["stale_at"] = row["stale_at"]
            out[item_id] = label
        return out

    def source_block(self, item_id: str) -> dict[str, Any] | None:
        """The item's Source block in the schema's shape plus ``stale`` (None: not cached)."""
        row = self.ctx.store.cached_sources(self.ctx.id, [item_id]).get(item_id)
        if row is None:
            return None
        return {**schema_block(row), "stale": is_stale(row, to_iso(self.ctx.clock.now())),
                "stale_reason": row.get("stale_reason")}

    # --- refresh -----------------------------------------------------------------------------
    def refresh(self, item_id: str, *, budget_s: float = DEFAULT_CHECK_S) -> dict[str, Any]:
        """Checks one cached item against its source and applies the answer.

        Returns:
            ``{"item_id", "state", "new_item_id", "stale", "reason"}``; state is
            ``unchanged`` | ``changed`` | ``failed`` | ``skipped`` (not a cached fact, or
            no longer current: nothing asked, nothing written).
        """
        row = self.ctx.store.cached_sources(self.ctx.id, [item_id]).get(item_id)
        rec = self.ctx.store.item(self.ctx.id, item_id)
        if row is None or rec is None or rec.status != "current":
            return _outcome(item_id, "skipped", reason="not a current cached fact")
        answer = self._ask(row, budget_s)
        if answer.state == "changed":
            payload = self.ctx.store.payloads(self.ctx.id, [rec.payload_id])
            old = (payload.get(rec.payload_id) or {}).get("value")
            if normalize_value(answer.value) != normalize_value(old):
                return self._write_changed(rec, row, answer)
            answer = RefreshAnswer("unchanged", etag=answer.etag,
                                   source_version=answer.source_version)
        if answer.state == "unchanged":
            self._verified(row, answer)
            return _outcome(item_id, "unchanged", stale=False)
        self.mark_stale(item_id, answer.reason or "the refresh failed")
        return _outcome(item_id, "failed", stale=True, reason=answer.reason)

    def _ask(self, row: dict[str, Any], budget_s: float) -> RefreshAnswer:
        from remem.providers.registry import refresh_handler

        name = row.get("handler") or row["source_kind"]
        try:
            handler = refresh_handler(name)
        except RememError as exc:
            return RefreshAnswer("failed", reason=exc.message)
        try:
            return handler.check(RefreshCheck(kind=row["source_kind"], uri=row.get("uri"),
                                              etag=row.get("etag"),
                                              source_version=row.get("source_version"),
                                              timeout_s=budget_s))
        except Exception as exc:  # a plug-in's bug must not fail recall: the fact goes stale
            return RefreshAnswer("failed", reason=f"the refresh handler {name!r} failed "
                                 f"({type(exc).__name__})")

    def _verified(self, row: dict[str, Any], answer: RefreshAnswer) -> None:
        now = self.ctx.clock.now()
        self.ctx.store.update_cached(self.ctx.id, row["item_id"], {
            "last_verified_at": to_iso(now), "etag": answer.etag or row.get("etag"),
            "source_version": answer.source_version or row.get("source_version"),
            "due_at": due_at(now, row.get("ttl_seconds")), "stale_reason": None,
            "stale_at": None})

    def mark_stale(self, item_id: str, reason: str) -> None:
        """Labels a cached item stale with ``reason`` (kept until a check succeeds)."""
        self.ctx.store.update_cached(self.ctx.id, item_id, {
            "stale_reason": reason[:300], "stale_at": to_iso(self.ctx.clock.now())})

    def _write_changed(self, rec: Any, row: dict[str, Any],
                       answer: RefreshAnswer) -> dict[str, Any]:
        """Supersedes through the decision; moves the source row in the same transaction."""
        from remem.stores.sql.cached import cached_in, drop_cached, put_cached

        now = self.ctx.clock.now()

        def move(uow: Any, result: Any) -> None:
            current = cached_in(uow, rec.item_id)
            if current is None or result.item_id is None:
                return  # forgotten meanwhile: nothing to move
            put_cached(uow, {**current, "item_id": result.item_id,
                             "last_verified_at": to_iso(now),
                             "etag": answer.etag, "source_version": answer.source_version,
                             "due_at": due_at(now, row.get("ttl_seconds")),
                             "stale_reason": None, "stale_at": None})
            if result.item_id != rec.item_id:
                drop_cached(uow, [rec.item_id], to_iso(now))

        try:
            cand = candidate(self.ctx, rec.scope, rec.key, answer.value, rec.kind, now,
                             None, None)
        except InvalidInput as exc:
            reason = f"the source's new value was refused: {exc.message}"
            self.mark_stale(rec.item_id, reason)
            return _outcome(rec.item_id, "failed", stale=True, reason=reason)
        result = self.ctx.writer.write(WriteRequest(
            cand, Authority.OWNER, REFRESH_ACTOR, stated_valid_at=now, on_written=move))
        return _outcome(rec.item_id, "changed", new_item_id=result.item_id, stale=False,
                        outcome=result.outcome)

    # --- strategies --------------------------------------------------------------------------
    def on_read(self, run: Callable[[], Any], *, deadline_ms: int) -> Any:
        """Runs a recall; refreshes its stale ``on-read`` facts within the deadline (default
        :data:`DEFAULT_ON_READ_MS`) and, when any was checked, recalls again so values and
        labels are current. A fact the deadline cut off stays labelled stale; one whose check
        failed less than :data:`ON_READ_RETRY_S` ago is not asked again yet."""
        result = run()
        retry = to_iso(self.ctx.clock.now() - timedelta(seconds=ON_READ_RETRY_S))
        due = [i.id for i in result.items
               if i.cached and i.cached.get("stale") and i.cached.get("strategy") == "on-read"
               and (i.cached.get("stale_at") or "") <= retry]  # a failed source rests a while
        if not due:
            return result
        budget_s = (deadline_ms or DEFAULT_ON_READ_MS) / 1000
        ends = time.monotonic() + budget_s
        for item_id in due:
            left = ends - time.monotonic()
            if left <= 0.01:
                self.mark_stale(item_id, "the recall deadline passed before the refresh")
                continue
            self.refresh(item_id, budget_s=left)
        return run()

    def sweep(self, *, limit: int = SWEEP_LIMIT,
              budget_s: float = DEFAULT_CHECK_S) -> dict[str, int]:
        """Refreshes stale ``background`` facts, highest priority first (the refresh job).

        Returns counts per state (unchanged, changed, failed, skipped)."""
        rows = self.ctx.store.cached_due(self.ctx.id, "background",
                                         to_iso(self.ctx.clock.now()), limit)
        counts = {"unchanged": 0, "changed": 0, "failed": 0, "skipped": 0}
        for row in rows:
            rec = self.ctx.store.item(self.ctx.id, row["item_id"])
            if rec is None or rec.status == "superseded":  # replaced by another writer
                self.ctx.store.drop_cached_rows(self.ctx.id, [row["item_id"]])
            out = self.refresh(row["item_id"], budget_s=budget_s)
            counts[out["state"]] += 1
        return counts


def _outcome(item_id: str, state: str, *, new_item_id: str | None = None,
             stale: bool | None = None, reason: str | None = None,
             outcome: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"item_id": item_id, "state": state, "new_item_id": new_item_id,
                           "stale": stale, "reason": reason}
    if outcome is not None:
        out["outcome"] = outcome
    return out


__all__ = ["CachedFacts", "REFRESH_ACTOR"]

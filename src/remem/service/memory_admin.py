"""Memory methods for memory-wide work: status, verify, jobs and runs, re-embedding, config
and tokens. Mixed into :class:`remem.service.memory.Memory`; every method asks the guard first
(memory-wide work needs a memory-wide principal, administration the admin role)."""

from __future__ import annotations

from typing import Any


class AdminMethods:
    """status / verify / jobs / reembed / config / tokens (see ``Memory``)."""

    guard: Any
    ctx: Any

    def status(self) -> dict[str, Any]:
        """Ledger head, item counts per status and index health (memory-wide: a memory-wide
        subject); ``index_health`` is described in ``service.health.index_health``."""
        if self.principal.scope is not None:
            from remem.errors import PermissionDenied

            raise PermissionDenied("Status covers every scope of the memory; it needs a "
                                   "caller with subject 'admin'.",
                                   subject=self.principal.subject)
        return {"memory": self.id, "tenant": self.ctx.tenant_id,
                "head_seq": self.store.head_seq(self.id),
                "items": self.store.status_counts(self.id),
                "pending_erasures": self.store.pending_erasures(self.id),
                "claim_ids": "legacy" if self.writer.claim_secret is None else "keyed",
                "index_health": self._index_health(), **self._runs_status()}

    def _index_health(self) -> dict[str, Any]:
        """Pending and failed derive/index jobs, last error, oldest pending age (status)."""
        from remem.service.health import index_health

        return index_health(self.store, self.id, self.clock.now())

    def verify(self) -> dict[str, Any]:
        """Walks this memory's ledger and source chains (``service.verify.verify_memory``);
        memory-wide, so a memory admin only. Never raises on damage."""
        from remem.service.verify import verify_memory

        self.guard.manage("verify the ledger")
        return verify_memory(self.store, self.id)

    def _runs_status(self, recent: int = 20, window: int = 500) -> dict[str, Any]:
        """Recent job runs and, kept apart so successes never hide them, recent failures
        with their reason (KickSide: the memory's status lists runs)."""
        fields = ("run_id", "kind", "status", "started_at", "finished_at", "reason")
        rows = [{f: r.get(f) for f in fields} for r in self.store.list_runs(self.id, window)]
        return {"runs": rows[:recent],
                "failed_runs": [r for r in rows if r["status"] == "failed"][:recent]}

    def memory_config(self) -> dict[str, Any]:
        """The memory's config (memory admin)."""
        self.guard.manage("read the config")
        return self.config

    def replace_config(self, config: dict[str, Any]) -> dict[str, Any]:
        """Replaces the memory's config (validated); returns the stored config.

        Raises:
            PermissionDenied: not a memory admin. ConfigInvalid: the config fails its schema.
        """
        self.guard.manage("replace the config")
        self.owner.update_config(self.id, config)
        return self.owner.context(self.id).config

    def delete(self) -> dict[str, int]:
        """Purges the memory (ledger, every row, its tokens); returns rows per table.

        Raises:
            LegalHoldActive: items are under legal hold (``details.held``); nothing deleted.
        """
        self.guard.manage("delete the memory")
        return self.owner.delete_memory(self.id)  # refuses held items (RememStore)

    def create_token(self, role: str, subject: str, label: str | None = None) -> tuple[str, Any]:
        """A new token of this memory: (the token, shown once; its TokenInfo)."""
        from remem.service.tokens import Tokens

        self.guard.manage("create tokens")
        return Tokens(self.owner).create(self.id, role, subject, label)

    def list_tokens(self) -> list[Any]:
        """This memory's tokens (no secrets), revoked ones included."""
        from remem.service.tokens import Tokens

        self.guard.manage("list tokens")
        return Tokens(self.owner).list(self.id)

    def revoke_token(self, token_id: str) -> Any:
        """Revokes one of this memory's tokens (NotFoundOrNotVisible for any other)."""
        from remem.service.tokens import Tokens

        self.guard.manage("revoke tokens")
        return Tokens(self.owner).revoke(token_id, memory_id=self.id)


    def run_jobs(self, max_jobs: int | None = None) -> list[dict[str, Any]]:
        """Runs this memory's due jobs in-process (derive, consolidate); returns outcomes."""
        self.guard.manage("run jobs")
        return self.ctx.run_jobs(max_jobs)

    def runs(self, limit: int = 50) -> list[dict[str, Any]]:
        """Recent job runs with status and failure reason (``remem runs``)."""
        self.guard.manage("list runs")
        return self.store.list_runs(self.id, limit)

    def consolidate_now(self) -> str:
        """Brings the memory's consolidation forward; returns the job id."""
        from remem.service.jobs.consolidate import schedule_consolidation

        self.guard.manage("schedule consolidation")
        return schedule_consolidation(self, now_=True)

    def resummarize(self) -> dict[str, Any]:
        """Maintenance (KickSide ``maintainable``): brings consolidation forward; returns
        ``{"job_id", "kind", "run_at"}``. Embedded callers run it with ``run_jobs``."""
        from remem.service.jobs.schedule import arm

        self.guard.manage("resummarize the memory")
        return arm(self, "consolidate", now_=True)

    def reembed(self, *, batch_size: int = 64, progress=None,
                force: bool = False) -> dict[str, Any]:
        """Recomputes vectors with the configured embedder and switches atomically; by default
        only missing or outdated ones, with ``force`` every vector (KickSide maintainable)."""
        self.guard.manage("re-embed the memory")
        return self.ctx.embedding.reembed(batch_size=batch_size, progress=progress,
                                          force=force)

    def release_hold(self, item_id: str, *, actor: str | None = None) -> dict[str, Any]:
        """Releases an item's legal hold (Log+Facts: "requires explicit release via admin
        action"); the guard decides: role admin and the item writable by the caller. A
        released item is erased by the next retention run once it is due.

        Returns:
            ``{"item_id", "legal_hold": False}``.

        Raises:
            PermissionDenied: the caller is not an admin. NotFoundOrNotVisible: no such item
                visible to the caller.
        """
        from remem.domain.access import Role
        from remem.service.forget import Forgetter

        self.guard.role(Role.ADMIN, "release legal holds")
        self.guard.writable_item(item_id)
        return Forgetter(self).set_legal_hold(item_id, False, actor=self._actor(actor))

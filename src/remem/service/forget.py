"""Forget for real: the erasure cascade, the erasure report, retention and legal holds.

``Forgetter.forget`` runs one owner operation per key: the decision computes the cascade
(domain.operations.forget), the ledger gets text-free ``item.forgotten`` events and the fold
writes tombstones; in the same transaction every surface holding the text is erased. After
commit the store scrubs freed bytes and every surface is re-checked: the report says
``completed`` only when each in-scope surface is verified erased *and* the store confirmed the
bytes left every file it writes (SQLite: a successful TRUNCATE checkpoint after the erasure;
PostgreSQL: the partitions rewritten). Otherwise ``pending`` with a ``reason``; the owed scrub
is recorded durably in the erasing transaction and finished later (KIP: an acknowledgement
is not erasure).

Scopes: ``scopes=None`` is a forget of the whole memory (owner, admin, retention): sources in
every scope whose text contains an erased value are redacted too. A list limits the forget
to those scopes (a scoped caller): targets outside them are not visible, sources outside them
are not touched, and the report's ``scopes`` names what was covered; its ``completed`` is
about those scopes only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from remem.domain import operations as ops
from remem.domain.model import AGENT_OWNED_KINDS, ItemStatus, Scope, ScopeKind, parse_key
from remem.domain.timefmt import from_iso, to_iso
from remem.errors import InvalidInput, LegalHoldActive, NotFound, PermissionDenied

SURFACES = ("payloads", "vectors", "full_text", "provenance", "sources", "pinned_profiles",
            "run_inputs", "blobs", "digests", "feedback")


@dataclass
class ErasureReport:
    """What forget erased, per surface (KIP forget plan).

    Attributes:
        state: completed | blocked | pending | partial (about the covered ``scopes`` only;
            partial: sources cited by an item under legal hold were kept, see ``reason``).
        items: item ids erased.
        surfaces: {surface: {"erased": count, "state": erased|none|pending|blocked}};
            ``digests``: conversation-window digests erased with the redacted sources
            (each derived again without them when enough live turns remain).
        scopes: "all" (the whole memory) or the sorted scopes this forget covered.
        sources: ids of the sources whose text was redacted.
        reason: why the state is pending (None otherwise).
    """

    state: str
    mode: str = "semantic"
    items: list[str] = field(default_factory=list)
    tombstones: int = 0
    surfaces: dict[str, dict[str, Any]] = field(default_factory=dict)
    actor: str = "owner"
    scopes: str | list[str] = "all"
    sources: list[str] = field(default_factory=list)
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"state": self.state, "mode": self.mode, "items": self.items,
                "tombstones": self.tombstones, "surfaces": self.surfaces, "actor": self.actor,
                "scopes": self.scopes, "sources": self.sources, "reason": self.reason}


def covered(scopes: Sequence[str] | None) -> str | list[str]:
    """The report's ``scopes``: "all", or the sorted distinct scopes (each one parsed).

    Raises:
        InvalidInput: a scope is not a valid handle, or ``scopes`` is a bare string.
    """
    if scopes is None:
        return "all"
    if isinstance(scopes, str):
        raise InvalidInput("scopes must be a list of scopes (or None for the whole memory).",
                           field="scopes")
    return sorted({str(Scope.parse(s)) for s in scopes})


def tombstones(op: Any) -> int:
    """Distinct claims an operation's events forgot (one tombstone each)."""
    return len({e.data["claim_id"] for e in op.events if "claim_id" in e.data})


def blocked_report(actor: str, cover: str | list[str]) -> dict[str, Any]:
    """The report of a forget a legal hold refused (nothing erased)."""
    return ErasureReport(state="blocked", items=[], actor=actor,
                         surfaces={s: {"erased": 0, "state": "blocked"} for s in SURFACES},
                         scopes=cover).to_dict()


def _not_visible(item_id: str, memory_id: str) -> NotFound:
    """Outside the covered scopes answers exactly like a missing item (the guard's answer)."""
    from remem.service.guard import hidden

    return hidden("Item", item_id, "item_id")


def check_forget_authority(item: Any, caller_scope: str | None) -> None:
    """ForgetMemory semantics (KickSide): a caller forgets only its own scope's memories,
    never the agent's identity, rules, skills or lessons.

    Raises:
        PermissionDenied: the item is outside the caller's scope or agent-owned.
    """
    if caller_scope is None:
        return
    if item.scope != caller_scope:
        raise PermissionDenied(f"Item {item.item_id} is not in scope {caller_scope}; a caller "
                               "may forget only its own scope's memories.",
                               item_id=item.item_id)
    if item.kind in AGENT_OWNED_KINDS or Scope.parse(item.scope).kind is ScopeKind.AGENT:
        raise PermissionDenied(f"Item {item.item_id} is the agent's {item.kind}; agent "
                               "identity, rules, skills and lessons are edited by people with "
                               "write access, not forgotten by tools.", item_id=item.item_id)


class Forgetter:
    """Forget, retention and holds for one memory (used by ``Memory``)."""

    def __init__(self, memory: Any) -> None:
        self.memory = memory
        self.store = memory.store
        #: Blob references of the payloads erased by this forget (deleted after commit).
        self.blob_refs: list[str] = []
        #: Digests erased with redacted sources (derived again after commit).
        self.digest_docs: list[str] = []

    def forget(self, item_id: str | None = None, *, scope: str | None = None,
               key: str | None = None, value: Any = None,
               expected_revision: int | None = None, actor: str = "owner",
               caller_scope: str | None = None, reason: str = "owner",
               scopes: Sequence[str] | None = None) -> ErasureReport:
        """Forgets an item by id, or a key (optionally one value) in a scope.

        Args:
            scopes: None forgets across the whole memory (sources of every scope containing
                the value are redacted); a list covers only those scopes (a scoped caller):
                a target outside them is not visible.

        Raises:
            InvalidInput: neither an item id nor scope+key; key form without expected_revision.
            NotFound: nothing live matches.
            RevisionMismatch: stale expected_revision.
            PermissionDenied: caller_scope may not forget it.
            LegalHoldActive: an item of the cascade is held (details.report has state blocked).
        """
        mem = self.memory
        cover = covered(scopes)
        if item_id is not None:
            rec = mem._item_record(item_id)
            if cover != "all" and rec.scope not in cover:
                raise _not_visible(item_id, mem.id)
            check_forget_authority(rec, caller_scope)
            scope, key, targets = rec.scope, rec.key, [item_id]
            expected = None
        else:
            if scope is None or key is None:
                raise InvalidInput("forget needs an item id, or a scope and a key.",
                                   field="item_id")
            scope = str(Scope.parse(scope))
            parse_key(key)
            if cover != "all" and scope not in cover:
                raise NotFound(f"Nothing to forget under {scope} {key}.", scope=scope, key=key)
            if expected_revision is None:
                raise InvalidInput(f"Forgetting {key!r} by key needs expected_revision; "
                                   "inspect the key and pass its revision.",
                                   field="expected_revision")
            recs = self.store.key_items(mem.id, scope, key)
            if value is not None:
                cid = mem.writer.claim_id(scope, key, value)
                recs = [r for r in recs if r.claim_id == cid]
            else:
                recs = [r for r in recs if r.status in (ItemStatus.CURRENT, ItemStatus.CONFLICT)]
            if not recs:
                raise NotFound(f"Nothing to forget under {scope} {key}"
                               + (" with that value" if value is not None else "") + ".",
                               scope=scope, key=key)
            for r in recs:
                check_forget_authority(r, caller_scope)
            targets, expected = [r.item_id for r in recs], expected_revision
        return self._run(scope, key, targets, expected, actor, reason, scopes)

    def _run(self, scope: str, key: str, targets: list[str], expected: int | None,
             actor: str, reason: str, scopes: Sequence[str] | None = None) -> ErasureReport:
        """Erases the targets (and their cascade) within ``scopes`` (None: whole memory)."""
        cover = covered(scopes)
        try:
            op, counts, erased_sources = self._erase(scope, key, targets, expected, actor,
                                                     reason, cover)
        except LegalHoldActive as exc:
            exc.details["report"] = blocked_report(actor, cover)
            raise
        return self._report(list(op.item_ids), tombstones(op), counts, erased_sources,
                            actor, cover)

    def _erase(self, scope: str, key: str, targets: list[str], expected: int | None,
               actor: str, reason: str, cover: str | list[str]
               ) -> tuple[Any, dict[str, int], list[str]]:
        """One key's forget operation and its erasure, in one transaction; returns the
        operation, erased counts per surface and the ids of the sources redacted."""
        counts: dict[str, int] = {}
        erased_sources: list[str] = []
        held_sources: list[str] = []

        def build(state, proj):
            ops.check_revision(state, expected, "Forget")
            return ops.forget(state, targets, reason=reason)

        def after(uow, proj, op):
            self.blob_refs.extend(uow.content_refs(list(op.item_ids)))
            counts.update(uow.erase(list(op.item_ids), None if cover == "all" else cover,
                                    to_iso(self.memory.clock.now())))
            erased_sources.extend(counts.pop("_source_ids", []))
            self.digest_docs.extend(counts.pop("_digest_docs", []))
            held_sources.extend(counts.pop("_held_source_ids", []))

        op = self.memory.writer.operate(scope, key, actor, build, after)
        if held_sources:
            counts["_held_sources"] = len(set(held_sources))
        return op, counts, erased_sources

    def _report(self, item_ids: list[str], tombstone_count: int, counts: dict[str, int],
                erased_sources: list[str], actor: str, cover: str | list[str]
                ) -> ErasureReport:
        """Scrubs the freed bytes, re-checks every surface and reports: ``completed`` only
        when nothing erased is left in any row or file."""
        self.rederive_digests()
        scrubbed = self.store.scrub_after_erasure(self.memory.id,
                                                  to_iso(self.memory.clock.now()))
        left = self.store.erasure_remaining(self.memory.id, item_ids, erased_sources)
        counts = {**counts, "blobs": 0}
        left = {**left, "blobs": self._erase_blobs(counts)}
        surfaces = {}
        for s in SURFACES:
            n = counts.get(s, 0)
            if s == "run_inputs":
                surfaces[s] = {"erased": 0, "state": "none"}
                continue
            state = "pending" if left.get(s, 0) else ("erased" if n else "none")
            surfaces[s] = {"erased": n, "state": state}
        rows_left = any(v["state"] == "pending" for v in surfaces.values())
        files_left = scrubbed["state"] != "completed"
        why = scrubbed["reason"] if files_left else None
        if rows_left and why is None:
            why = "Some erased rows are still present; run the forget again."
        state = "pending" if why else "completed"
        held = counts.get("_held_sources", 0)
        if held and state == "completed":
            surfaces["sources"]["state"] = "blocked"
            state = "partial"
            why = (f"{held} source{'s' if held != 1 else ''} containing the value "
                   f"{'are' if held != 1 else 'is'} cited by an item under legal hold and "
                   "kept its text; release the hold and forget again to erase "
                   f"{'them' if held != 1 else 'it'}.")
        return ErasureReport(state=state, items=item_ids,
                             tombstones=tombstone_count, surfaces=surfaces, actor=actor,
                             scopes=cover, sources=sorted(set(erased_sources)), reason=why)

    def redact_source(self, source_id: str, at: str) -> dict[str, int]:
        """The store's ``redact_source`` (its own transaction); the digests it erased are
        kept for :meth:`rederive_digests`."""
        counts = self.store.redact_source(self.memory.id, source_id, at)
        self.digest_docs.extend(counts.pop("_digest_docs", []))
        return counts

    def rederive_digests(self) -> int:
        """Derives the digests erased so far again from their windows' remaining live turns
        (``service.digests.reindex_windows``), in one write transaction after the erasure
        committed; returns how many were indexed. A memory without digests indexes none.
        An embedder failure leaves those windows without a digest (``rebuild`` and
        ``reembed`` restore them) rather than failing a forget that already erased."""
        from remem.domain.digests import digests_enabled
        from remem.errors import RememError
        from remem.service.digests import reindex_windows

        docs, self.digest_docs = sorted(set(self.digest_docs)), []
        ctx = self.memory.ctx
        if not docs or not digests_enabled(ctx.config):
            return 0
        try:
            with self.store.unit_of_work(self.memory.id) as uow:
                return reindex_windows(ctx.embedding, ctx.embedding.index.writer(uow), docs)
        except RememError:
            return 0

    def _erase_blobs(self, counts: dict[str, int]) -> int:
        """Deletes the files of the erased blob references (after the commit: a rollback
        never loses content still referenced); counts them in ``counts["blobs"]`` and
        returns how many are still on disk."""
        refs, self.blob_refs = list(dict.fromkeys(self.blob_refs)), []
        blobs = self.memory.ctx.owner.blobs if refs else None
        if blobs is None:
            return 0
        for ref in refs:
            try:
                counts["blobs"] += int(blobs.delete(ref))
            except OSError:
                pass
        return sum(1 for ref in refs if blobs.exists(ref))

    def forget_source(self, source_id: str, *,
                      scopes: Sequence[str] | None = None) -> dict[str, Any]:
        """Redacts one source (payload_only): text and salt removed, index rows erased.

        Args:
            scopes: None (whole memory) or the caller's scopes: a source outside them is not
                visible (the same answer as a missing one).

        Returns:
            {"state": completed | pending, "source_id", "surfaces", "scopes", "reason"}.

        Raises:
            LegalHoldActive: an item under legal hold cites the source (nothing erased).
        """
        from remem.service.guard import hidden

        cover = covered(scopes)
        row = self.store.source(self.memory.id, source_id)
        if row is None or (cover != "all" and row["scope"] not in cover):
            raise hidden("Source", source_id, "source_id")
        now = to_iso(self.memory.clock.now())
        # the redaction records the scrub it owes in its own transaction (survives a crash)
        counts = self.redact_source(source_id, now)
        if counts.pop("held", 0):
            raise LegalHoldActive(
                f"Source {source_id!r} is cited by an item under legal hold; an admin must "
                "release the hold before its text can be erased.", source_id=source_id)
        self.rederive_digests()
        scrubbed = self.store.scrub_after_erasure(self.memory.id, now)
        left = self.store.erasure_remaining(self.memory.id, [], [source_id])
        why = scrubbed["reason"] if scrubbed["state"] != "completed" else None
        if any(left.values()) and why is None:
            why = "Some erased rows are still present; run the forget again."
        return {"state": "pending" if why else "completed", "source_id": source_id,
                "surfaces": {k: {"erased": v, "state": "pending" if left.get(k) else
                                 ("erased" if v else "none")} for k, v in counts.items()},
                "scopes": cover, "reason": why}

    # --- holds and retention ---------------------------------------------------------------
    def set_legal_hold(self, item_id: str, hold: bool, *, actor: str = "admin") -> dict:
        """Sets or releases a legal hold (an admin operation recorded on the ledger)."""
        rec = self.memory._item_record(item_id)
        self.memory.writer.operate(rec.scope, rec.key, actor,
                                   lambda st, p: ops.set_hold(st, item_id, hold))
        return {"item_id": item_id, "legal_hold": hold}

    def set_retention(self, item_id: str, *, keep_until: datetime | None = None,
                      keep_days: int | None = None, actor: str = "owner") -> dict:
        """Sets an item's keep_until directly or as created_at + keep_days."""
        rec = self.memory._item_record(item_id)
        if keep_days is not None and keep_until is not None:
            raise InvalidInput("Give keep_until or keep_days, not both.", field="keep_days")
        if keep_days is not None:
            if keep_days < 1:
                raise InvalidInput("keep_days must be at least 1.", field="keep_days")
            keep_until = from_iso(rec.created_at) + timedelta(days=keep_days)
        if keep_until is not None:
            to_iso(keep_until)
        self.memory.writer.operate(rec.scope, rec.key, actor,
                                   lambda st, p: ops.set_retention(st, item_id, keep_until))
        return {"item_id": item_id, "keep_until": to_iso(keep_until) if keep_until else None}

    def run_retention(self, now: datetime | None = None) -> dict[str, Any]:
        """Erases expired items through the forget path with actor ``system:retention``.

        An item expires at its keep_until, or at created_at + the memory's
        ``retention.keep_days``. Held items are skipped and listed as blocked.
        """
        now = now or self.memory.clock.now()
        keep_days = self.memory.config.get("retention", {}).get("keep_days")
        cutoff = to_iso(now - timedelta(days=keep_days)) if keep_days else None
        due = self.store.retention_due(self.memory.id, to_iso(now), cutoff)
        erased, blocked, reports = [], [], []
        done: set[str] = set()
        for rec in due:
            if rec.item_id in done:
                continue
            try:
                # retention acts for the item's own scope: an expiring value never reaches
                # into other scopes' sources (the value was chosen by that scope's writer)
                rep = self._run(rec.scope, rec.key, [rec.item_id], None, "system:retention",
                                "retention", scopes=[rec.scope])
            except LegalHoldActive:
                blocked.append(rec.item_id)
                continue
            except NotFound:
                continue
            done.update(rep.items)
            erased.extend(rep.items)
            reports.append(rep.to_dict())
        return {"now": to_iso(now), "erased": erased, "blocked": blocked, "reports": reports}

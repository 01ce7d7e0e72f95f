"""Forget a whole scope (issue 13.4): every item and every source of one scope, one report.

The caller names the scope explicitly (there is no memory-wide form). Every item of the scope
that is not yet forgotten — current, superseded, conflict, archived — goes through the forget
path key by key (``item.forgotten`` events, a tombstone per claim, every surface erased in the
key's transaction); then every source of the scope still holding text is redacted and its
feedback rows (``Memory.feedback`` text) are deleted (surface ``feedback``). Nothing
outside the scope is touched. One scrub and one re-check of every surface follow, so the
report says ``completed`` only when nothing erased is left in any row or file.

A legal hold on any item of the scope refuses the whole call before anything is erased
(``LegalHoldActive`` naming how many items are held, with a ``blocked`` report).
"""

from __future__ import annotations

from collections import Counter
from itertools import groupby
from remem.domain.timefmt import to_iso
from remem.errors import LegalHoldActive
from remem.service.forget import ErasureReport, Forgetter, blocked_report, tombstones


def forget_scope(forgetter: Forgetter, scope: str, *, actor: str) -> ErasureReport:
    """Erases every item and source of ``scope`` (a canonical handle the guard allowed).

    Returns:
        One ErasureReport: ``items`` every item erased (cascade included), ``sources`` every
        source redacted, ``tombstones`` the claims tombstoned, ``scopes`` ``[scope]``.

    Raises:
        LegalHoldActive: items of the scope are held (``details``: ``held`` count,
            ``item_ids``, ``report`` with state blocked); nothing was erased.
    """
    mem, store = forgetter.memory, forgetter.store
    cover = [scope]
    items, _ = store.scope_contents(mem.id, scope)
    held = [i.item_id for i in items if i.legal_hold]
    if held:
        raise LegalHoldActive(
            f"{len(held)} item{'s' if len(held) != 1 else ''} of scope {scope} "
            f"{'are' if len(held) != 1 else 'is'} under legal hold, so nothing was forgotten. "
            "An admin must release the holds first (`remem hold ITEM_ID --release`).",
            scope=scope, held=len(held), item_ids=held, report=blocked_report(actor, cover))
    totals: Counter[str] = Counter()
    erased: list[str] = []
    sources: list[str] = []
    claims = 0
    for key, recs in groupby(items, key=lambda r: r.key):
        targets = [r.item_id for r in recs if r.item_id not in erased]
        if not targets:
            continue
        op, counts, srcs = forgetter._erase(scope, key, targets, None, actor, "owner", cover)
        erased.extend(op.item_ids)
        claims += tombstones(op)
        totals.update(counts)
        sources.extend(srcs)
    _, left = store.scope_contents(mem.id, scope)
    for sid in left:
        totals.update(forgetter.redact_source(sid, to_iso(mem.clock.now())))
        sources.append(sid)
    totals["feedback"] += store.erase_feedback(mem.id, scope, to_iso(mem.clock.now()))
    return forgetter._report(erased, claims, dict(totals), sources, actor, cover)


"""KIP recall: a bounded briefing built from recall's structured items, with the seed's
seven-channel coverage, evidence expansion pinned to the producing version, and continuation.

What the budget counts: the whole serialised KIP response (envelope, briefing, coverage,
refs — metadata included) as compact UTF-8 JSON (``separators=(",", ":")``,
``ensure_ascii=False``), in tokens of the advertised (or requested) tokenizer. Optional items
(facts, then sources) drop from the end first; their channel/coverage becomes incomplete and
a ``continuation_ref`` names the rest. Constraints are required: if they do not fit, or even
the empty briefing does not, the answer is ``ResultLimitExceeded``.

Channels (constraints, commitments, dependencies, failures, experiences, skills, evidence):

- constraints: every current ``rule`` of every scope read (task-scoped rules included), listed
  first and labelled ``constraint`` whatever the query; complete when all of them are listed.
- evidence: the matching raw sources (labelled ``source``); incomplete when recall or the
  budget left some out.
- skills: remem (memory_basic) does not serve procedures; retained ``skill``/``lesson`` items
  in the scopes read make it incomplete (shown as ``procedure`` with standing
  ``unverifiable``); none make it not_applicable.
- commitments, dependencies, experiences, failures: memory_basic never forms such records, so
  none are retained; not_applicable — unless an ``after`` barrier is unresolved (then
  incomplete: unprocessed input may hold them) or failed (failures incomplete).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from remem.errors import CursorMismatch, NotFound, PreconditionFailed, \
    ResultLimitExceeded, UnsupportedCapability
from remem.service import kip_responses as R
from remem.service.kip_descriptor import DEFAULT_DEADLINE_MS, DEFAULT_MAX_OUTPUT_TOKENS, \
    DEFAULT_TOKENIZER, TOKENIZERS
from remem.service.kip_requests import KipRequest, RecallInput

CHANNELS = ("constraints", "commitments", "dependencies", "failures", "experiences", "skills",
            "evidence")
PROCEDURAL = ("skill", "lesson")
RECALL_BUDGET_TOKENS = 16_000
"""Budget of the underlying structured recall; the KIP budget is applied to the briefing."""
EPISTEMIC = {"current": "accepted", "conflict": "contested"}


def serialise(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def count_tokens(document: dict[str, Any], tokenizer: str) -> int:
    from remem.providers.tokenizers import get_tokenizer

    return get_tokenizer(tokenizer).count(serialise(document))


def empty_response_tokens(tokenizer: str = DEFAULT_TOKENIZER) -> int:
    """Size of the smallest complete recall response (no items, every channel present)."""
    doc = R.envelope("recall", "succeeded", result=_briefing(
        [], ["unknown: nothing recorded in scope answers this"], "basis:0:000000000000",
        _coverage({c: "not_applicable" for c in CHANNELS}, {}, True, []), []))
    return count_tokens(doc, tokenizer)


def _coverage(channels: dict[str, str], scope: dict[str, Any], complete: bool,
              pending: list[str], unverified: list[str] | None = None) -> dict[str, Any]:
    complete = complete and all(v != "incomplete" for v in channels.values()) and not pending
    return {"complete": complete, "scope": scope, "channels": channels,
            "pending_receipts": pending, "unverified_preconditions": unverified or [],
            "action_eligible": complete and not unverified}


def _briefing(items: list[dict], uncertainties: list[str], basis_ref: str,
              coverage: dict[str, Any], after: list[dict], continuation: str | None = None
              ) -> dict[str, Any]:
    out = {"summary": _summary(items, uncertainties, coverage), "items": items,
           "uncertainties": list(dict.fromkeys(uncertainties))[:128], "basis_ref": basis_ref,
           "coverage": coverage, "after": after}
    if continuation:
        out["continuation_ref"] = continuation
    return out


def _summary(items: list[dict], uncertainties: list[str], coverage: dict[str, Any]) -> str:
    if not items:
        head = uncertainties[0] if uncertainties else "nothing recorded in scope answers this"
    else:
        counts: dict[str, int] = {}
        for it in items:
            counts[it["role"]] = counts.get(it["role"], 0) + 1
        head = ", ".join(f"{n} {role}" for role, n in counts.items())
    return f"{head}; coverage {'complete' if coverage['complete'] else 'incomplete'}"[:4000]


def _clip(text: str) -> str:
    text = text.strip() or "(empty)"
    return text if len(text) <= 4096 else text[:4093] + "..."


def item_entry(view: dict[str, Any], *, constraint: bool = False) -> dict[str, Any]:
    """One structured recall item (or ItemView dict) as a KIP ``MemoryItem``."""
    value = view["value"]
    shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    sources = view.get("sources") or ([view["source_id"]] if view.get("source_id") else [])
    status = EPISTEMIC.get(view["status"], "uncertain")
    ref = view.get("id") or view.get("item_id")
    if view["kind"] in PROCEDURAL:
        return {"ref": ref, "text": _clip(f"{view['key']}: {shown}"), "role": "procedure",
                "epistemic_status": "uncertain", "evidence_refs": sources[:128],
                "action_eligible": False, "standing": "unverifiable"}
    role = "constraint" if constraint or view["kind"] == "rule" else "fact"
    return {"ref": ref, "text": _clip(f"{view['key']}: {shown}"), "role": role,
            "epistemic_status": status, "evidence_refs": list(dict.fromkeys(sources))[:128],
            "action_eligible": status == "accepted"}


def source_entry(src: dict[str, Any]) -> dict[str, Any]:
    """A raw source: labelled ``source``, never accepted knowledge."""
    sid = src.get("id") or src["source_id"]
    return {"ref": sid, "text": _clip(src.get("text") or "(text erased)"), "role": "source",
            "epistemic_status": "not_applicable", "evidence_refs": [sid],
            "action_eligible": False}


class Briefer:
    """Serves one KIP recall for a ``Memory`` (its guard authorises every read)."""

    def __init__(self, memory: Any, req: KipRequest, inp: RecallInput, task: str) -> None:
        self.memory, self.req, self.inp, self.task = memory, req, inp, task
        self.tokenizer = req.budget.tokenizer or DEFAULT_TOKENIZER
        self.max_tokens = req.budget.max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS

    def scopes(self) -> list[str]:
        if self.inp.mode == "resume":  # the current task only, never another's context
            return [self.task]
        return list(dict.fromkeys([self.task, *self.req.scope.context_refs]))

    def respond(self) -> dict[str, Any]:
        inp = self.inp
        if inp.mode == "attention":
            raise UnsupportedCapability("recall mode 'attention' needs durable attention "
                                        "(memory_durable), which remem does not serve; use "
                                        "answer, action or resume.", field="input.mode")
        if self.tokenizer not in TOKENIZERS:
            raise UnsupportedCapability(f"tokenizer {self.tokenizer[:64]!r} is not served; "
                                        "use o200k_base or cl100k_base.",
                                        field="budget.tokenizer")
        scopes = self.memory.guard.read(self.scopes())
        if inp.target_ref and not inp.target_ref.startswith("cont:"):
            return self._expand(inp.target_ref, scopes)
        return self._recall(scopes)

    # --- a new (or continued) briefing ------------------------------------------------------
    def _recall(self, scopes: list[str]) -> dict[str, Any]:
        inp, mem = self.inp, self.memory
        if not inp.query:
            raise CursorMismatch("A continuation_ref continues a query: send it with the same "
                                 "query, scope and after.", field="input.query")
        valid_at = None
        if inp.time is not None:
            self._check_time(inp.after)
            if inp.time.valid_at:
                from remem.domain.timefmt import from_iso

                valid_at = from_iso(inp.time.valid_at, field="input.time.valid_at")
        deadline = self.req.budget.deadline_ms
        res = mem.recall(scopes, inp.query, budget_tokens=RECALL_BUDGET_TOKENS,
                         tokenizer=self.tokenizer, valid_at=valid_at, after=list(inp.after),
                         deadline_ms=DEFAULT_DEADLINE_MS if deadline is None else deadline)
        doc = res.document
        rules = self._rules(scopes)
        constraints = [item_entry(v, constraint=True) for v in rules["items"]]
        seen = {c["ref"] for c in constraints}
        optional = [item_entry(d) for d in doc["items"] if d["id"] not in seen]
        optional += [source_entry(s) for s in doc["sources"]]
        digest = self._digest(scopes)
        offset = self._offset(digest, doc["basis_seq"])
        channels, unc = self._channels(scopes, doc, rules["complete"], optional)
        after = [R.receipt_progress(mem.receipt(r)) for r in inp.after]
        pending = [p["receipt_ref"] for p in after if p["phase"] in ("recorded", "processed")]
        if any(p["phase"] == "failed" for p in after):
            channels["failures"] = "incomplete"
            unc.append("failed: an after receipt failed processing; its input is not formed")
        if pending:
            channels.update({c: "incomplete" for c in CHANNELS if c != "constraints"})
            unc.append("pending: an after receipt is not yet available")
        return self._fit(self._local(constraints), self._local(optional[offset:]), offset, unc,
                         channels, pending, after,
                         digest, doc["basis_seq"])

    def _fit(self, required, optional, offset, unc, channels, pending, after, digest, basis):
        basis_ref = f"basis:{basis}:{digest}"
        keep = len(optional)
        while True:
            items = required + optional[:keep]
            more = keep < len(optional)
            ch = dict(channels)
            if more and any(o["role"] == "source" for o in optional[keep:]):
                ch["evidence"] = "incomplete"
            u = list(unc) + (["truncated: more items match; continue with continuation_ref"]
                             if more else [])
            if not items and not unc:
                u.append("unknown: nothing recorded in scope answers this")
            cov = _coverage(ch, self._scope_doc(), not more, pending)
            cont = f"cont:{basis}:{offset + keep}:{digest}" if more else None
            doc = R.envelope("recall", _status(cov, after), self._rid(),
                             result=_briefing(items, u, basis_ref, cov, after, cont))
            if count_tokens(doc, self.tokenizer) <= self.max_tokens:
                return doc
            if keep == 0:
                raise ResultLimitExceeded(
                    f"The required part of this briefing (constraints and coverage) does not "
                    f"fit max_output_tokens {self.max_tokens}; raise the budget (minimum "
                    "useful size: the descriptor's minimum_response_tokens).",
                    max_output_tokens=self.max_tokens)
            keep -= 1

    def _rules(self, scopes: list[str]) -> dict[str, Any]:
        """Every current rule of the scopes read: the constraints channel."""
        items, complete = [], True
        for scope in scopes:
            page = self.memory.items(scope=scope, kind="rule", status="current", limit=50)
            items += [v.to_dict() for v in page.items]
            complete = complete and page.next_cursor is None
        return {"items": items, "complete": complete}

    def _channels(self, scopes, doc, rules_complete, optional):
        unc: list[str] = []
        channels = {c: "not_applicable" for c in CHANNELS}
        channels["constraints"] = "complete" if rules_complete and doc["coverage"].get(
            "constraints", "complete") == "complete" else "incomplete"
        channels["evidence"] = doc["coverage"].get("sources", "complete")
        if any(o["role"] == "procedure" for o in optional) or self._procedural(scopes):
            channels["skills"] = "incomplete"
            unc.append("skills: retained procedural memory (skill/lesson) is not served by "
                       "memory_basic")
        if not any(o["role"] != "source" for o in optional) and any(
                o["role"] == "source" for o in optional):
            unc.append("evidence only: sources match but no formed fact answers this")
        if any(o["epistemic_status"] == "contested" for o in optional):
            unc.append("contested: some values conflict; see items marked contested")
        return channels, unc

    def _procedural(self, scopes: list[str]) -> bool:
        return any(self.memory.items(scope=s, kind=k, status="current", limit=1).items
                   for s in scopes for k in PROCEDURAL)

    def _check_time(self, after: list[str]) -> None:
        as_of = self.inp.time.as_of_seq if self.inp.time else None
        if as_of is None:
            return
        for rid in after:
            rc = self.memory.receipt(rid)
            if rc.available_seq is None or rc.available_seq > as_of:
                raise PreconditionFailed(
                    f"Receipt {rid} is not available at the fixed as_of_seq {as_of}; drop "
                    "as_of_seq or the barrier.", receipt=rid)
        if as_of < self.memory.store.head_seq(self.memory.id):
            raise UnsupportedCapability("historical reads by as_of_seq are not served; use "
                                        "time.valid_at for world-time recall.",
                                        field="input.time.as_of_seq")

    # --- continuation ------------------------------------------------------------------------
    def _digest(self, scopes: list[str]) -> str:
        inp = self.inp
        basis = [scopes, inp.query, inp.mode, sorted(inp.after),
                 inp.time.model_dump() if inp.time else None]
        return hashlib.sha256(json.dumps(basis, sort_keys=True).encode()).hexdigest()[:12]

    def _offset(self, digest: str, basis_seq: int) -> int:
        ref = self.inp.target_ref
        if not ref:
            return 0
        parts = ref.split(":")
        if len(parts) != 4 or not parts[1].isdigit() or not parts[2].isdigit():
            raise CursorMismatch("target_ref is not a continuation_ref of this binding; start "
                                 "a new recall.", field="input.target_ref")
        if parts[3] != digest or int(parts[1]) != basis_seq:
            raise CursorMismatch("The continuation_ref belongs to another scope, query, after "
                                 "horizon or an older basis; start a new recall instead of "
                                 "mixing pages.", field="input.target_ref")
        return int(parts[2])

    # --- evidence expansion -----------------------------------------------------------------
    def _expand(self, ref: str, scopes: list[str]) -> dict[str, Any]:
        """The item (or source) a ref names, at the version that produced it, with its
        evidence when ``detail`` is ``evidence``; never a newer version."""
        mem, guard = self.memory, self.memory.guard
        unc: list[str] = []
        src = None
        from remem.service.guard import hidden

        try:
            view = mem.get(ref).to_dict()
        except NotFound:  # not a visible item: maybe a source ref (else the same answer)
            view = None
            try:
                src = guard.source(ref)
            except NotFound:  # neither: one answer naming the ref's kinds, not "Source"
                raise hidden("Item or source", ref, "input.target_ref") from None
        if view is not None and view["scope"] not in scopes:
            raise hidden("Item or source", ref, "input.target_ref")
        if src is not None and src["scope"] not in scopes:
            raise hidden("Item or source", ref, "input.target_ref")
        items = [item_entry(view)] if view is not None else [source_entry(src)]
        evidence = "complete"
        if view is not None:
            if view["status"] != "current":
                unc.append(f"this version is {view['status']}; it is not the current value")
            if self.inp.detail == "evidence" and view.get("source_id"):
                row = guard.find_source(view["source_id"])
                if row is None or row.get("text") is None:
                    evidence = "incomplete"
                    unc.append("evidence: the source text is erased or not visible")
                else:
                    items.append(source_entry(row))
        channels = {c: "not_applicable" for c in CHANNELS}
        channels["evidence"] = evidence
        cov = _coverage(channels, self._scope_doc(), True, [])
        basis = mem.store.head_seq(mem.id)
        doc = R.envelope("recall", _status(cov, []), self._rid(), result=_briefing(
            self._local(items), unc, f"basis:{basis}:{ref[:64]}", cov, []))
        if count_tokens(doc, self.tokenizer) > self.max_tokens:
            raise ResultLimitExceeded(f"This expansion does not fit max_output_tokens "
                                      f"{self.max_tokens}; raise the budget.",
                                      max_output_tokens=self.max_tokens)
        return doc

    def _local(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Source refs as the caller named them: a scoped token's ids live under its scope
        (``user:maya/turn-7``); it staged and cites them without that prefix."""
        p = self.memory.principal
        if p.token_id is None or p.scope is None:
            return items
        prefix = f"{p.scope}/"

        def local(ref: str) -> str:
            return ref[len(prefix):] if ref.startswith(prefix) else ref

        out = []
        for it in items:
            it = {**it, "evidence_refs": list(dict.fromkeys(
                local(r) for r in it["evidence_refs"]))}
            if it["role"] == "source":
                it["ref"] = local(it["ref"])
            out.append(it)
        return out

    def _scope_doc(self) -> dict[str, Any]:
        out: dict[str, Any] = {"task_ref": self.task}
        if self.req.scope.context_refs and self.inp.mode != "resume":
            out["context_refs"] = list(dict.fromkeys(self.req.scope.context_refs))
        return out

    def _rid(self) -> str | None:
        return self.req.request_id


def _status(coverage: dict[str, Any], after: list[dict]) -> str:
    if any(p["phase"] in ("recorded", "processed") for p in after):
        return "pending"
    if coverage["complete"] and all(p["phase"] == "available" for p in after):
        return "succeeded"
    return "partial"


__all__ = ["CHANNELS", "Briefer", "count_tokens", "empty_response_tokens", "serialise"]

"""``recall``, ``context`` and ``profile``: hybrid search, filtering, budgeted rendering.

Candidates (per channel, up to :data:`FETCH` each) come from full text (FTS5 bm25 over the
rewritten terms of :mod:`remem.domain.textindex`), vectors (exact cosine, similarity at least
:data:`MIN_SIMILARITY`) and exact key match (query words joined into snake_case keys). They
are fused by reciprocal rank fusion (k = 20, :mod:`remem.domain.recall`), filtered to the
caller's scopes, statuses, kinds and as-of time, and the best :data:`DEFAULT_LIMIT` become the
*eligible* set; when fewer than the limit are items, :func:`small_scope_floor` adds the best
remaining live items of the scopes (and ranks a small scope set by meaning). Agent-scope rules
among them are required (``constraints``) and ranked first. :mod:`remem.domain.render` packs
the eligible set under the budget; ``truncated`` says whether any of it was left out. Recall
never writes. The query is embedded on a worker thread (:mod:`remem.service.query_vectors`)
while a first snapshot reads the model, the full-text and key candidates and the speakers;
every row a result shows (items, payloads, sources, refs) and ``basis_seq`` come from the
second snapshot, opened once the vector is there (a small scope set's key vectors may be
embedded in it once, then cached).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

import numpy as np

from remem.domain import render
from remem.domain.canonical import canonical_json
from remem.domain.filters import ItemFilter, parse_filter
from remem.domain.keys import hinted_keys
from remem.domain.limits import MAX_QUERY_BYTES, MAX_MAX_BYTES, MIN_MAX_BYTES, parse_kind
from remem.domain.model import PINNED_KINDS, Kind, Scope
from remem.domain.recall import (
    MODES,
    RRF_K,
    RecallFilter,
    eligible_items,
    fuse,
    is_constraint,
    named_actors,
    parse_mode,
    rescore_sources,
    strip_actors,
)
from remem.domain.sourcelog import is_item_doc
from remem.domain.textindex import key_words, query_terms, query_words
from remem.domain.timefmt import to_iso
from remem.errors import ConfigInvalid, InvalidInput
from remem.providers.registry import build_tokenizer as get_tokenizer
from remem.service import query_vectors
from remem.service.digests import digest_candidates
from remem.service.recall_preload import PreloadedSnapshot, preload
from remem.service.recall_results import ContextResult, ProfileResult, RecallResult

FETCH = 50
"""Candidates taken from each channel before filtering."""
MIN_SIMILARITY = 0.15
"""Cosine floor for the vector channel (all-MiniLM-L6-v2: unrelated short texts mostly score
below it)."""
CONSTRAINT_SIMILARITY = 0.35
"""An agent rule is an applicable constraint (required, ranked first) when it matched the query
in full text or by key, or its cosine similarity is at least this; else it is ranked as usual."""
DEFAULT_LIMIT = 30
"""Eligible items + sources per recall (constraints are always eligible)."""
DEFAULT_MAX_BYTES = 8192
FLOOR_ITEMS = 200
"""The small-scope floor ranks up to this many of the scopes' documents by vector similarity
with no cosine cut: every live item of scopes that hold at most this many documents."""
KEY_CACHE_MAX = 10_000
FLOOR_KIND_ORDER = {Kind.RULE.value: 0, Kind.IDENTITY.value: 1, Kind.PROFILE_SLOT.value: 2,
                    Kind.PREFERENCE.value: 3, Kind.FACT.value: 4}
PROFILE_ORDER = {Kind.IDENTITY.value: 0, Kind.RULE.value: 1, Kind.PROFILE_SLOT.value: 2,
                 Kind.PREFERENCE.value: 3}


def parse_scopes(scopes: str | Iterable[str]) -> list[str]:
    """Validates the caller's scopes (one string or several); duplicates dropped, order kept.

    Raises:
        InvalidInput: no scope, or a malformed one.
    """
    items = [scopes] if isinstance(scopes, str) else list(scopes or [])
    if not items:
        raise InvalidInput("give at least one scope, e.g. 'user:alice'.", field="scopes")
    return list(dict.fromkeys(str(Scope.parse(s)) for s in items))


def _query(query: str) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query is empty; say what to recall.", field="query")
    if len(query.encode()) > MAX_QUERY_BYTES:
        raise InvalidInput(f"query is longer than {MAX_QUERY_BYTES} UTF-8 bytes.",
                           field="query", limit=MAX_QUERY_BYTES)
    return query


def _kinds(kinds: Iterable[str] | str | None) -> frozenset[str] | None:
    if kinds is None:
        return None
    items = [kinds] if isinstance(kinds, str) else list(kinds)
    return frozenset(parse_kind(str(k)).value for k in items)


def candidate_keys(query: str) -> list[str]:
    """snake_case keys a query may name: word n-grams (n <= 3) joined by ``_``."""
    words = [w for w in query_words(query) if w.isascii() and w.isalnum()]
    keys = []
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            key = "_".join(words[i:i + n])
            if key[0].isalpha() and len(key) <= 128:
                keys.append(key)
    keys.extend(hinted_keys([w.lower() for w in words]))
    return list(dict.fromkeys(keys))[:64]


class RecallService:
    """recall / context / profile for one Memory.

    Args:
        ctx: the MemoryContext (store, id, clock, intake).
        embedding: its EmbeddingService.
    """

    def __init__(self, ctx: Any, embedding: Any) -> None:
        self.ctx = ctx
        self.embedding = embedding
        self._key_cache: dict[tuple[str | None, str], Any] = {}

    def _key_vectors(self, keys: Iterable[str]) -> dict[str, Any]:
        """Vectors of keys as words (``home_city`` -> "home city"), embedded once per model
        and cached (at most :data:`KEY_CACHE_MAX` keys)."""
        model = self.embedding.recorded()[0]
        missing = sorted({k for k in keys if (model, k) not in self._key_cache})
        if missing:
            if len(self._key_cache) + len(missing) > KEY_CACHE_MAX:
                self._key_cache.clear()
            vecs = self.embedding.embed([key_words(k) for k in missing])
            self._key_cache.update({(model, k): v for k, v in zip(missing, vecs, strict=True)})
        return {k: self._key_cache[(model, k)] for k in keys}

    def _query_vector(self, text: str, recorded: tuple[str | None, int | None],
                      background: bool = False, plan: Any = None
                      ) -> Callable[[], tuple[Any, Any]]:
        """Starts embedding a query on a worker thread when ``background`` (else the caller
        embeds it when it asks; ``service.query_vectors``); the returned function waits for
        ``(vector, planned rows)``: the vector None when there is no usable embedder, the
        rows what ``plan`` (a store's ``CandidatePlan``) computed on that thread, or None.

        Raises:
            EmbeddingMismatch: the memory was embedded with another model (checked before
                a remembered vector is reused).
        """
        try:
            self.embedding.check(recorded)
        except ConfigInvalid:
            return lambda: (None, None)  # an unusable embedding section: full text and keys
        return query_vectors.SHARED.start_then(
            recorded, text, lambda t: self.embedding.query_vector(t, recorded),
            plan.run if plan is not None else None, background=background)

    # --- candidates --------------------------------------------------------------------------
    def _eligible(self, scopes: list[str], query: str, f: RecallFilter, limit: int,
                  with_sources: bool, mode: str = "hybrid",
                  ) -> tuple[int, list[render.Entry], list[render.Entry]]:
        """(basis_seq, required entries, optional entries) in rank order; data only.

        A query naming a speaker of the sources it matches in full text is searched without
        the name, that speaker's sources ranked first (``domain.recall`` "Conversation
        awareness"). ``mode`` picks the channels searched (``domain.recall.MODES``)."""
        channels = MODES[mode]
        index = self.embedding.index
        named: frozenset[str] = frozenset()
        first: list[tuple[str, str]] | None = None  # reused when no name is stripped
        keys: list[tuple[str, str]] | None = None
        recorded, pending = None, None
        overlap = query_vectors.second_core_free()
        with index.read(self.ctx.id) as snap:  # full text and keys while the query is embedded
            if "vector" in channels:
                recorded = snap.embedding()
                if recorded[0] is not None:  # else no vectors yet: nothing to embed for
                    plan = _vector_plan(snap, scopes) if overlap else None
                    pending = self._query_vector(query, recorded, overlap, plan)
            first = snap.fts(query_terms(query), scopes, FETCH) if "fts" in channels else None
            if with_sources and first is not None:
                found = [d for d, _ in first if not is_item_doc(d)]
                named = named_actors(query, {r["actor"] for r in snap.sources(found).values()
                                             if r["actor"] and r["scope"] in f.scopes})
            if "key" in channels:
                keys = snap.key_items(candidate_keys(query), scopes, FETCH)
            pre = preload(snap, [d for d, _ in (first or []) + (keys or [])
                                 if is_item_doc(d)]) if pending is not None and overlap else None
        search = strip_actors(query, named) if named else query
        if pending is not None and search != query:
            pending = self._query_vector(search, recorded)
        qvec, planned = pending() if pending is not None else (None, None)
        with index.read(self.ctx.id) as raw:
            basis = raw.head_seq()
            snap = PreloadedSnapshot(raw, pre) if pre is not None and pre.head == basis else raw
            fts = first if first is not None and search == query else snap.fts(
                query_terms(search), scopes, FETCH) if "fts" in channels else []
            hits = [] if qvec is None else snap.vectors(
                qvec, scopes, FETCH, MIN_SIMILARITY, planned) if planned is not None else \
                snap.vectors(qvec, scopes, FETCH, MIN_SIMILARITY)
            keys = keys if keys is not None else []
            fts, hits, promoted = digest_candidates(snap, fts, hits)
            fused = fuse({"fts": [d for d, _ in fts], "vector": [d for d, _, _ in hits],
                          "key": [d for d, _ in keys], **promoted})
            applies = {d for d, _ in fts} | {d for d, _ in keys} | {
                d for d, c, _ in hits if c >= CONSTRAINT_SIMILARITY}
            scope_of = {d: sc for d, sc in fts + keys} | {d: sc for d, _, sc in hits}
            score = {c.doc_id: c.score for c in fused}
            item_ids = [c.doc_id for c in fused if is_item_doc(c.doc_id)]
            visible = _visible_items(snap, item_ids, scope_of, f, limit)
            visible += small_scope_floor(snap, qvec, scopes, f, visible, set(item_ids), limit,
                                         score, self._key_vectors)
            visible = _one_per_claim(visible)
            src_ids = [c.doc_id for c in fused
                       if not is_item_doc(c.doc_id)] if with_sources else []
            rows = snap.sources(src_ids)
            srcs = [rows[s] for s in src_ids if s in rows and rows[s]["scope"] in f.scopes
                    and (f.as_of is None or rows[s]["occurred_at"] <= f.as_of)
                    and _source_in_windows(rows[s], f.where)]
            score.update(rescore_sources(score, srcs, named))
            ranked: list[tuple[float, str, Any, str]] = \
                [(score[r.item_id], "item", r, label) for r, label in visible] + \
                [(score[s["source_id"]], "source", s, "") for s in srcs]
            ranked.sort(key=lambda t: -t[0])  # stable: fused order breaks ties
            is_req = [t[1] == "item" and is_constraint(t[2]) and t[2].item_id in applies
                      for t in ranked]
            required = [t for t, r in zip(ranked, is_req, strict=True) if r]
            optional = [t for t, r in zip(ranked, is_req, strict=True) if not r]
            optional = optional[:max(0, limit - len(required))]
            chosen = [t[2] for t in required + optional if t[1] == "item"]
            payloads = snap.payloads([r.payload_id for r in chosen])
            refs = snap.source_refs([r.item_id for r in chosen])
        cached = self.ctx.cached.labels([r.item_id for r in chosen]) if chosen else {}
        req = [self._item_entry(t, payloads, refs, required=True, cached=cached)
               for t in required]
        opt = [self._item_entry(t, payloads, refs, required=False, cached=cached)
               if t[1] == "item" else _source_entry(t) for t in optional]
        return basis, req, opt

    @staticmethod
    def _item_entry(t: tuple, payloads: dict, refs: dict, *, required: bool,
                    cached: dict | None = None) -> render.Entry:
        score, _, rec, label = t
        payload = payloads.get(rec.payload_id, {})
        d: dict[str, Any] = {
            "id": rec.item_id, "key": rec.key, "value": payload.get("value"), "kind": rec.kind,
            "status": label, "scope": rec.scope, "valid_at": rec.valid_at,
            "score": round(score, 5),
            "sources": refs.get(rec.item_id) or ([rec.source_id] if rec.source_id else [])}
        if payload.get("metadata"):
            d["metadata"] = payload["metadata"]
        if cached and rec.item_id in cached:  # a Kind-B cached fact: freshness label
            d["cached"] = cached[rec.item_id]
        if required:
            d["constraint"] = True
        channel = "constraints" if required else "facts"
        return render.Entry(channel, d, render.item_line(
            d, constraint=required, offset_minutes=payload.get("tz_offset_min")), required,
            render.item_heading(rec.scope))

    def _filter(self, scopes: list[str], kinds: Any, valid_at: datetime | None,
                include_history: bool, filters: Any = None,
                now: datetime | None = None) -> RecallFilter:
        """The RecallFilter of a call; ``filters`` (``domain.filters``) resolves relative
        times against ``now`` (default: the store clock).

        Raises:
            InvalidInput: a bad filter, or a status filter recall cannot honour (archived and
                forgotten items are never recalled; list them with ``items``).
        """
        clock_now = self.ctx.clock.now()
        if now is not None:
            to_iso(now, field="now")  # aware datetimes only
        where = parse_filter(filters, now or clock_now) if filters is not None else None
        history = bool(include_history)
        if where is not None and where.status is not None and where.status.allowed:
            never = sorted(where.status.allowed & {"archived", "forgotten"})
            if never:
                raise InvalidInput(f"recall never returns {never[0]} items; list them with "
                                   f"items(status={never[0]!r}).", field="filters.status")
            history = history or "superseded" in where.status.allowed
        return RecallFilter(scopes=frozenset(scopes), kinds=_kinds(kinds),
                            include_history=history,
                            as_of=to_iso(valid_at) if valid_at is not None else None,
                            now=to_iso(clock_now), where=where)

    # --- recall ------------------------------------------------------------------------------
    def recall(self, scopes: str | Iterable[str], query: str, *, budget_tokens: int,
               tokenizer: str = "o200k_base", valid_at: datetime | None = None,
               kinds: Iterable[str] | None = None, include_history: bool = False,
               limit: int = DEFAULT_LIMIT, after: Iterable[str] | None = None,
               deadline_ms: int = 0, mode: str = "hybrid", filters: Any = None,
               now: datetime | None = None) -> RecallResult:
        """Hybrid recall rendered under a token budget (see ``Memory.recall``)."""
        barrier = None
        if after:
            waited = self.ctx.intake.wait(list(after), deadline_ms=deadline_ms)
            barrier = {"state": waited.state,
                       "unresolved": [r.receipt_id for r in waited.unresolved
                                      if r.phase != "failed"],
                       "failed": [{"receipt_id": r.receipt_id, "reason": r.reason}
                                  for r in waited.failed]}
        scopes = parse_scopes(scopes)
        query = _query(query)
        render.check_budget(budget_tokens, "budget_tokens")
        render.check_budget(limit, "limit", 1, 1000)
        tok = get_tokenizer(tokenizer)
        mode = parse_mode(mode)
        f = self._filter(scopes, kinds, valid_at, include_history, filters, now)
        basis, req, opt = self._eligible(scopes, query, f, limit, with_sources=_with_sources(
            kinds, f.where), mode=mode)
        out = render.pack(req + opt, budget=budget_tokens, meter=render.TokenMeter(tok),
                          build=render.recall_builder(basis_seq=basis,
                                                      budget_tokens=budget_tokens,
                                                      tokenizer=tok.name, barrier=barrier),
                          measure=render.model_text)
        return RecallResult(out.document, out.serialised, out.size)

    # --- context (instantKV) -------------------------------------------------------------------
    def context(self, scopes: str | Iterable[str], query: str, *,
                max_bytes: int = DEFAULT_MAX_BYTES, kinds: Iterable[str] | None = None,
                valid_at: datetime | None = None, limit: int = DEFAULT_LIMIT,
                mode: str = "hybrid", filters: Any = None,
                now: datetime | None = None) -> ContextResult:
        """Items relevant to a query within ``max_bytes`` (instantKV: items + truncated)."""
        scopes = parse_scopes(scopes)
        query = _query(query)
        render.check_budget(max_bytes, "max_bytes", MIN_MAX_BYTES, MAX_MAX_BYTES)
        render.check_budget(limit, "limit", 1, 1000)
        mode = parse_mode(mode)
        f = self._filter(scopes, kinds, valid_at, False, filters, now)
        _, req, opt = self._eligible(scopes, query, f, limit, with_sources=False, mode=mode)
        entries = [_context_entry(e) for e in req + opt]
        out = render.pack(entries, budget=max_bytes, meter=render.ByteMeter(),
                          build=render.items_builder(max_bytes=max_bytes),
                          channels=("constraints", "facts"))
        return ContextResult(out.document, out.serialised, out.size)

    # --- profile -----------------------------------------------------------------------------
    def profile(self, scopes: str | Iterable[str], *, budget_tokens: int | None = None,
                max_bytes: int | None = None, tokenizer: str = "o200k_base",
                activation_id: str | None = None) -> ProfileResult:
        """The pinned profile (see ``Memory.profile``)."""
        scopes = parse_scopes(scopes)
        if budget_tokens is not None and max_bytes is not None:
            raise InvalidInput("give budget_tokens or max_bytes, not both.", field="max_bytes")
        if budget_tokens is not None:
            render.check_budget(budget_tokens, "budget_tokens")
            tok = get_tokenizer(tokenizer)
            meter: render.Meter = render.TokenMeter(tok)
            budget = {"budget_tokens": budget_tokens, "tokenizer": tok.name}
            limit = budget_tokens
        else:
            limit = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
            render.check_budget(limit, "max_bytes", MIN_MAX_BYTES, MAX_MAX_BYTES)
            meter, budget = render.ByteMeter(), {"max_bytes": limit}
        if activation_id is not None and (not isinstance(activation_id, str)
                                          or not 0 < len(activation_id.encode()) <= 128):
            raise InvalidInput("activation_id must be 1-128 UTF-8 bytes.", field="activation_id")
        index = self.embedding.index
        scopes_key, params = json.dumps(scopes), canonical_json(budget).decode()
        with index.read(self.ctx.id) as snap:
            if activation_id is not None:
                stored = snap.profile_render(activation_id, scopes_key, params)
                if stored is not None:
                    return ProfileResult(stored, replayed=True)
            basis = snap.head_seq()
            now = to_iso(self.ctx.clock.now())
            recs = [r for r in snap.pinned_items(scopes, sorted(k.value for k in PINNED_KINDS))
                    if r.valid_until is None or now < r.valid_until]
            payloads = snap.payloads([r.payload_id for r in recs])
        order = {s: i for i, s in enumerate(scopes)}
        recs.sort(key=lambda r: (PROFILE_ORDER[r.kind], order[r.scope], r.key, r.valid_at,
                                 r.item_id))
        recs = [r for r, _ in _one_per_claim([(r, "") for r in recs])]
        entries = [_profile_entry(r, payloads.get(r.payload_id, {})) for r in recs]
        out = render.pack(entries, budget=limit, meter=meter, channels=("constraints", "facts"),
                          build=render.profile_builder(activation_id=activation_id,
                                                       scopes=scopes, basis_seq=basis,
                                                       budget=budget))
        if activation_id is None:
            return ProfileResult(out.serialised)
        with self.ctx.store.unit_of_work(self.ctx.id) as uow:
            snap = index.in_transaction(uow)
            stored = snap.profile_render(activation_id, scopes_key, params)
            if stored is not None:  # a concurrent first render won; everyone gets its bytes
                return ProfileResult(stored, replayed=True)
            index.writer(uow).put_profile_render(
                activation_id, scopes_key, params, out.serialised,
                [e.data["id"] for e in out.entries], to_iso(self.ctx.clock.now()))
        return ProfileResult(out.serialised)


def _vector_plan(snap: Any, scopes: list[str]) -> Any:
    """The store's plan of the vector channel's in-RAM ranking (run beside the full-text
    reads on the thread that embeds the query), or None: PostgreSQL ranks vectors in its
    database (and a snapshot without ``vector_plan`` has none)."""
    plan = getattr(snap, "vector_plan", None)
    return plan(scopes, FETCH, MIN_SIMILARITY) if plan is not None else None


def _one_per_claim(rows: list[tuple[Any, str]]) -> list[tuple[Any, str]]:
    """The first (best-ranked or earliest) occurrence of each claim: a claim stated several
    times is one fact in recall and profile (KickSide occurrences)."""
    seen: set[str] = set()
    out = []
    for row in rows:
        cid = getattr(row[0], "claim_id", None) if getattr(
            row[0], "status", None) == "current" else None
        if cid is not None and cid in seen:
            continue
        if cid is not None:
            seen.add(cid)
        out.append(row)
    return out


def _visible_items(snap: Any, item_ids: list[str], scope_of: dict[str, str],
                   f: RecallFilter, limit: int) -> list[tuple[Any, str]]:
    """Visible items with their shown status. Rows load in fused order, in chunks, until
    ``limit`` are visible: later candidates rank lower. Agent-scope candidates (possible
    constraints, required whatever their rank) always load, and as-of recall loads every
    candidate (it compares the versions of a key)."""
    if f.as_of is not None:
        recs = snap.items(item_ids)
        return _with_metadata(snap, eligible_items([recs[i] for i in item_ids if i in recs],
                                                   f), f.where)
    agent = [i for i in item_ids if scope_of.get(i, "").startswith("agent:")]
    rest = [i for i in item_ids if not scope_of.get(i, "").startswith("agent:")]
    step, seen = max(limit + 10, 40), 0
    recs = snap.items(agent + rest[:step])  # one statement for the agent rows and chunk 1
    wanted = set(agent)
    out = _with_metadata(snap, eligible_items([r for i, r in recs.items() if i in wanted], f),
                         f.where) if agent else []
    for start in range(0, len(rest), step):
        if seen >= limit:  # every unloaded candidate ranks below `limit` visible ones
            break
        chunk = rest[start:start + step]
        recs = recs if start == 0 else snap.items(chunk)
        found = _with_metadata(snap, eligible_items([recs[i] for i in chunk if i in recs], f),
                               f.where)
        out.extend(found)
        seen += len(found)
    return out


def small_scope_floor(snap: Any, qvec: Any, scopes: list[str], f: RecallFilter,
                      visible: list[tuple[Any, str]], seen: set[str], limit: int,
                      score: dict[str, float],
                      key_vectors: Callable[[Iterable[str]], dict[str, Any]] | None = None
                      ) -> list[tuple[Any, str]]:
    """The obvious fact is found: when fewer than ``limit`` items were fused, the best
    remaining live items of the caller's scopes, and in a small scope set every item ranked
    by meaning (with ``limit`` or more fused items nothing changes and nothing is read).

    The scopes' documents are ranked by vector similarity with no cosine cut (up to
    :data:`FLOOR_ITEMS`). When the scope set holds fewer documents than that (a *small* scope
    set: everything was ranked) each item's similarity is the larger of its text's cosine
    and its key's (the key as words, :func:`key_words`: "book me a table" is nearer "diet"
    than "diet: pescatarian"), and every item, fused or not, earns the reciprocal rank of that
    ranking in ``score`` in place of its vector channel rank (:func:`_rank_by_meaning`). The
    best remaining items visible under the same :class:`RecallFilter` are added (as of a
    time: not a single-cardinality key the candidates already answer), ordered by that
    similarity, then newer ``valid_at``, then kind (rules, identity, profile slots,
    preferences, facts). Without a query vector (no embeddings yet) nothing changes.

    Returns:
        (record, shown status) pairs to add, best first, at most ``limit - len(visible)``.
    """
    room = limit - len(visible)
    if qvec is None or room <= 0:
        return []
    hits = snap.vectors(qvec, scopes, FLOOR_ITEMS, -1.0)
    small = len(hits) < FLOOR_ITEMS
    cosine = {d: cos for d, cos, _ in hits if is_item_doc(d)}
    rest = [d for d in cosine if d not in seen]
    recs = snap.items(rest) if rest else {}
    found = _with_metadata(snap, eligible_items([recs[d] for d in rest if d in recs], f),
                           f.where)
    if f.as_of is not None:  # the fused candidates already hold this key's version then
        held = {(r.scope, r.key) for r, _ in visible if r.cardinality == "single"}
        found = [(r, label) for r, label in found if (r.scope, r.key) not in held]
    if small and key_vectors is not None:
        _rank_by_meaning(qvec, hits, [r for r, _ in visible + found], score, key_vectors)
        cosine = {d: cos for d, cos, _ in hits}
    found.sort(key=lambda t: (-round(cosine[t[0].item_id], 4), _negated(t[0].valid_at),
                              FLOOR_KIND_ORDER.get(t[0].kind, 9), t[0].item_id))
    out = found[:max(0, room)]
    for r, _ in out:
        score.setdefault(r.item_id, 0.0)
    return out


def _rank_by_meaning(qvec: Any, hits: list[tuple[str, float, str]], items: list[Any],
                     score: dict[str, float],
                     key_vectors: Callable[[Iterable[str]], dict[str, Any]]) -> None:
    """Small scope sets: the vector channel's contribution to each item's fused score is
    replaced by its rank (``1 / (RRF_K + rank)``) among all the scopes' documents ordered by
    the larger of the item text's and the key's cosine; ``hits`` (every document, cosine
    descending) is re-sorted in place to that order."""
    q = np.asarray(qvec, dtype=np.float32)
    by_key = key_vectors({r.key for r in items})
    key_of = {r.item_id: r.key for r in items}
    old_rank = {d: i for i, (d, cos, _) in enumerate(hits, start=1)
                if cos >= MIN_SIMILARITY and i <= FETCH}
    meaning = [(d, max(cos, float(np.dot(q, np.asarray(by_key[key_of[d]], np.float32))))
                if d in key_of else cos, sc) for d, cos, sc in hits]
    meaning.sort(key=lambda h: (-h[1], h[0]))
    hits[:] = meaning
    for rank, (d, _, _) in enumerate(hits, start=1):
        if d in key_of:
            was = 1.0 / (RRF_K + old_rank[d]) if d in old_rank else 0.0
            score[d] = score.get(d, 0.0) - was + 1.0 / (RRF_K + rank)


def _negated(iso: str) -> tuple[int, ...]:
    """Sort key for newest first on an ISO UTC string."""
    return tuple(-ord(c) for c in iso)


def _with_metadata(snap: Any, found: list[tuple[Any, str]],
                   where: ItemFilter | None) -> list[tuple[Any, str]]:
    """The visible items whose payload metadata passes the filter's metadata tests."""
    if where is None or not where.metadata or not found:
        return found
    payloads = snap.payloads([r.payload_id for r, _ in found])
    return [(r, shown) for r, shown in found
            if where.holds_metadata(payloads.get(r.payload_id, {}).get("metadata"))]


def _with_sources(kinds: Any, where: ItemFilter | None) -> bool:
    """Sources join a recall unless a kind, key, status or metadata condition asks for items
    only (sources have none of those)."""
    return kinds is None and (where is None or not where.only_items)


def _source_in_windows(row: dict[str, Any], where: ItemFilter | None) -> bool:
    """A source passes the time windows by when it was said (``valid_at``) and recorded."""
    if where is None:
        return True
    return ((where.valid_at is None or where.valid_at.holds(row["occurred_at"]))
            and (where.recorded_at is None or where.recorded_at.holds(row["recorded_at"])))


def _source_entry(t: tuple) -> render.Entry:
    score, _, s, _ = t
    d = {"label": "source", "id": s["source_id"], "scope": s["scope"], "kind": s["kind"],
         "role": s["role"], "occurred_at": s["occurred_at"], "text": s["text"],
         "score": round(score, 5)}
    return render.Entry("sources", d, render.source_line(d, s.get("tz_offset_min")),
                        group=render.source_heading(s["scope"]))


def _context_entry(e: render.Entry) -> render.Entry:
    d = e.data
    data = {"id": d["id"], "scope": d["scope"], "key": d["key"], "value": d["value"],
            "kind": d["kind"], "status": d["status"], "valid_at": d["valid_at"],
            "source": d["sources"][0] if d["sources"] else None}
    if d.get("metadata"):
        data["metadata"] = d["metadata"]
    if (d.get("cached") or {}).get("stale"):  # a stale Kind-B cached fact says so here too
        data["stale"] = True
    if e.required:
        data["constraint"] = True
    return render.Entry(e.channel, data, "", e.required)


def _profile_entry(rec: Any, payload: dict[str, Any]) -> render.Entry:
    d = {"id": rec.item_id, "scope": rec.scope, "key": rec.key, "value": payload.get("value"),
         "kind": rec.kind, "revision": rec.revision, "valid_at": rec.valid_at,
         "valid_until": rec.valid_until, "source": rec.source_id}
    required = is_constraint(rec)
    line = f"- {rec.scope} {rec.key}: {render.value_text(d['value'])}"
    return render.Entry("constraints" if required else "facts", d, line, required)

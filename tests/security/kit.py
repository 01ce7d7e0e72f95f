"""Helpers of the security matrix: a real `remem serve` on loopback over a seeded database,
principals by name, marker strings, and the state fingerprint that proves nothing changed.

Seed (memory m1; memory m2 exists too)::

    user:alice   profile_slot, preference, fact; an observed source; a receipt
    user:bob     profile_slot, preference, fact, an archived item, a superseded value, a
                 conflict group; observed sources (one with the id alice later reuses)
    agent:bot    identity, rule
    thread:t1    fact; an observed source

Every value and source text of bob and thread:t1 carries a marker string (BOB_MARK,
T1_MARK); no response to an alice token may contain one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

ALICE, BOB, BOT, T1 = "user:alice", "user:bob", "agent:bot", "thread:t1"
ALICE_MARK, BOB_MARK, T1_MARK, BOT_MARK = "qalicemarkq", "zbobmarkz", "xthreadmarkx", "wbotmarkw"
SHARED_SOURCE_ID = "src-shared-1"  # observed by bob; alice observes the same id later
#: principal name -> (memory, role, subject); "anon" sends no token.
PRINCIPALS = {
    "root": ("m1", "admin", "admin"),
    "alice_reader": ("m1", "reader", ALICE),
    "alice_writer": ("m1", "writer", ALICE),
    "alice_admin": ("m1", "admin", ALICE),
    "m2_admin": ("m2", "admin", "admin"),
    "m2_probe": ("m2", "reader", ALICE),
    "m1_spare": ("m1", "reader", ALICE),  # revoked by the token-route probes
}
REQUEST_TIMEOUT_S = 15
ALICE_PRINCIPALS = ("alice_reader", "alice_writer", "alice_admin")
OUTSIDERS = ("anon", "m2_admin")


from remem.testing.served import Server  # noqa: E402,F401 - re-exported


@dataclass
class Seed:
    """Ids of the seeded data (by a short name) and what is secret from alice."""

    ids: dict[str, str] = field(default_factory=dict)
    #: ids of bob's and thread:t1's things (items, claims, receipts, groups, sources)
    hidden_ids: set[str] = field(default_factory=set)
    #: every id of memory m1 (alice's included): nothing an outsider may see
    m1_ids: set[str] = field(default_factory=set)
    runs: list[dict[str, Any]] = field(default_factory=list)


class World:
    """A seeded server, its principals and an httpx client.

    ``call(principal, method, path, json=..., params=...)`` sends one request with that
    principal's token (none for ``anon``).
    """

    def __init__(self, backend: str, db: str, on_close: Any = None) -> None:
        self.backend = backend
        self.db = db
        self.on_close = on_close
        self.tokens, self.token_ids = _make_tokens(db)
        self.server = Server(db)
        self.http = httpx.Client(base_url=self.server.base, timeout=REQUEST_TIMEOUT_S)
        self.broken = False
        self.seed = Seed()
        self.dirty = False
        try:
            _seed(self)
            self.baseline = self.fingerprint()
            self.others = self.ledger_of_others()
        except BaseException:
            self.close()
            raise

    def reset(self) -> None:
        """Deletes memory m1 (its tokens too) and seeds it again with new tokens: the cheap
        way back to a clean state after a test changed it."""
        r = self.call("root", "DELETE", "/memories/m1")
        assert r.status_code == 200, r.text
        m1 = tuple(n for n, spec in PRINCIPALS.items() if spec[0] == "m1")
        tokens, ids = _make_tokens(self.db, m1)
        self.tokens.update(tokens)
        self.token_ids.update(ids)
        _seed_m1(self)
        self.baseline = self.fingerprint()
        self.others = self.ledger_of_others()
        self.dirty = False

    def close(self) -> None:
        self.http.close()
        self.server.stop()
        if self.on_close:
            self.on_close()

    def headers(self, principal: str) -> dict[str, str]:
        if principal == "anon":
            return {}
        return {"Authorization": f"Bearer {self.tokens[principal]}"}

    def call(self, principal: str, method: str, path: str, **kw: Any) -> httpx.Response:
        """One request. A connection the server dropped (after a 500) is retried once on a
        new one; a server that stops answering fails the test and is replaced afterwards."""
        headers = {**self.headers(principal), **kw.pop("headers", {})}
        for attempt in (1, 2):
            try:
                return self.http.request(method, path, headers=headers, **kw)
            except (httpx.ReadError, httpx.RemoteProtocolError, httpx.ConnectError):
                if attempt == 2 or self.server.proc.poll() is not None:
                    self.broken = True
                    raise AssertionError(f"the server dropped {method} {path}") from None
            except httpx.TimeoutException:
                self.broken = True
                raise AssertionError(f"the server did not answer {method} {path} within "
                                     f"{REQUEST_TIMEOUT_S} s (hung; replaced for the next "
                                     "test)") from None
        raise AssertionError("unreachable")

    def ok(self, principal: str, method: str, path: str, **kw: Any) -> Any:
        r = self.call(principal, method, path, **kw)
        assert r.status_code < 300, f"{method} {path}: {r.status_code} {r.text}"
        return r.json()

    def names(self, memory_id: str = "m1") -> dict[str, str]:
        """Placeholder values: seeded ids by name, ``memory_id``, ``<principal>.token``."""
        return {**self.seed.ids, "memory_id": memory_id,
                **{f"{p}.token": t for p, t in self.token_ids.items()}}

    # --- state ---------------------------------------------------------------------------
    def head(self) -> int:
        return self.ok("root", "GET", "/memory/m1/status")["head_seq"]

    def fingerprint(self) -> dict[str, Any]:
        """What must not change under a refused call: the ledger head, every item of bob's,
        thread:t1's and agent:bot's scopes (values, statuses, holds, retention), the history
        events of bob's items, and the text of every seeded source (read as root)."""
        out: dict[str, Any] = {"head": self.head()}
        page = self.ok("root", "GET", "/memory/m1/items", params={"status": "all",
                                                                 "limit": 1000})
        assert page["next_cursor"] is None, "more items than one page"
        for scope in (BOB, T1, BOT, ALICE):
            out[scope] = sorted(json.dumps(i, sort_keys=True) for i in page["items"]
                                if i["scope"] == scope)
        out["sources"] = self.source_texts()
        return out

    def ledger_of_others(self) -> dict[str, Any]:
        """History (versions, provenance, ledger events) of every seeded item of bob's and
        the thread's, read as root."""
        return {name: self.ok("root", "GET", f"/memory/m1/items/{iid}/history")
                for name, iid in sorted(self.seed.ids.items())
                if name.startswith(("bob.", "t1.")) and iid.startswith("itm_")}

    def source_texts(self) -> list[str]:
        r = self.ok("root", "POST", "/memory/m1/recall", json={
            "scopes": [BOB, T1, ALICE], "query": f"{BOB_MARK} {T1_MARK} {ALICE_MARK} sister "
            "brother nephew", "budget_tokens": 100_000, "limit": 1000})
        return sorted(s.get("text") or "" for s in r["sources"])


def _make_tokens(db: str, names: tuple[str, ...] = tuple(PRINCIPALS)
                 ) -> tuple[dict[str, str], dict[str, str]]:
    """Tokens of the named principals, made in-process: (tokens, token ids)."""
    import remem
    from remem.service.tokens import Tokens

    store = remem.open(db)
    try:
        tokens = Tokens(store)
        made = {name: tokens.create(*PRINCIPALS[name], label=name) for name in names}
    finally:
        store.close()
    return ({n: t for n, (t, _) in made.items()}, {n: i.token_id for n, (_, i) in made.items()})


def _remember(w: World, name: str, scope: str, key: str, value: Any, kind: str) -> dict:
    r = w.ok("root", "POST", "/memory/m1/items",
             json={"scope": scope, "key": key, "value": value, "kind": kind})
    w.seed.ids[name] = r["item_id"]
    w.seed.ids[name + ".claim"] = r["claim_id"]
    return r


def _observe(w: World, name: str, scope: str, text: str, source_id: str) -> dict:
    r = w.ok("root", "POST", "/memory/m1/observe",
             json={"scope": scope, "text": text, "source_id": source_id, "run_id": f"run-{name}"})
    w.seed.ids[name] = r["receipt_id"]
    w.seed.ids[name + ".source"] = r["source_id"]
    return r


def _conflict(w: World, scope: str, mark: str) -> tuple[str, str, str]:
    for value in (f"Tromso {mark}", f"Narvik {mark}"):
        r = w.ok("root", "POST", "/memory/m1/apply", json={
            "entity": scope, "attribute": "work_city", "value": value, "kind": "profile_slot",
            "operation": "assert"})
    group = r["results"][0]["receipt"]["conflict_group"]
    assert group, r
    members = [i["item_id"] for g in w.ok("root", "GET", "/memory/m1/conflicts",
                                           params={"scope": scope}) for i in g["items"]]
    return group, members[0], members[1]


def _seed(w: World) -> None:
    assert w.call("m2_admin", "POST", "/memories", json={"memory_id": "m2"}).status_code == 201
    w.ok("m2_admin", "POST", "/memory/m2/items", json={
        "scope": ALICE, "key": "home_city", "value": "Quito-m2mark", "kind": "profile_slot"})
    _seed_m1(w)


def _seed_m1(w: World) -> None:
    assert w.call("root", "POST", "/memories", json={"memory_id": "m1"}).status_code == 201
    w.seed = Seed()
    ids = w.seed.ids
    _remember(w, "alice.home", ALICE, "home_city", f"Paris {ALICE_MARK}", "profile_slot")
    _remember(w, "alice.diet", ALICE, "diet", f"vegetarian {ALICE_MARK}", "preference")
    _remember(w, "alice.dog", ALICE, "dog_name", f"Rex {ALICE_MARK}", "fact")
    _remember(w, "alice.old", ALICE, "favourite_hike", f"GR20 {ALICE_MARK}", "fact")
    _observe(w, "alice.obs", ALICE, f"My brother is called Tom {ALICE_MARK}.", "src-alice-1")
    ids["alice.group"], ids["alice.conflict_a"], _ = _conflict(w, ALICE, ALICE_MARK)

    _remember(w, "bob.home.old", BOB, "home_city", f"Bergen {BOB_MARK}", "profile_slot")
    _remember(w, "bob.home", BOB, "home_city", f"Oslo {BOB_MARK}", "profile_slot")
    _remember(w, "bob.diet", BOB, "diet", f"pescatarian {BOB_MARK}", "preference")
    _remember(w, "bob.dog", BOB, "dog_name", f"Fido {BOB_MARK}", "fact")
    _remember(w, "bob.archived", BOB, "favourite_hike", f"Besseggen {BOB_MARK}", "fact")
    w.ok("root", "POST", f"/memory/m1/items/{ids['bob.archived']}/archive")
    ids["bob.group"], ids["bob.conflict_a"], ids["bob.conflict_b"] = _conflict(w, BOB, BOB_MARK)
    r = w.ok("root", "POST", "/memory/m1/items", json={
        "scope": BOB, "key": "car", "value": f"Volvo {BOB_MARK}", "kind": "fact",
        "source": {"id": "src-bob-quote", "text": f"I drive a Volvo {BOB_MARK}.",
                   "role": "user"}})
    ids["bob.quoted"] = r["item_id"]
    _observe(w, "bob.obs", BOB, f"My sister is called Ingrid {BOB_MARK}.", SHARED_SOURCE_ID)
    _observe(w, "bob.obs2", BOB, f"I work at the harbour {BOB_MARK}.", "src-bob-2")

    _remember(w, "bot.persona", BOT, "persona", f"Botty the guide {BOT_MARK}", "identity")
    _remember(w, "bot.rule", BOT, "tone", f"Answer briefly {BOT_MARK}.", "rule")

    _remember(w, "t1.fact", T1, "meeting_room", f"Room 4 {T1_MARK}", "fact")
    _observe(w, "t1.obs", T1, f"My nephew is called Leo {T1_MARK}.", "src-t1-1")

    runs = w.ok("root", "GET", "/memory/m1/runs").get("runs", [])
    w.seed.runs = runs
    hidden = {v for k, v in ids.items() if k.startswith(("bob.", "t1."))}
    hidden -= {SHARED_SOURCE_ID, "src-bob-2", "src-t1-1"}  # names alice may use herself
    w.seed.hidden_ids = hidden
    w.seed.m1_ids = set(ids.values()) - {SHARED_SOURCE_ID, "src-bob-2", "src-t1-1",
                                         "src-alice-1"}


def missing_like(real: str) -> str:
    """An id of the same shape that names nothing: prefix kept, the rest zeros/'a's."""
    head, sep, tail = real.rpartition("_")
    tail = "".join("0" if c.isdigit() or c in "abcdef" else "a" if c.isalpha() else c
                   for c in tail)
    return f"{head}{sep}{tail}" if sep else "0" * len(real)


# --- checks ------------------------------------------------------------------------------
def sent_text(*parts: Any) -> str:
    """Everything the caller sent, as one string (ids the caller named are not leaks)."""
    return " ".join(p if isinstance(p, str) else json.dumps(p, ensure_ascii=False)
                    for p in parts if p is not None)


def forbidden(w: World, principal: str, sent: str) -> list[str]:
    """Strings no response to ``principal`` may contain (minus what it sent itself)."""
    marks = [BOB_MARK, T1_MARK, *sorted(w.seed.hidden_ids)]
    if principal in OUTSIDERS or principal.startswith("m2"):
        marks += [ALICE_MARK, BOT_MARK, *sorted(w.seed.m1_ids)]
    return [m for m in marks if m not in sent]


def check_response(w: World, principal: str, r: httpx.Response, sent: str) -> None:
    """No 5xx, the one error shape on 4xx, and none of the forbidden strings in the body."""
    assert r.status_code < 500, f"server error {r.status_code}: {r.text[:500]}"
    if r.status_code >= 400:
        body = r.json()
        if isinstance(body, dict) and "kip_memory" in body:  # a refused KIP request
            from remem.service.kip_schema import errors

            assert body.get("status") == "failed" and not errors(body, "Response") and \
                "remem_code" in body["error"].get("details", {}), \
                f"not the KIP failed shape: {r.text[:500]}"
        else:
            assert set(body) == {"error"} and {"code", "message", "retryable", "details"} <= \
                set(body["error"]), f"not the error shape: {r.text[:500]}"
    elif isinstance(body := _json(r), dict) and "kip_memory" in body:
        from remem.service.kip_schema import errors

        assert not errors(body, "Response" if "status" in body else "Descriptor"), \
            f"schema-invalid KIP document: {r.text[:500]}"
    body = r.text
    leaked = [m for m in forbidden(w, principal, sent) if m in body]
    assert not leaked, f"{principal} got {leaked} in {r.status_code} {body[:800]}"


def _json(r: httpx.Response) -> Any:
    try:
        return r.json()
    except ValueError:
        return None


def check_refused(w: World, principal: str, r: httpx.Response, sent: str) -> None:
    check_response(w, principal, r, sent)
    assert 400 <= r.status_code < 500, \
        f"{principal} was not refused: {r.status_code} {r.text[:500]}"


def _protected(fp: dict[str, Any], scopes: tuple[str, ...]) -> dict[str, Any]:
    marks = {BOB: BOB_MARK, T1: T1_MARK, BOT: BOT_MARK, ALICE: ALICE_MARK}
    return {**{s: fp[s] for s in scopes},
            "sources": [t for t in fp["sources"] if any(marks[s] in t for s in scopes)]}


def check_unchanged(w: World, *, full: bool = True,
                    scopes: tuple[str, ...] = (BOB, T1, BOT, ALICE), head: bool = True) -> None:
    """The seeded state is as it was: the ledger head (``head``) and, with ``full``, the
    items and source texts of ``scopes``. A change marks the world dirty (reseeded next)."""
    now = w.fingerprint() if full else {"head": w.head()}
    problems = []
    if head and now["head"] != w.baseline["head"]:
        problems.append(f"ledger head moved {w.baseline['head']} -> {now['head']}")
    if full:
        before, after = _protected(w.baseline, scopes), _protected(now, scopes)
        for part in before:
            if before[part] != after[part]:
                gone = sorted(set(before[part]) - set(after[part]))
                new = sorted(set(after[part]) - set(before[part]))
                problems.append(f"{part} changed: gone {gone[:2]} new {new[:2]}"[:900])
    if problems:
        w.dirty = True
        raise AssertionError("; ".join(problems))


def check_others_intact(w: World) -> None:
    """Bob's and the thread's items, sources and ledger events are as seeded (as root)."""
    assert w.ledger_of_others() == w.others
    marks = (BOB_MARK, T1_MARK)
    assert [t for t in w.fingerprint()["sources"] if any(m in t for m in marks)] == \
        [t for t in w.baseline["sources"] if any(m in t for m in marks)]


def rebaseline(w: World) -> None:
    """After a permitted write by alice: the new state becomes the baseline."""
    w.baseline = w.fingerprint()


def verdict(w: World, principal: str, r: httpx.Response, sent: str, *, refused: bool = True,
            full: bool | None = None, head: bool = True,
            scopes: tuple[str, ...] = (BOB, T1, BOT, ALICE)) -> None:
    """Runs every check and reports every failure together: the response (refused when
    ``refused``; never a leak or a 5xx) and the state (``check_unchanged``; the full
    fingerprint when ``full``, by default when the call was not refused)."""
    if full is None:
        full = r.status_code < 400
    errors = []
    for check in ((lambda: check_refused(w, principal, r, sent)) if refused else
                  (lambda: check_response(w, principal, r, sent)),
                  lambda: check_unchanged(w, full=full, head=head, scopes=scopes)):
        try:
            check()
        except AssertionError as exc:
            errors.append(str(exc))
    assert not errors, " | ".join(errors)

"""Malformed input over a real `remem serve` on loopback, SQLite and PostgreSQL: no 5xx, the
one error shape, no internals, nothing written.

Every case is sent as raw bytes with httpx, so the server sees exactly what an attacker
would send: bodies nested 20,000 deep, lone surrogates as ``\\ud800`` escapes, NaN and
Infinity, duplicate fields, invalid UTF-8, wrong JSON types for every field of every request
model in the server's own ``/openapi.json``, full-text syntax in queries, over-long words,
and non-string ids in paths and bodies. For each error answer the test asserts the status is
4xx, the body is exactly ``{"error": {"code", "message", "retryable", "details"}}`` with
``retryable`` false, nothing in it looks like SQL, a driver, a host, a port, a path or a
stack, and the ledger head (and the token list) did not move.
"""

from __future__ import annotations

import hashlib

import json
import re
import subprocess
import sys
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import httpx

import remem
from remem.testing.served import Server
import pytest

from _plugins.backends import pg_database

INTERNALS = re.compile(r"\bSELECT\b|\bINSERT\b|sqlite|psycopg|postgres|Traceback|File \"|"
                       r"/work/|127\.0\.0\.1|\bport\b|\.py\b|/tmp/", re.IGNORECASE)
# --- a real server per backend ------------------------------------------------------------
def _cli(db: str, *args: str) -> str:
    return subprocess.run([sys.executable, "-m", "remem.cli.main", "--db", db, *args],
                          capture_output=True, text=True, timeout=120, check=True).stdout


@dataclass
class Served:
    """A running server: base URL, tokens by name, ids of seeded rows, and the db location."""

    http: httpx.Client
    db: str
    store: remem.RememStore
    headers: dict[str, dict[str, str]] = field(default_factory=dict)
    item_id: str = ""
    receipt_id: str = ""
    source_id: str = ""

    def head(self) -> int:
        """The ledger head of m1, read from the database (not over HTTP: the status route
        also counts items, jobs and runs, and this is read around every request sent)."""
        return self.store.adapter.head_seq("m1")

    def token_count(self) -> int:
        return len(self.http.get("/memory/m1/tokens", headers=self.headers["admin"]).json())

    def send(self, method: str, path: str, body: bytes | str | None = None, *,
             as_: str = "alice", content_type: str | None = "application/json"
             ) -> httpx.Response:
        headers = dict(self.headers[as_])
        if content_type:
            headers["content-type"] = content_type
        data = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
        return self.http.request(method, path, content=data, headers=headers)


def _serve(db: str, tmp: Path):
    admin = json.loads(_cli(db, "--json", "token", "create", "--memory", "m1", "--role",
                            "admin", "--subject", "admin"))["token"]
    with Server(db) as srv, httpx.Client(base_url=srv.base, timeout=60) as http, \
            closing(remem.open(db)) as store:
        served = _seed(Served(http, db, store, {"admin": {"Authorization": f"Bearer {admin}"}}))
        http_head = http.get("/memory/m1/status", headers=served.headers["admin"])
        assert http_head.json()["head_seq"] == served.head() > 0  # the same ledger
        yield served


def _seed(s: Served) -> Served:
    admin = s.headers["admin"]
    assert s.http.post("/memories", headers=admin, json={"memory_id": "m1"}).status_code == 201
    for name, role, subject in (("alice", "writer", "user:alice"),
                                ("reader", "reader", "user:alice")):
        r = s.http.post("/memory/m1/tokens", headers=admin, json={"role": role,
                                                                  "subject": subject})
        s.headers[name] = {"Authorization": f"Bearer {r.json()['token']}"}
    w = s.http.post("/memory/m1/items", headers=s.headers["alice"], json={
        "scope": "user:alice", "key": "home_city", "value": "Paris"})
    s.item_id = w.json()["item_id"]
    rc = s.http.post("/memory/m1/observe", headers=s.headers["alice"], json={
        "scope": "user:alice", "text": "I drink green tea every morning."}).json()
    s.receipt_id, s.source_id = rc["receipt_id"], rc["source_id"]
    return s


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"malformed-{request.param}")
    if request.param == "sqlite":
        yield from _serve(str(tmp / "remem.db"), tmp)
        return
    with pg_database() as url:
        yield from _serve(url, tmp)


# --- the checks -----------------------------------------------------------------------------
def assert_clean_error(s: Served, r: httpx.Response) -> dict:
    """4xx, the one error shape, not retryable, and no internals."""
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:500])
    body = r.json()
    if isinstance(body, dict) and "kip_memory" in body:  # a refused KIP request: KIP's shape
        from remem.service.kip_schema import errors

        assert body.get("status") == "failed" and not errors(body, "Response"), body
        kip = body["error"]
        err = {"code": kip["details"]["remem_code"], "message": kip["message"],
               "retryable": kip["details"]["retryable"], "details": kip["details"]}
    else:
        assert set(body) == {"error"}, body
        err = body["error"]
    assert set(err) == {"code", "message", "retryable", "details"}, err
    assert isinstance(err["code"], str) and isinstance(err["message"], str) and err["message"]
    assert isinstance(err["details"], dict)
    assert err["retryable"] is False, err  # the same input fails again
    text = json.dumps(err, ensure_ascii=False)
    assert not INTERNALS.search(text), text[:500]
    assert s.db not in r.text
    return err


def assert_refused(s: Served, method: str, path: str, body: bytes | str | None = None,
                   **kw) -> dict:
    """The request is answered with a clean 4xx error and writes nothing."""
    head, tokens = s.head(), s.token_count()
    err = assert_clean_error(s, s.send(method, path, body, **kw))
    assert s.head() == head, "an invalid request moved the ledger head"
    assert s.token_count() == tokens, "an invalid request created a token"
    return err


def assert_no_server_error(s: Served, method: str, path: str, body: bytes | str | None,
                           **kw) -> httpx.Response:
    """Any answer but 5xx; an error answer is clean and wrote nothing."""
    head = s.head()
    r = s.send(method, path, body, **kw)
    assert r.status_code < 500, (method, path, str(body)[:200], r.status_code, r.text[:500])
    if r.status_code >= 400:
        assert_clean_error(s, r)
        assert s.head() == head, (method, path, str(body)[:200], "moved the head")
    return r


# --- body routes and a valid body for each (the wrong-type sweep mutates one field) ---------
def bodies(s: Served) -> dict[tuple[str, str], tuple[str, dict]]:
    """(method, templated path) -> (concrete path, a valid body)."""
    item = f"/memory/m1/items/{s.item_id}"
    return {
        ("POST", "/memory/{memory_id}/items"): ("/memory/m1/items", {
            "scope": "user:alice", "key": "diet", "value": "vegan", "kind": "preference",
            "valid_at": "2024-01-01T00:00:00Z", "valid_until": "2030-01-01T00:00:00Z",
            "source": {"id": "s-1", "text": "I am vegan", "role": "user",
                       "occurred_at": "2024-01-01T00:00:00Z"}, "idempotency_key": "i-1"}),
        ("POST", "/memory/{memory_id}/facts"): ("/memory/m1/facts", {
            "scope": "user:alice", "key": "trip_report", "content": {"days": 3},
            "type": "summary", "kind": "fact", "retention": {"keepDays": 30},
            "valid_at": "2024-01-01T00:00:00Z", "source": {"id": "s-f1"},
            "idempotency_key": "i-f1", "metadata": {"app": "crm"}}),
        ("PUT", "/memory/{memory_id}/items/{item_id}"): (item, {
            "value": "Lyon", "expected_revision": 1, "kind": "profile_slot",
            "source": {"id": "s-2"}, "idempotency_key": "i-2"}),
        ("POST", "/memory/{memory_id}/items/{item_id}/hold"): (f"{item}/hold", {"hold": True}),
        ("POST", "/memory/{memory_id}/items/{item_id}/retention"): (f"{item}/retention", {
            "keep_until": "2030-01-01T00:00:00Z"}),  # keep_days alone: the 383 case below
        ("POST", "/memory/{memory_id}/conflicts/{group_id}/resolve"): (
            "/memory/m1/conflicts/grp_x/resolve", {"keep": s.item_id}),
        ("POST", "/memories"): ("/memories", {"memory_id": "m1", "config": {}}),
        ("PUT", "/memories/{memory_id}/config"): ("/memories/m1/config", {}),
        ("POST", "/memory/{memory_id}/tokens"): ("/memory/m1/tokens", {
            "role": "reader", "subject": "user:alice", "label": "x"}),
        ("POST", "/memory/{memory_id}/observe"): ("/memory/m1/observe", {
            "scope": "user:alice", "text": "I like chess.", "role": "user",
            "source_id": "src-9", "run_id": "r1", "occurred_at": "2024-01-01T00:00:00Z",
            "kind": "user-message", "idempotency_key": "i-3"}),
        ("POST", "/memory/{memory_id}/recall"): ("/memory/m1/recall", {
            "scopes": ["user:alice"], "query": "tea", "budget_tokens": 300,
            "tokenizer": "o200k_base", "valid_at": "2024-01-01T00:00:00Z",
            "kinds": ["fact"], "include_history": False, "limit": 10,
            "after": [s.receipt_id], "deadline_ms": 0}),
        ("POST", "/memory/{memory_id}/context"): ("/memory/m1/context", {
            "scopes": ["user:alice"], "query": "tea", "max_bytes": 4096, "kinds": ["fact"],
            "valid_at": "2024-01-01T00:00:00Z"}),
        ("POST", "/memory/{memory_id}/apply"): ("/memory/m1/apply", {
            "entity": "user:alice", "attribute": "pet", "value": "cat", "kind": "fact",
            "operation": "assert", "source": {"id": "s-3", "text": "my cat",
                                              "role": "user", "occurred_at_ms": 1700000000000},
            "valid_until_ms": None}),
        ("POST", "/memory/{memory_id}/forget-scope"): ("/memory/m1/forget-scope", {
            "scope": "user:zed"}),  # an empty scope: valid, erases nothing other tests use
        ("POST", "/memory/{memory_id}/kip/sources"): ("/memory/m1/kip/sources", {
            "scope": "user:alice", "source_ref": "s-stage-1", "text": "I like tea.",
            "digest": "sha256:" + hashlib.sha256(b"I like tea.").hexdigest(), "role": "user",
            "actor": "alice", "occurred_at": "2024-01-01T00:00:00Z", "kind": "user-message",
            "run_id": "r-1"}),
        ("POST", "/memory/{memory_id}/slots/context"): ("/memory/m1/slots/context", {
            "query": "tea", "max_bytes": 4096, "scope": "user:alice"}),
        ("POST", "/memory/{memory_id}/slots/{entity}/{attribute}/forget"): (
            "/memory/m1/slots/user/diet/forget", {"expected_revision": 1,
                                                  "scope": "user:alice"}),
        ("POST", "/memory/{memory_id}/observe_many"): ("/memory/m1/observe_many", {
            "scope": "user:alice", "run_id": "r-many", "turns": [{
                "text": "I like tea.", "id": "many-1", "role": "user", "actor": "alice",
                "occurred_at": "2024-01-01T00:00:00Z", "kind": "user-message",
                "idempotency_key": "i-many-1", "metadata": {"app": "crm"},
                "payload": {"lang": "en"}}]}),
        ("POST", "/memory/{memory_id}/query"): ("/memory/m1/query", {
            "scopes": ["user:alice"], "text": "tea", "limit": 5}),
        ("POST", "/memory/{memory_id}/deactivate"): ("/memory/m1/deactivate", {
            "scope": "user:alice", "host_id": "sess-1", "host_kind": "chat",
            "turns": [{"id": "h-1", "role": "user", "text": "I like tea.",
                       "occurred_at": "2024-01-01T00:00:00Z"}]}),
        ("POST", "/memory/{memory_id}/kip"): ("/memory/m1/kip", {
            "kip_memory": "2.0", "operation": "recall", "scope": {"task_ref": "user:alice"},
            "budget": {"max_output_tokens": 400}, "input": {"query": "tea"}}),
    }


ADMIN_ROUTES = {"/memories", "/memories/{memory_id}/config", "/memory/{memory_id}/tokens",
                "/memory/{memory_id}/items/{item_id}/hold", "/memory/{memory_id}/forget-scope",
                "/memory/{memory_id}/conflicts/{group_id}/resolve"}
WRONG = [None, True, 0, -1, 2**63, -(2**63) - 1, 10**30, 1.5, "", "zz", "x" * 5000, [], [1],
         ["user:alice", 7], {}, {"a": 1}, {"a": [{"b": None}]}]
SURROGATE = '"\\ud800"'  # JSON text: a lone high surrogate


def _body_routes(s: Served) -> list[tuple[str, str, str]]:
    spec = s.http.get("/openapi.json").json()
    out = []
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            if "requestBody" in op:
                out.append((method.upper(), path, "admin" if path in ADMIN_ROUTES else "alice"))
    return out


def test_every_route_with_a_body_has_a_valid_example_here(served):
    routes = {(m, p) for m, p, _ in _body_routes(served)}
    assert routes == set(bodies(served)), routes ^ set(bodies(served))
    for (method, template), (path, body) in bodies(served).items():
        as_ = "admin" if template in ADMIN_ROUTES else "alice"
        if template in ("/memories", "/memory/{memory_id}/conflicts/{group_id}/resolve"):
            continue  # the memory exists; no conflict group: valid bodies, 409/404 answers
        r = served.send(method, path, json.dumps(body), as_=as_)
        assert r.status_code < 300, (method, path, r.text[:300])


def _field_paths(body: dict, prefix: tuple = ()) -> list[tuple]:
    out = []
    for k, v in body.items():
        out.append((*prefix, k))
        if isinstance(v, dict) and v:
            out.extend(_field_paths(v, (*prefix, k)))
    return out


def _replace(body: dict, where: tuple, text: str) -> str:
    """The body as JSON text with the field at ``where`` replaced by raw JSON ``text``."""
    marker = "\u0000MARK\u0000"
    doc = json.loads(json.dumps(body))
    node = doc
    for k in where[:-1]:
        node = node[k]
    node[where[-1]] = marker
    return json.dumps(doc).replace(json.dumps(marker), text)


def test_wrong_json_types_in_every_field_of_every_request_model(served):
    """Every field (nested ones too) of every body route gets every JSON type, out-of-range
    numbers, huge strings and a lone surrogate: never a 5xx; errors are clean and write
    nothing. KIP requests are checked separately below (marked for the lead's parser)."""
    sent = 0
    for (method, template), (path, body) in bodies(served).items():
        if template.endswith("/kip"):
            continue
        as_ = "admin" if template in ADMIN_ROUTES else "alice"
        for where in _field_paths(body):
            for raw in [json.dumps(v) for v in WRONG] + [SURROGATE]:
                r = assert_no_server_error(served, method, path, _replace(body, where, raw),
                                           as_=as_)
                if raw == SURROGATE:
                    assert r.status_code >= 400, (path, where)  # never stored
                sent += 1
    assert sent > 500


# --- whole-document malformations ----------------------------------------------------------
DEEP = 20_000
DOCUMENTS = {
    "deep-array-20000": "[" * DEEP + "]" * DEEP,
    "deep-mixed-20000": '{"a":' + "[" * DEEP + "]" * DEEP + "}",
    "deep-object-3000": '{"a":' * 3000 + "1" + "}" * 3000,
    "deep-value-500": '{"scope":"user:alice","key":"deep","value":' + "[" * 500 + "1"
                      + "]" * 500 + "}",
    "deep-value-40": '{"scope":"user:alice","key":"deep","value":' + "[" * 40 + "1"
                     + "]" * 40 + "}",
    "nan": '{"scope":"user:alice","key":"n","value":NaN}',
    "infinity": '{"scope":"user:alice","key":"n","value":[Infinity]}',
    "minus-infinity": '{"scope":"user:alice","key":"n","value":{"x":-Infinity}}',
    "overflow-to-inf": '{"scope":"user:alice","key":"n","value":1e999}',
    "huge-integer": '{"scope":"user:alice","key":"n","value":' + "9" * 5000 + "}",
    "duplicate-key": '{"scope":"user:alice","key":"a","key":"b","value":"v"}',
    "duplicate-nested-key": '{"scope":"user:alice","key":"a","value":{"x":1,"x":2}}',
    "surrogate-value": '{"scope":"user:alice","key":"s","value":"\\ud800"}',
    "surrogate-low": '{"scope":"user:alice","key":"s","value":"a\\udfffb"}',
    "surrogate-in-key": '{"scope":"user:alice","key":"s","value":{"\\ud800":1}}',
    "surrogate-in-list": '{"scope":"user:alice","key":"s","value":["ok","\\udbff"]}',
    "reversed-pair": '{"scope":"user:alice","key":"s","value":"\\udc00\\ud800"}',
    "not-json": "{scope: user:alice}",
    "truncated": '{"scope":"user:alice","key":',
    "top-level-array": "[1, 2]",
    "top-level-string": '"hello"',
    "top-level-null": "null",
    "top-level-number": "42",
    "empty-object": "{}",
    "huge-string": '{"scope":"user:alice","key":"big","value":"' + "x" * 60_000 + '"}',
}
INVALID_UTF8 = {
    "invalid-utf8-ff": b'{"scope":"user:alice","key":"u","value":"\xff\xfe"}',
    "invalid-utf8-cesu-surrogate": b'{"scope":"user:alice","key":"u","value":"\xed\xa0\x80"}',
    "invalid-utf8-overlong": b'{"scope":"user:alice","key":"u","value":"\xc0\xaf"}',
    "invalid-utf8-truncated": b'{"scope":"user:alice","key":"u","value":"\xe2\x82"}',
    "latin1": '{"scope":"user:alice","key":"u","value":"caf\xe9"}'.encode("latin-1"),
}
DOC_ROUTES = [("POST", "/memory/m1/items"), ("POST", "/memory/m1/apply"),
              ("POST", "/memory/m1/observe"), ("POST", "/memory/m1/recall"),
              ("PUT", "/memories/m1/config")]


@pytest.mark.parametrize("name", sorted(DOCUMENTS) + sorted(INVALID_UTF8))
def test_malformed_documents_are_refused_on_every_body_route(served, name):
    doc = DOCUMENTS.get(name) or INVALID_UTF8[name]
    for method, path in DOC_ROUTES:
        as_ = "admin" if path.startswith("/memories") else "alice"
        if name == "empty-object" and path.startswith("/memories"):
            continue  # {} is a valid (default) config
        err = assert_refused(served, method, path, doc, as_=as_)
        if name.startswith(("deep-array", "deep-mixed", "deep-object")):
            assert err["code"] in ("invalid_input", "request_too_large"), err


def test_nesting_limits_are_named_in_the_error(served):
    err = assert_refused(served, "POST", "/memory/m1/items", DOCUMENTS["deep-array-20000"])
    assert err["details"].get("limit") == 64 and "deep" in err["message"]
    err = assert_refused(served, "POST", "/memory/m1/items", DOCUMENTS["deep-value-40"])
    assert err["details"] == {"field": "value", "limit": 32}


def test_a_surrogate_pair_is_one_character_and_is_stored(served):
    r = served.send("POST", "/memory/m1/items",
                    '{"scope":"user:alice","key":"mood","value":"happy \\ud83d\\ude00"}')
    assert r.status_code == 200, r.text
    got = served.http.get(f"/memory/m1/items/{r.json()['item_id']}",
                          headers=served.headers["alice"]).json()
    assert got["value"] == "happy \U0001F600"


def test_empty_and_non_json_content_types_are_clean_errors(served):
    assert_refused(served, "POST", "/memory/m1/items", b"")
    assert_refused(served, "POST", "/memory/m1/items", b"scope=user:alice",
                   content_type="application/x-www-form-urlencoded")
    assert_refused(served, "POST", "/memory/m1/items", b"\x00\x01\x02",
                   content_type="application/octet-stream")
    assert_refused(served, "POST", "/memory/m1/apply", b"")


# --- ids in paths and queries ---------------------------------------------------------------
ODD_IDS = ["123", "0", "-1", "1e999", "null", "true", "[1]", "%7B%22a%22%3A1%7D", "%00",
           "a%00b", "%ED%A0%80", "%FF%FE", "%C0%AF", "x" * 3000, "%2E%2E", "*", "%25",
           "itm_" + "0" * 24, "'%20OR%201=1--", "%22%5C"]


@pytest.mark.parametrize("suffix", ["", "/history", "/forget", "/archive", "/restore",
                                    "/retention"])
def test_odd_item_ids_in_paths_are_not_found(served, suffix):
    method = "GET" if suffix in ("", "/history") else "POST"
    body = '{"keep_days": 3}' if suffix == "/retention" else None
    for odd in ODD_IDS:
        err = assert_refused(served, method, f"/memory/m1/items/{odd}{suffix}", body)
        assert err["code"] in ("not_found_or_not_visible", "not_found", "validation_failed")


def test_odd_receipt_token_and_group_ids_are_not_found(served):
    for odd in ODD_IDS:
        assert_refused(served, "GET", f"/memory/m1/receipts/{odd}", as_="reader")
        assert_refused(served, "DELETE", f"/memory/m1/tokens/{odd}", as_="admin")
        assert_refused(served, "POST", f"/memory/m1/conflicts/{odd}/resolve",
                       json.dumps({"keep": served.item_id}), as_="admin")
        assert_refused(served, "GET", f"/memory/{odd}/items")


QUERIES = [
    "/memory/m1/items?limit=abc", "/memory/m1/items?limit=1e999",
    "/memory/m1/items?limit=99999999999999999999999", "/memory/m1/items?limit=-5",
    "/memory/m1/items?cursor=%00%FF", "/memory/m1/items?cursor=W10=",
    "/memory/m1/items?cursor=" + "A" * 1000, "/memory/m1/items?cursor=eyJhZnRlciI6IDV9",
    "/memory/m1/items?cursor=eyJhZnRlciI6IHsiYSI6IDF9fQ==",
    "/memory/m1/items?status=zzz", "/memory/m1/items?scope=user:*",
    "/memory/m1/items?scope=user:%ED%A0%80", "/memory/m1/inspect?scope=*&key=home_city",
    "/memory/m1/inspect?scope=user:alice&key=%ED%A0%80",
    "/memory/m1/profile?scopes=user:*", "/memory/m1/profile?scopes=user:alice&budget_tokens=0",
    "/memory/m1/conflicts?scope=user:", "/memory/m1/runs?limit=abc",
    "/memory/m1/apply?scope=user:*",
]
#: Filters that match nothing may be answered with an empty result: any answer but a 5xx.
ODD_FILTERS = [
    "/memory/m1/items?key=Home%20City", "/memory/m1/items?kind=%00",
    "/memory/m1/items?key=%ED%A0%80", "/memory/m1/items?cursor=eyJhZnRlciI6ICJcdTAwMDAifQ==",
    "/memory/m1/profile?scopes=user:alice&tokenizer=nope",
    "/memory/m1/profile?scopes=user:alice&activation_id=%00",
    "/memory/m1/profile?scopes=user:alice&activation_id=%ED%A0%80",
    "/memory/m1/runs?limit=99999999999999999999",
]


def _query(served, url: str, check) -> None:
    method = "POST" if "/apply" in url else "GET"
    body = json.dumps(bodies(served)[("POST", "/memory/{memory_id}/apply")][1]) \
        if method == "POST" else None
    as_ = "admin" if "/runs" in url else "alice"
    check(served, method, url, body, as_=as_)


@pytest.mark.parametrize("url", QUERIES)
def test_malformed_query_parameters_are_clean_errors(served, url):
    _query(served, url, assert_refused)


@pytest.mark.parametrize("url", ODD_FILTERS)
def test_odd_filters_never_give_a_server_error(served, url):
    _query(served, url, assert_no_server_error)


@pytest.mark.parametrize("after", [[1], [{"a": 1}], [None], [["x"]], ["rcpt_missing"],
                                   "rcpt_x", {"r": 1}])
def test_non_string_receipt_ids_in_recall_barriers_are_refused(served, after):
    body = {"scopes": ["user:alice"], "query": "tea", "budget_tokens": 300, "after": after}
    assert_refused(served, "POST", "/memory/m1/recall", json.dumps(body), as_="reader")


@pytest.mark.parametrize("keep", [5, None, ["x"], {"a": 1}, "", "%00"])
def test_non_string_item_ids_in_resolve_are_refused(served, keep):
    assert_refused(served, "POST", "/memory/m1/conflicts/grp_1/resolve",
                   json.dumps({"keep": keep}), as_="admin")


# --- full-text syntax and over-long words ---------------------------------------------------
FTS_QUERIES = ['"', '""', '"unterminated', "NEAR(", "NEAR(tea coffee, 2)", "*", "tea*", ":*",
               "tea:*", "&|!", "!tea & (coffee | milk)", "(", ")", "((((", "tea AND",
               "OR OR OR", "NOT", "-tea", "+tea", "^tea", "tea:A", "col:tea", "{tea}",
               "[tea]", "'", "''", "\\", "tea\\", "%", "_", "tea; DROP TABLE items;--",
               "<->", "tea <-> coffee", "tea <2> coffee", "東京", "🙂🙂", "é" * 2000]


@pytest.mark.parametrize("route", ["recall", "context"])
def test_full_text_syntax_in_queries_is_searched_as_words(served, route):
    for q in FTS_QUERIES:
        body = {"scopes": ["user:alice"], "query": q}
        body.update({"budget_tokens": 300} if route == "recall" else {"max_bytes": 4096})
        r = served.send("POST", f"/memory/m1/{route}", json.dumps(body), as_="reader")
        assert r.status_code == 200, (q, r.text[:300])
    if route == "recall":  # the seeded source is found through the syntax around its words
        body = {"scopes": ["user:alice"], "query": 'green "tea (morning) NEAR( tea:*',
                "budget_tokens": 300}
        r = served.send("POST", "/memory/m1/recall", json.dumps(body), as_="reader")
        assert r.status_code == 200 and "green tea" in r.text


@pytest.mark.parametrize("size", [2_100, 16_000])
def test_over_long_words_in_recall_are_dropped_not_refused(served, size):
    word = "w" * size
    for route, extra in (("recall", {"budget_tokens": 300}), ("context", {"max_bytes": 4096})):
        body = {"scopes": ["user:alice"], "query": f"tea {word}", **extra}
        r = served.send("POST", f"/memory/m1/{route}", json.dumps(body), as_="reader")
        assert r.status_code == 200, r.text[:300]
    body = {"scopes": ["user:alice"], "query": word, "budget_tokens": 300}
    assert served.send("POST", "/memory/m1/recall", json.dumps(body)).status_code == 200


def test_a_source_with_an_over_long_word_is_indexed_and_found_by_its_other_words(served):
    text = "Quarterly zephyrine report " + "q" * 2_100 + " filed."
    r = served.send("POST", "/memory/m1/observe", json.dumps({"scope": "user:alice",
                                                              "text": text}))
    assert r.status_code == 202, r.text
    body = {"scopes": ["user:alice"], "query": "zephyrine", "budget_tokens": 50_000}
    found = served.send("POST", "/memory/m1/recall", json.dumps(body), as_="reader")
    assert found.status_code == 200 and "zephyrine" in found.text


def test_huge_strings_in_every_text_field_are_refused_or_bounded(served):
    big = "x" * 20_000
    for path, body in (("/memory/m1/observe", {"scope": "user:alice", "text": big}),
                       ("/memory/m1/recall", {"scopes": ["user:alice"], "query": big,
                                              "budget_tokens": 10}),
                       ("/memory/m1/items", {"scope": "user:alice", "key": "k", "value": big}),
                       ("/memory/m1/items", {"scope": big, "key": "k", "value": "v"}),
                       ("/memory/m1/items", {"scope": "user:alice", "key": big, "value": "v"})):
        assert_refused(served, "POST", path, json.dumps(body))
    assert_refused(served, "POST", "/memory/m1/items", "x" * 70_000)  # 413


# --- scope handles and token subjects -------------------------------------------------------
BAD_SCOPES = ["user:*", "*", "user:", ":alice", "user", " user:alice", "user:alice ",
              "User:alice", "USER:alice", "user:al ice", "user:al\tice", "user:\u200balice",
              "user:alice\u202e", "user:e\u0301", "user:a*", "users:alice", "user::alice",
              "user:\u0085x", "user:alice\n", "admin ", "Admin", "ADMIN", "*:*"]


@pytest.mark.parametrize("subject", BAD_SCOPES)
def test_token_subjects_must_be_canonical_scope_handles(served, subject):
    err = assert_refused(served, "POST", "/memory/m1/tokens",
                         json.dumps({"role": "reader", "subject": subject}), as_="admin")
    assert err["code"] in ("invalid_input", "validation_failed")


@pytest.mark.parametrize("scope", [s for s in BAD_SCOPES if not s.lower().startswith("admin")])
def test_odd_scope_handles_are_refused_on_reads_and_writes(served, scope):
    assert_refused(served, "POST", "/memory/m1/items",
                   json.dumps({"scope": scope, "key": "k", "value": "v"}), as_="admin")
    assert_refused(served, "POST", "/memory/m1/recall", json.dumps({
        "scopes": [scope], "query": "tea", "budget_tokens": 100}), as_="admin")
    assert_refused(served, "POST", "/memory/m1/observe",
                   json.dumps({"scope": scope, "text": "hello"}), as_="admin")


# --- PostgreSQL-specific failures, now clean on both backends -------------------------------
def test_semantic_forget_of_a_source_lists_its_items(served):
    """``items_from_source`` on PostgreSQL used SELECT DISTINCT with an ORDER BY expression
    not in the select list, so every semantic forget of a source failed with 500."""
    released = served.send("POST", f"/memory/m1/items/{served.item_id}/hold",
                           json.dumps({"hold": False}), as_="admin")  # set by other tests
    assert released.status_code == 200, released.text
    r = served.send("POST", "/memory/m1/observe", json.dumps({
        "scope": "user:alice", "text": "I live in Lisbon."}))
    assert r.status_code == 202, r.text
    source_id = r.json()["source_id"]
    r = served.send("POST", "/memory/m1/kip", json.dumps({
        "kip_memory": "2.0", "operation": "forget", "scope": {"task_ref": "user:alice"},
        "idempotency_key": "forget-src-1",
        "input": {"target_ref": source_id, "mode": "semantic"}}))
    assert r.status_code == 200, r.text[:500]
    assert r.json()["result"]["status"] in ("completed", "pending")


# --- KIP: non-object input/scope/budget (the lead is rewriting the KIP parser) --------------
def _kip(**over) -> dict:
    req = {"kip_memory": "2.0", "operation": "recall", "scope": {"task_ref": "user:alice"},
           "idempotency_key": "kip-bad", "budget": {"max_output_tokens": 300},
           "input": {"query": "tea"}}
    req.update(over)
    return req


KIP_CASES = {
    "input-string": _kip(input="tea"), "input-list": _kip(input=["tea"]),
    "input-number": _kip(input=5), "input-true": _kip(input=True),
    "scope-string": _kip(scope="user:alice"), "scope-list": _kip(scope=["user:alice"]),
    "scope-number": _kip(scope=1), "task-ref-number": _kip(scope={"task_ref": 5}),
    "task-ref-wildcard": _kip(scope={"task_ref": "user:*"}),
    "context-refs-object": _kip(scope={"task_ref": "user:alice",
                                       "context_refs": {"user:bob": 1}}),
    "context-refs-string": _kip(scope={"task_ref": "user:alice", "context_refs": "user:bob"}),
    "budget-string": _kip(budget="lots"), "budget-list": _kip(budget=[1]),
    "budget-tokens-string": _kip(budget={"max_output_tokens": "many"}),
    "budget-tokens-huge": _kip(budget={"max_output_tokens": 10**30}),
    "after-number": _kip(input={"query": "tea", "after": [1]}),
    "after-object": _kip(input={"query": "tea", "after": [{"a": 1}]}),
    "after-string": _kip(input={"query": "tea", "after": "rcpt_x"}),
    "query-number": _kip(input={"query": 5}),
    "observe-input-list": _kip(operation="observe", input=["x"]),
    "observe-text-number": _kip(operation="observe", input={"source_ref": "s", "text": 5}),
    "forget-target-number": _kip(operation="forget", input={"target_ref": 5,
                                                            "mode": "semantic"}),
    "forget-target-object": _kip(operation="forget", input={"target_ref": {"a": 1},
                                                            "mode": "payload_only"}),
    "revise-value-deep": _kip(operation="revise", idempotency_key="kip-deep",
                              input={"key": "k", "value": json.loads("[" * 40 + "]" * 40)}),
    "requires-string": _kip(requires="memory_basic"),
    "operation-list": _kip(operation=["recall"]),
    "version-number": _kip(kip_memory=2.0),
    "idempotency-key-object": _kip(operation="observe", idempotency_key={"a": 1},
                                   input={"source_ref": "s", "text": "t"}),
}
#: KIP cases that still give a 5xx on this branch (service/kip.py and the route's raw-JSON
#: access checks are being replaced by typed requests).
@pytest.mark.parametrize("name", sorted(KIP_CASES))
def test_malformed_kip_requests_are_clean_errors(served, name):
    assert_refused(served, "POST", "/memory/m1/kip", json.dumps(KIP_CASES[name]))

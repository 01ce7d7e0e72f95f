"""Every text input refuses a lone surrogate with invalid_input and writes nothing (issue
13.7), on SQLite and PostgreSQL: the Python API (every path that takes text, ids, keys, actors
or JSON values), HTTP bodies through a real `remem serve`, and the real `remem` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest

import remem
from remem.errors import InvalidInput
from remem.service.apply import apply_document
from remem.service.tokens import Tokens
from remem.testing.served import Server

S = "\ud800"
TABLES = ("ledger", "items", "payloads", "sources", "receipts", "jobs", "idempotency",
          "feedback", "capture_cursors", "tokens", "memories", "provenance")


def _kip(op: str, inp: dict, key: str = "k1") -> dict:
    return {"kip_memory": "2.0", "operation": op, "idempotency_key": key,
            "scope": {"task_ref": "user:a"}, "input": inp}


def _turn(**over) -> list[dict]:
    return [{"id": "t1", "role": "user", "text": "I like tea.", **over}]


#: name -> call(memory, store, item_id); each must raise InvalidInput and write nothing
PATHS = {
    "remember.scope": lambda m, s, i: m.remember("user:a" + S, "diet", "x"),
    "remember.key": lambda m, s, i: m.remember("user:a", "diet" + S, "x"),
    "remember.value": lambda m, s, i: m.remember("user:a", "diet", "x" + S),
    "remember.nested_value": lambda m, s, i: m.remember("user:a", "prefs", {"a": ["b" + S]}),
    "remember.nested_key": lambda m, s, i: m.remember("user:a", "prefs", {"a" + S: 1}),
    "remember.kind": lambda m, s, i: m.remember("user:a", "diet", "x", kind="fact" + S),
    "remember.source_id": lambda m, s, i: m.remember("user:a", "diet", "x",
                                                     source={"id": "s" + S}),
    "remember.source_text": lambda m, s, i: m.remember("user:a", "diet", "x",
                                                       source={"text": "t" + S}),
    "remember.idempotency_key": lambda m, s, i: m.remember("user:a", "diet", "x",
                                                           idempotency_key="k" + S),
    "remember.actor": lambda m, s, i: m.remember("user:a", "diet", "x", actor="me" + S),
    "remember_many": lambda m, s, i: m.remember_many(
        [{"scope": "user:a", "key": "city", "value": "Lyon"},
         {"scope": "user:a", "key": "diet", "value": "x" + S}]),
    "correct.value": lambda m, s, i: m.correct("user:a", "diet", "x" + S, expected_revision=1),
    "correct.idempotency_key": lambda m, s, i: m.correct(
        "user:a", "diet", "y", expected_revision=1, idempotency_key="k" + S),
    "correct.replaces": lambda m, s, i: m.correct("user:a", "diet", "y", expected_revision=1,
                                                  replaces="itm" + S),
    "correct_item.id": lambda m, s, i: m.correct_item("itm" + S, "y", expected_revision=1),
    "observe.text": lambda m, s, i: m.observe("user:a", "hi" + S),
    "observe.source_id": lambda m, s, i: m.observe("user:a", "hi", source_id="s" + S),
    "observe.run_id": lambda m, s, i: m.observe("user:a", "hi", run_id="r" + S),
    "observe.actor": lambda m, s, i: m.observe("user:a", "hi", actor="a" + S),
    "observe.kind": lambda m, s, i: m.observe("user:a", "hi", kind="k" + S),
    "observe.idempotency_key": lambda m, s, i: m.observe("user:a", "hi",
                                                         idempotency_key="k" + S),
    "apply.value": lambda m, s, i: apply_document(m, b'{"entity": "user:a", "attribute": '
                                                  b'"diet", "value": "x\\ud800", "kind": '
                                                  b'"fact", "operation": "assert"}'),
    "apply.second_of_two": lambda m, s, i: apply_document(m, json.dumps([
        {"entity": "user:a", "attribute": "city", "value": "Lyon", "kind": "fact",
         "operation": "assert"},
        {"entity": "user:a", "attribute": "diet", "value": "x" + S, "kind": "fact",
         "operation": "assert"}], ensure_ascii=True).encode()),
    "capture.host_kind": lambda m, s, i: m.capture("user:a", "h" + S, "c1", _turn()),
    "capture.host_id": lambda m, s, i: m.capture("user:a", "h", "c1" + S, _turn()),
    "capture.turn_id": lambda m, s, i: m.capture("user:a", "h", "c1", _turn(id="t" + S)),
    "capture.turn_text": lambda m, s, i: m.capture("user:a", "h", "c1", _turn(text="x" + S)),
    "capture.turn_actor": lambda m, s, i: m.capture("user:a", "h", "c1", _turn(actor="a" + S)),
    "capture.second_turn": lambda m, s, i: m.capture(
        "user:a", "h", "c1", _turn() + [{"id": "t2", "role": "user", "text": "x" + S}]),
    "recall.query": lambda m, s, i: m.recall("user:a", "diet" + S, budget_tokens=200),
    "recall.scope": lambda m, s, i: m.recall("user:a" + S, "diet", budget_tokens=200),
    "recall.kinds": lambda m, s, i: m.recall("user:a", "diet", budget_tokens=200,
                                             kinds=["fact" + S]),
    "recall.tokenizer": lambda m, s, i: m.recall("user:a", "diet", budget_tokens=200,
                                                 tokenizer="o" + S),
    "recall.after": lambda m, s, i: m.recall("user:a", "diet", budget_tokens=200,
                                             after=["rcpt" + S]),
    "context.query": lambda m, s, i: m.context("user:a", "diet" + S),
    "profile.activation_id": lambda m, s, i: m.profile("user:a", activation_id="a" + S),
    "inspect.key": lambda m, s, i: m.inspect("user:a", "diet" + S),
    "get.id": lambda m, s, i: m.get("itm" + S),
    "history.id": lambda m, s, i: m.history("itm" + S),
    "items.key": lambda m, s, i: m.items(key="d" + S),
    "items.cursor": lambda m, s, i: m.items(cursor="c" + S),
    "receipt.id": lambda m, s, i: m.receipt("rcpt" + S),
    "forget.id": lambda m, s, i: m.forget("itm" + S),
    "forget.value": lambda m, s, i: m.forget(scope="user:a", key="diet", value="v" + S,
                                             expected_revision=1),
    "forget.actor": lambda m, s, i: m.forget(i, actor="a" + S),
    "forget_ref": lambda m, s, i: m.forget_ref("x" + S),
    "forget_source": lambda m, s, i: m.forget_source("s" + S),
    "forget_scope": lambda m, s, i: m.forget_scope("user:a" + S),
    "archive.actor": lambda m, s, i: m.archive(i, actor="a" + S),
    "hold.id": lambda m, s, i: m.set_legal_hold("itm" + S),
    "retention.id": lambda m, s, i: m.set_retention("itm" + S, keep_days=3),
    "resolve.group_id": lambda m, s, i: m.resolve_conflict("g" + S, i),
    "feedback.text": lambda m, s, i: m.feedback("user:a", "good" + S),
    "feedback.idempotency_key": lambda m, s, i: m.feedback("user:a", "good",
                                                           idempotency_key="k" + S),
    "feedback.actor": lambda m, s, i: m.feedback("user:a", "good", actor="a" + S),
    "feedback.target": lambda m, s, i: m.feedback("user:a", "good", target="t" + S),
    "kip.observe": lambda m, s, i: m.kip(_kip("observe", {"text": "hi" + S})),
    "kip.idempotency_key": lambda m, s, i: m.kip(_kip("observe", {"text": "hi"}, "k" + S)),
    "kip.recall": lambda m, s, i: m.kip(_kip("recall", {"query": "diet" + S})),
    "kip.revise": lambda m, s, i: m.kip(_kip("revise", {"key": "prefs",
                                                         "value": {"a" + S: 1}})),
    "kip.feedback": lambda m, s, i: m.kip(_kip("feedback", {"text": "ok"}, "f" + S)),
    "kip.forget": lambda m, s, i: m.kip(_kip("forget", {"target_ref": "x" + S})),
    "create_memory": lambda m, s, i: s.create_memory("m" + S),
    "memory": lambda m, s, i: s.memory("m" + S),
    "config.key": lambda m, s, i: m.replace_config({"keys": {"a" + S: {}}}),
    "token.label": lambda m, s, i: m.create_token("writer", "user:a", "l" + S),
    "token.subject": lambda m, s, i: m.create_token("writer", "user:a" + S),
    "token.revoke": lambda m, s, i: m.revoke_token("tok" + S),
}


def _counts(store) -> dict[str, int]:
    a = store.adapter
    return {t: a._one(f"SELECT count(*) AS n FROM {t}")["n"] for t in TABLES}


@pytest.fixture
def seeded(remem_store):
    m = remem_store.create_memory("m1")
    item = m.remember("user:a", "diet", "vegan").item_id
    m.observe("user:a", "I am vegan.", source_id="s1")
    return remem_store, m, item


def test_a_lone_surrogate_is_invalid_input_and_writes_nothing_on_every_path(seeded):
    store, m, item = seeded
    wrong = []
    for path in sorted(PATHS):
        before = _counts(store)
        try:
            PATHS[path](m, store, item)
            wrong.append(f"{path}: no error")
        except InvalidInput:
            pass
        except Exception as exc:  # noqa: BLE001 - collected: every path is reported at once
            wrong.append(f"{path}: {type(exc).__name__}: {exc}")
        if _counts(store) != before:
            wrong.append(f"{path}: wrote rows")
    assert wrong == []
    assert m.get(item).value == "vegan"
    assert len(PATHS) >= 60


def test_http_bodies_with_a_lone_surrogate_are_invalid_input(store_url):
    s = remem.open(store_url)
    try:
        m = s.create_memory("m1")
        item = m.remember("user:a", "diet", "vegan").item_id
        tok, _ = Tokens(s).create("m1", "admin", "admin")
        before = _counts(s)
    finally:
        s.close()
    h = {"Authorization": f"Bearer {tok}", "Content-Type": "application/json"}
    esc = "\\ud800"
    bodies = [
        ("POST", "/items", f'{{"scope": "user:a", "key": "diet", "value": "x{esc}"}}'),
        ("POST", "/items", f'{{"scope": "user:a", "key": "p", "value": {{"k{esc}": 1}}}}'),
        ("PUT", f"/items/{item}", f'{{"value": "x{esc}", "expected_revision": 1}}'),
        ("POST", "/observe", f'{{"scope": "user:a", "text": "hi{esc}"}}'),
        ("POST", "/observe", f'{{"scope": "user:a", "text": "hi", "actor": "a{esc}"}}'),
        ("POST", "/recall", f'{{"scopes": ["user:a"], "query": "diet{esc}", '
                            '"budget_tokens": 200}'),
        ("POST", "/context", f'{{"scopes": ["user:a"], "query": "diet{esc}"}}'),
        ("POST", "/apply", f'{{"entity": "user:a", "attribute": "diet", "value": "x{esc}", '
                           '"kind": "fact", "operation": "assert"}'),
        ("POST", "/kip", f'{{"kip_memory": "2.0", "operation": "observe", "idempotency_key":'
                         f' "k{esc}", "scope": {{"task_ref": "user:a"}}, '
                         '"input": {"text": "hi"}}'),
        ("POST", "/forget-scope", f'{{"scope": "user:a{esc}"}}'),
    ]
    with Server(store_url) as srv:
        for method, path, body in bodies:
            r = httpx.request(method, f"{srv.base}/memory/m1{path}", headers=h,
                              content=body.encode())
            assert r.status_code == 400, (path, r.text)
            assert r.json()["error"]["code"] == "invalid_input", (path, r.text)
    s = remem.open(store_url)
    try:
        assert _counts(s) == before
    finally:
        s.close()


def test_cli_arguments_and_files_with_invalid_unicode_are_invalid_input(store_url, tmp_path):
    s = remem.open(store_url)
    try:
        s.create_memory("m1")
        before = _counts(s)
    finally:
        s.close()
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
    doc = tmp_path / "p.json"
    doc.write_bytes(b'{"entity": "user:a", "attribute": "diet", "value": "x\\ud800", '
                    b'"kind": "fact", "operation": "assert"}')
    base = [sys.executable, "-m", "remem.cli.main", "--db", store_url, "--memory", "m1",
            "--json"]
    runs = [
        [*base, "remember", "user:a", "diet", b"x\xff"],   # not UTF-8: a surrogate in argv
        [*base, "observe", "user:a", b"hi \xed\xa0\x80"],  # an encoded lone surrogate
        [*base, "recall", "user:a", b"diet\xff"],
        [*base, "forget", "--all-in-scope", b"user:a\xff", "--yes"],
        [*base, "apply", "--file", str(doc)],
    ]
    for argv in runs:
        p = subprocess.run(argv, capture_output=True, env=env, timeout=120)
        out = (p.stdout + p.stderr).decode("utf-8", "replace")
        assert "Traceback" not in out, out
        assert p.returncode == 1 and "invalid_input" in out, (argv, out)
    s = remem.open(store_url)
    try:
        assert _counts(s) == before
    finally:
        s.close()

"""KIP over a real `remem serve` on loopback: the README's full exchange, the descriptor over
HTTP and the CLI, and refusals in the KIP failed shape with the remem error's status. Every
response is validated against the schema by the kit."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from kip.kit import valid

ROOT = Path(__file__).resolve().parents[2]
STEP = re.compile(r"`POST (/memory/m1/kip(?:/sources)?)`.*?```json\n(.*?)```", re.S)


def readme_steps() -> list[tuple[str, dict]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## KIP 2.0 Memory Interface", 1)[1].split("\n## ", 1)[0]
    return [(path, json.loads(body)) for path, body in STEP.findall(section)]


def _fill(doc, names):
    text = json.dumps(doc)
    for k, v in names.items():
        text = text.replace(f'"${k}"', json.dumps(v))
    return json.loads(text)


def test_the_readme_exchange_runs_over_http_and_every_document_is_schema_valid(served):
    maya = served["maya"]
    steps = readme_steps()
    assert [p for p, _ in steps] == ["/memory/m1/kip/sources", "/memory/m1/kip",
                                     "/memory/m1/kip", "/memory/m1/kip/sources",
                                     "/memory/m1/kip", "/memory/m1/kip"]
    names: dict[str, str] = {}
    answers = []
    for path, body in steps:
        body = _fill(body, names)
        if path.endswith("/sources"):
            r = maya.http.post(path, json=body)
            assert r.status_code == 201, r.text
            continue
        valid(body, "Request")
        out = maya.send(body)
        answers.append(out)
        assert out["status"] == "succeeded", out
        if body["operation"] == "observe":
            names["RECEIPT"] = out["receipt"]["receipt_ref"]
            [names["ITEM"]] = out["result"]["memory_refs"]
        if body["operation"] == "revise":
            [names["NEW_ITEM"]] = out["result"]["memory_refs"]
            expanded = maya.kip("recall", {"target_ref": names["ITEM"], "detail": "evidence"})
    observe, recall, revise, forget = answers
    assert observe["progress"]["disposition"] == "formed"
    [fact] = [i for i in recall["result"]["items"] if i["role"] == "fact"]
    assert (fact["ref"], fact["text"], fact["evidence_refs"]) == (
        names["ITEM"], "home_city: Lyon", ["chat-1/turn-7"])
    assert recall["result"]["after"][0]["phase"] == "available"
    assert [i["text"] for i in expanded["result"]["items"]] == ["home_city: Lyon",
                                                                "I live in Lyon."]
    forgotten = maya.kip("recall", {"target_ref": names["ITEM"]})  # the cascade took it too
    assert forgotten["error"]["code"] == "NotFoundOrNotVisible"
    assert forget["result"]["status"] == "completed"
    assert forget["progress"]["disposition"] == "erased"
    gone = maya.kip("recall", {"query": "Where does Maya live?"})
    assert not any("Paris" in i["text"] for i in gone["result"]["items"])


def test_the_descriptor_over_http_and_the_cli(served, tmp_path):
    d = served["maya_reader"].describe()
    assert d["bundles"] == ["memory_basic"] and d["default_scope"] == {"task_ref": "user:maya"}
    assert d["default_budget"]["max_output_tokens"] >= d["minimum_response_tokens"] > 0
    db = tmp_path / "cli.db"
    for args in (["memory", "create", "m1"], ["-m", "m1", "--json", "kip", "describe"]):
        out = subprocess.run([sys.executable, "-m", "remem.cli.main", "--db", str(db), *args],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
    described = valid(json.loads(out.stdout), "Descriptor")
    assert described["tokenizer"] == d["tokenizer"]


def test_refusals_are_kip_failed_responses_with_the_remem_status(served):
    maya, reader, bob = served["maya"], served["maya_reader"], served["bob"]
    bob.stage("bob/turn-1", "I live in Rome.", scope="user:bob")
    cases = [
        (maya, "recall", {"query": "x"}, {"requires": ["memory_learning"]}, 422,
         "UnsupportedCapability"),
        (maya, "recall", {"query": "x", "mode": "attention"}, {}, 422,
         "UnsupportedCapability"),
        (maya, "observe", {"source_ref": "nope"}, {}, 404, "NotFoundOrNotVisible"),
        (maya, "observe", {"source_ref": "bob/turn-1"}, {}, 404, "NotFoundOrNotVisible"),
        (reader, "observe", {"source_ref": "nope"}, {}, 403, "NotAuthorized"),
        (maya, "observe", {"source_ref": "s", "text": "hi"}, {}, 400, "InvalidInput"),
    ]
    for client, op, inp, extra, status, code in cases:
        out = client.kip(op, inp, **extra)
        assert (client.last_status, out["status"], out["error"]["code"]) == (
            status, "failed", code), (op, inp, out)
        assert "bob" not in out["error"]["message"].replace("bob/turn-1", "")
    not_kip = maya.http.post("/memory/m1/kip", json=["not", "a", "request"])
    assert not_kip.status_code in (400, 422)
    assert set(not_kip.json()) == {"error"}  # not a KIP request: the API's one error shape


def test_a_staged_source_with_a_wrong_digest_is_refused_over_http(served):
    r = served["maya"].http.post("/memory/m1/kip/sources", json={
        "scope": "user:maya", "source_ref": "bad-digest", "text": "I like tea.",
        "digest": "sha256:" + "0" * 64})
    assert r.status_code == 400 and r.json()["error"]["details"]["field"] == "digest"
    r = served["maya_reader"].http.post("/memory/m1/kip/sources", json={
        "scope": "user:maya", "source_ref": "by-reader", "text": "I like tea."})
    assert r.status_code == 403

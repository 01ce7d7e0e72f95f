"""Helpers of the KIP tests: requests built as a KIP client would, every response (and every
accepted request) validated against the schema, over Python or over a real ``remem serve``."""

from __future__ import annotations

import hashlib
from typing import Any

import httpx

from remem.service.kip_schema import errors

U = "user:maya"


def valid(document: Any, shape: str = "Response") -> Any:
    """The document, after asserting it validates against the schema's ``shape``."""
    problems = errors(document, shape)
    assert not problems, f"schema-invalid KIP {shape}: {problems[:3]} in {str(document)[:600]}"
    return document


def request(op: str, inp: dict[str, Any], *, scope: str | None = U, key: str | None = None,
            **extra: Any) -> dict[str, Any]:
    """A KIP request document (mutations get ``key`` or a derived idempotency key)."""
    req: dict[str, Any] = {"kip_memory": "2.0", "operation": op, "input": inp, **extra}
    if scope is not None:
        req["scope"] = {"task_ref": scope}
    if op != "recall":
        req["idempotency_key"] = key or f"{op}:{sorted(inp.items())}"
    return req


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


class PyClient:
    """KIP through ``Memory.kip`` (in process)."""

    def __init__(self, memory: Any) -> None:
        self.memory = memory

    def stage(self, ref: str, text: str, *, scope: str = U, **kw: Any) -> dict[str, Any]:
        return self.memory.stage_source(scope, text, source_ref=ref, digest=digest(text), **kw)

    def kip(self, op: str, inp: dict[str, Any], **kw: Any) -> dict[str, Any]:
        req = request(op, inp, **kw)
        out = valid(self.memory.kip(req))
        if out["status"] != "failed":
            valid(req, "Request")
        return out

    def describe(self) -> dict[str, Any]:
        return valid(self.memory.kip_descriptor(), "Descriptor")


class HttpClient:
    """KIP through ``POST /memory/{id}/kip`` of a served remem, with one bearer token."""

    def __init__(self, base: str, token: str, memory_id: str = "m1") -> None:
        self.http = httpx.Client(base_url=base, timeout=30,
                                 headers={"Authorization": f"Bearer {token}"})
        self.mid = memory_id
        self.last_status = 0

    def stage(self, ref: str, text: str, *, scope: str = U, **kw: Any) -> dict[str, Any]:
        r = self.http.post(f"/memory/{self.mid}/kip/sources", json={
            "scope": scope, "source_ref": ref, "text": text, "digest": digest(text), **kw})
        assert r.status_code == 201, r.text
        return r.json()

    def send(self, req: dict[str, Any]) -> dict[str, Any]:
        r = self.http.post(f"/memory/{self.mid}/kip", json=req)
        self.last_status = r.status_code
        out = valid(r.json())
        assert (r.status_code == 200) == (out["status"] != "failed"), (r.status_code, out)
        if out["status"] != "failed":
            valid(req, "Request")
        return out

    def kip(self, op: str, inp: dict[str, Any], **kw: Any) -> dict[str, Any]:
        return self.send(request(op, inp, **kw))

    def describe(self) -> dict[str, Any]:
        r = self.http.get(f"/memory/{self.mid}/kip/descriptor")
        assert r.status_code == 200, r.text
        return valid(r.json(), "Descriptor")

    def close(self) -> None:
        self.http.close()


def as_token(memory: Any, role: str, subject: str) -> Any:
    """The memory seen by a token principal of ``role`` bound to ``subject``."""
    from remem.domain.access import Principal, Role

    return memory.as_principal(Principal(memory.id, Role(role), subject, "t-" + subject))

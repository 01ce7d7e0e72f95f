"""The route list of the live OpenAPI document, and a well-formed request for each route.

Requests name alice's own things (her scope, items, receipt, conflict group), so a refusal
is about the principal's role or memory, never about the payload. A route this table does
not know yet is still probed, with an empty body: it must still refuse outsiders and
readers (when it mutates) and leak nothing.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from security.kit import ALICE

#: (method, path) -> (params, json) with ``{name}`` placeholders for seeded ids.
TEMPLATES: dict[tuple[str, str], tuple[dict | None, Any]] = {
    ("GET", "/memory/{memory_id}/items"): ({"scope": ALICE}, None),
    ("POST", "/memory/{memory_id}/items"): (None, {"scope": ALICE, "key": "shoe_size",
                                                   "value": 42, "kind": "fact"}),
    ("PUT", "/memory/{memory_id}/items/{item_id}"): (None, {"value": "Lyon",
                                                          "expected_revision": 1}),
    ("POST", "/memory/{memory_id}/items/{item_id}/hold"): (None, {"hold": True}),
    ("POST", "/memory/{memory_id}/items/{item_id}/retention"): (None, {"keep_days": 30}),
    ("GET", "/memory/{memory_id}/inspect"): ({"scope": ALICE, "key": "home_city"}, None),
    ("POST", "/memory/{memory_id}/observe"): (None, {"scope": ALICE, "text": "I like tea.",
                                                     "source_id": "src-role-probe"}),
    ("POST", "/memory/{memory_id}/recall"): (None, {"scopes": [ALICE], "query": "home city",
                                                    "budget_tokens": 500}),
    ("POST", "/memory/{memory_id}/context"): (None, {"scopes": [ALICE], "query": "city"}),
    ("GET", "/memory/{memory_id}/profile"): ({"scopes": ALICE}, None),
    ("POST", "/memory/{memory_id}/kip"): (None, {
        "kip_memory": "2.0", "operation": "observe", "idempotency_key": "role-probe",
        "scope": {"task_ref": ALICE},
        "input": {"source_ref": "src-kip-role"}}),
    ("POST", "/memory/{memory_id}/kip/sources"): (None, {
        "scope": ALICE, "source_ref": "src-kip-stage-role", "text": "I like tea."}),
    ("GET", "/memory/{memory_id}/conflicts"): ({"scope": ALICE}, None),
    ("POST", "/memory/{memory_id}/conflicts/{group_id}/resolve"): (
        None, {"keep": "{alice.conflict_a}"}),
    ("POST", "/memory/{memory_id}/apply"): (None, {
        "entity": ALICE, "attribute": "shoe_size", "value": 43, "kind": "fact",
        "operation": "assert"}),
    ("GET", "/memory/{memory_id}/slots"): ({"scope": ALICE}, None),
    ("POST", "/memory/{memory_id}/slots/context"): (None, {"query": "city", "scope": ALICE}),
    ("POST", "/memory/{memory_id}/slots/{entity}/{attribute}/forget"): (
        None, {"expected_revision": 1}),
    ("POST", "/memories"): (None, {"memory_id": "{memory_id}"}),
    ("PUT", "/memories/{memory_id}/config"): (None, {}),
    ("POST", "/memory/{memory_id}/tokens"): (None, {"role": "admin", "subject": "admin"}),
    ("POST", "/memory/{memory_id}/facts"): (None, {"scope": ALICE, "key": "shoe_size",
                                                   "content": 42, "type": "user-profile"}),
}
#: POST routes that only read.
READ_POSTS = {"/memory/{memory_id}/recall", "/memory/{memory_id}/context",
              "/memory/{memory_id}/slots/context"}
#: path parameter -> the seeded id of alice's own thing it names.
PATH_IDS = {"item_id": "{alice.home}", "receipt_id": "{alice.obs}",
            "group_id": "{alice.group}", "token_id": "{m1_spare.token}",
            "entity": ALICE, "attribute": "home_city"}
_MEMORY_ADMIN = re.compile(r"^/memories|/tokens(/|$)|/status$|/runs$")


@dataclass(frozen=True)
class Route:
    method: str
    path: str

    @property
    def id(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def mutates(self) -> bool:
        return self.method != "GET" and self.path not in READ_POSTS

    @property
    def memory_admin(self) -> bool:
        """Routes that manage the memory (config, tokens, delete, status, runs)."""
        return bool(_MEMORY_ADMIN.search(self.path))

    @property
    def names_memory(self) -> bool:
        return "{memory_id}" in self.path or self.path == "/memories"


@functools.cache
def document() -> dict[str, Any]:
    from remem.api.app import openapi_schema

    return openapi_schema()


def routes(doc: dict[str, Any] | None = None) -> list[Route]:
    """Every (method, path) of the document but ``/healthz``."""
    doc = doc or document()
    return [Route(m.upper(), p) for p, ops in sorted(doc["paths"].items())
            for m in sorted(ops) if m in ("get", "post", "put", "delete", "patch")
            and p != "/healthz"]


def fill(value: Any, names: dict[str, str]) -> Any:
    """Replaces ``{name}`` placeholders in strings, lists and dict values."""
    if isinstance(value, str):
        return re.sub(r"\{([a-z0-9_.]+)\}", lambda m: names.get(m.group(1), m.group(0)), value)
    if isinstance(value, list):
        return [fill(v, names) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, names) for k, v in value.items()}
    return value


def request_for(route: Route, names: dict[str, str]) -> dict[str, Any]:
    """``{"method", "url", "params", "json"}`` for the route, placeholders filled."""
    params, body = TEMPLATES.get((route.method, route.path), (None, None))
    if body is None and route.method in ("POST", "PUT", "PATCH"):
        body = {}
    path = route.path
    for name, placeholder in PATH_IDS.items():
        path = path.replace("{" + name + "}", placeholder)
    req = {"method": route.method, "url": fill(path, names), "params": fill(params, names)}
    if body is not None:
        req["json"] = fill(body, names)
    return req

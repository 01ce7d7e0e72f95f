"""Test helpers for the API: a TestClient wrapper with named tokens, and the error check."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fastapi.testclient import TestClient

from remem.service.tokens import Tokens


class Api:
    """A TestClient plus bearer tokens by name (``api.get(path, as_="alice")``)."""

    def __init__(self, client: TestClient, store) -> None:
        self.client = client
        self.store = store
        self.tokens = Tokens(store)
        self.headers: dict[str, dict[str, str]] = {}

    def token(self, name: str, memory: str, role: str, subject: str) -> str:
        token, _ = self.tokens.create(memory, role, subject, label=name)
        self.headers[name] = {"Authorization": f"Bearer {token}"}
        return token

    def request(self, method: str, path: str, as_: str | None = None, **kw):
        headers = {**self.headers.get(as_, {}), **kw.pop("headers", {})} if as_ else \
            kw.pop("headers", {})
        return self.client.request(method, path, headers=headers, **kw)

    def get(self, path: str, as_: str | None = None, **kw):
        return self.request("GET", path, as_, **kw)

    def post(self, path: str, as_: str | None = None, **kw):
        return self.request("POST", path, as_, **kw)

    def put(self, path: str, as_: str | None = None, **kw):
        return self.request("PUT", path, as_, **kw)

    def delete(self, path: str, as_: str | None = None, **kw):
        return self.request("DELETE", path, as_, **kw)

    def remember(self, as_: str, scope: str, key: str, value, memory: str = "m1", **body):
        r = self.post(f"/memory/{memory}/items", as_,
                      json={"scope": scope, "key": key, "value": value, **body})
        assert r.status_code == 200, r.text
        return r.json()


def assert_error(response, status: int, code: str) -> dict:
    """Asserts the one error shape, status and code; returns the error object."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}
    err = body["error"]
    assert set(err) == {"code", "message", "retryable", "details"}
    assert err["code"] == code
    assert isinstance(err["message"], str) and err["message"]
    assert isinstance(err["retryable"], bool)
    assert isinstance(err["details"], dict)
    return err


def cli(db: Path, *args: str) -> str:
    """stdout of ``remem --db DB ARGS...`` in a child process (fails the test on an error)."""
    out = subprocess.run([sys.executable, "-m", "remem.cli.main", "--db", str(db), *args],
                         capture_output=True, text=True, timeout=60, check=True)
    return out.stdout


def admin_database(db: Path) -> str:
    """Creates memory ``m1`` in the SQLite file ``db``; returns an admin token of it."""
    cli(db, "memory", "create", "m1")
    return json.loads(cli(db, "--json", "token", "create", "--memory", "m1", "--role",
                          "admin", "--subject", "admin"))["token"]

"""API fixtures: an app over a real SQLite file, a TestClient, and named tokens."""

from __future__ import annotations

import pytest
from apikit import Api
from fastapi.testclient import TestClient

from remem.api import create_app


@pytest.fixture
def api(store) -> Api:
    """Memories m1 and m2; tokens: admin (m1 admin/admin), alice (m1 writer user:alice),
    alice_reader, alice_admin (m1 admin user:alice), bob (m1 writer user:bob), bot (m1
    writer agent:bot), admin2 (m2 admin/admin)."""
    store.create_memory("m1")
    store.create_memory("m2")
    with TestClient(create_app(store)) as client:
        a = Api(client, store)
        a.token("admin", "m1", "admin", "admin")
        a.token("alice", "m1", "writer", "user:alice")
        a.token("alice_reader", "m1", "reader", "user:alice")
        a.token("alice_admin", "m1", "admin", "user:alice")
        a.token("bob", "m1", "writer", "user:bob")
        a.token("bot", "m1", "writer", "agent:bot")
        a.token("admin2", "m2", "admin", "admin")
        yield a

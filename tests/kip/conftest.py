"""KIP fixtures: a memory on a real SQLite file, and the same through a real `remem serve`
on loopback (tokens: maya writer, maya reader, bob writer, admin)."""

from __future__ import annotations

import pytest

import remem
from _plugins.backends import copy_migrated_sqlite
from remem.testing.served import Server

from kip.kit import HttpClient, PyClient


@pytest.fixture
def py(store):
    return PyClient(store.create_memory("m1"))


@pytest.fixture
def paused(db_path, request):
    """Formation waits for a worker (derive jobs queued, not run inline)."""
    s = remem.open(copy_migrated_sqlite(request, db_path), derive="worker")
    mem = s.create_memory("m1")
    yield s, PyClient(mem)
    s.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A served memory m1 and clients by name; each test uses its own scopes' data."""
    db = tmp_path_factory.mktemp("kip") / "kip.db"
    s = remem.open(db)
    mem = s.create_memory("m1")
    tokens = {name: mem.create_token(role, subject)[0] for name, (role, subject) in {
        "maya": ("writer", "user:maya"), "maya_reader": ("reader", "user:maya"),
        "bob": ("writer", "user:bob"), "admin": ("admin", "admin")}.items()}
    s.close()
    server = Server(db)
    clients = {n: HttpClient(server.base, t) for n, t in tokens.items()}
    try:
        yield clients
    finally:
        for c in clients.values():
            c.close()
        server.stop()


@pytest.fixture
def both(store_url: str):
    """A PyClient over memory m1 on SQLite and on PostgreSQL."""
    s = remem.open(store_url)
    try:
        yield PyClient(s.create_memory("m1"))
    finally:
        s.close()


@pytest.fixture
def model_service():
    """A scripted stand-in for a remote OpenAI-compatible model service on 127.0.0.1."""
    from tests.llm.llm_standin import ScriptedModelService

    service = ScriptedModelService()
    yield service
    service.close()


@pytest.fixture
def modelled(db_path, model_service, request):
    """Memory m1 whose extraction is the scripted remote model."""
    s = remem.open(copy_migrated_sqlite(request, db_path), providers={"remote": {"type": "openai",
                                                  "base_url": model_service.base_url}})
    mem = s.create_memory("m1", {"extraction": {"provider": "remote", "model": "scripted"}})
    yield PyClient(mem), model_service
    s.close()

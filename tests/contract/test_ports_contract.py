"""Both store adapters implement the ``Store`` / ``UnitOfWork`` ports with the same
signatures (names, order and kinds of parameters), so the service layer cannot tell them
apart. No database needed."""

from __future__ import annotations

import inspect

import pytest

from remem import ports
from remem.stores.postgres.store import PostgresStore
from remem.stores.postgres.uow import PostgresUnitOfWork
from remem.stores.sqlite.store import SQLiteStore
from remem.stores.sqlite.uow import SQLiteUnitOfWork


def _methods(proto: type) -> dict:
    out: dict = {}
    for klass in proto.__mro__:
        if klass is object or klass.__name__ in ("Protocol", "Generic"):
            continue
        for name, value in vars(klass).items():
            if callable(value) and not name.startswith("_"):
                out.setdefault(name, value)
    return out


def _shape(fn) -> list[tuple[str, object]]:
    return [(p.name, p.kind) for p in inspect.signature(fn).parameters.values()]


CASES = [(ports.Store, SQLiteStore), (ports.Store, PostgresStore),
         (ports.UnitOfWork, SQLiteUnitOfWork), (ports.UnitOfWork, PostgresUnitOfWork),
         (ports.SearchIndex, __import__("remem.stores.sqlite.search",
                                        fromlist=["x"]).SQLiteSearchIndex),
         (ports.SearchIndex, __import__("remem.stores.postgres.search",
                                        fromlist=["x"]).PostgresSearchIndex)]


@pytest.mark.parametrize(("port", "adapter"), CASES,
                         ids=[f"{p.__name__}-{a.__name__}" for p, a in CASES])
def test_each_adapter_has_every_port_method_with_the_same_signature(port, adapter):
    for name, fn in _methods(port).items():
        impl = getattr(adapter, name, None)
        assert impl is not None, f"{adapter.__name__} lacks {name}"
        assert _shape(impl) == _shape(fn), f"{adapter.__name__}.{name}"


@pytest.mark.parametrize("kind", ["snapshot", "writer"])
def test_the_search_snapshot_and_writer_have_the_same_methods_on_both_backends(kind):
    from remem.stores.postgres import search as pg
    from remem.stores.sqlite import search as lite

    name = "SearchSnapshot" if kind == "snapshot" else "SearchWriter"
    a, b = getattr(lite, name), getattr(pg, name)
    public = {n for n in vars(a) if not n.startswith("_")}
    assert public <= {n for n in vars(b) if not n.startswith("_")}
    for n in public:
        assert _shape(getattr(a, n)) == _shape(getattr(b, n)), f"{name}.{n}"

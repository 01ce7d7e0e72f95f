"""schemathesis against the OpenAPI schema with a valid admin token: no 5xx on any generated
input (schema-conforming and non-conforming cases, a bounded number per operation).

Operations are parametrized by hand (schemathesis' lazy pytest fixture loader does not run
under pytest 9); each test draws cases from the operation's strategy with hypothesis.

One store, app and loaded schema serve the whole module (loading the schema cost about as
much CPU as the 25 examples of an operation); each test gets a memory of its own (its id in
the path, an admin token of that memory, a seeded item), so what one operation's cases do
(delete the memory, forget its scope, revoke tokens) never reaches another test's memory.
"""

from __future__ import annotations

import itertools

import pytest

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.generation.modes import GenerationMode  # noqa: E402

from remem.api import create_app  # noqa: E402
from remem.api.app import openapi_schema  # noqa: E402
from remem.service.tokens import Tokens  # noqa: E402

EXAMPLES_PER_OPERATION = 25
OPERATIONS = [(method.upper(), path, bool(op.get("parameters") or op.get("requestBody")))
              for path, ops in openapi_schema()["paths"].items() for method, op in ops.items()]
CASES = [(m, p, mode) for m, p, has_input in OPERATIONS for mode in GenerationMode
         if has_input or mode is GenerationMode.POSITIVE]  # no input: nothing to break


_MEMORY_NUMBER = itertools.count(1)


@pytest.fixture(scope="module")
def schema(tmp_path_factory):
    """The OpenAPI schema of one app over one SQLite store, loaded once; yields (store,
    schema)."""
    import remem

    store = remem.open(tmp_path_factory.mktemp("schemathesis") / "remem.db")
    yield store, schemathesis.openapi.from_asgi("/openapi.json", create_app(store))
    store.close()


@pytest.mark.parametrize(("method", "path", "mode"), CASES,
                         ids=[f"{m} {p} {mode.value}" for m, p, mode in CASES])
def test_no_generated_request_gets_a_server_error(schema, method, path, mode):
    store, loaded = schema
    memory_id = f"st-own-{next(_MEMORY_NUMBER)}"  # this test's memory
    memory = store.create_memory(memory_id)
    item = memory.remember("user:alice", "home_city", "Paris").item_id
    token, _ = Tokens(store).create(memory_id, "admin", "admin")
    headers = {"Authorization": f"Bearer {token}"}
    operation = loaded[path][method]
    fixed = {name: value for name, value in (("memory_id", memory_id), ("item_id", item))
             if "{" + name + "}" in path}  # reach the handlers, not only the 404s

    @given(case=operation.as_strategy(mode, path_parameters=fixed))
    @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None,
              suppress_health_check=list(HealthCheck))
    def check(case):
        case.call_and_validate(headers=headers, checks=[not_a_server_error])

    check()

"""Slowest test files first (registered by tests/conftest.py through ``pytest_plugins``).

``make test`` runs ``pytest -n 2 --dist loadfile --no-loadscope-reorder``: each xdist worker
takes whole files, in collection order. By default xdist would order files by their number
of tests, which puts the files with a few slow tests (real servers, subprocesses) last, and
one worker then runs them alone while the other is idle. Here the files measured slowest
come first (longest-processing-time-first scheduling), every other file keeps its place
after them, and the tests inside a file keep their order.

``FILE_SECONDS``: seconds per file (``--durations=0``, setup + call + teardown summed) for
the files over 8 s, from a 2-worker run of main bf94d98 on a machine loaded about five-fold
(its figures divided by 5), the files whose commands now run in process re-measured after
that; only their order matters. Refresh it when a file gets much slower.
"""

from __future__ import annotations

import pytest

FILE_SECONDS: dict[str, float] = {
    "tests/security/test_malformed_input.py": 88,
    "tests/instantkv/test_product_smoke.py": 79,
    "tests/security/test_access_by_id.py": 64,
    "tests/security/test_access_scopes.py": 47,
    "tests/api/test_api_schemathesis.py": 43,
    "tests/security/test_probe6_pg_erasure.py": 42,
    "tests/ui/test_manage_view.py": 32,
    "tests/logfacts/test_fact_http.py": 30,
    "tests/cli/test_cli.py": 30,
    "tests/security/test_access_agent_tools.py": 30,
    "tests/security/test_access_routes.py": 28,
    "tests/llm/test_real_model.py": 27,
    "tests/contract/test_unicode_contract.py": 25,
    "tests/contract/test_bulk_write_identity.py": 24,
    "tests/bench/test_scale_bench.py": 24,
    "tests/security/test_provider_secrets.py": 24,
    "tests/service/test_concurrency.py": 22,
    "tests/logfacts/test_log_tenants.py": 21,
    "tests/security/test_probe6_hold_payload_only.py": 21,
    "tests/logfacts/test_export_roundtrip.py": 20,
    "tests/contract/test_controls_contract.py": 20,
    "tests/postgres/test_pg_recall_statements.py": 19,
    "tests/contract/test_memory_contract.py": 19,
    "tests/security/test_probe5_ann_scopes.py": 18,
    "tests/instantkv/test_capture.py": 17,
    "tests/llm/test_kickside_reconcile.py": 17,
    "tests/postgres/test_pg_bulk_index.py": 17,
    "tests/kip/test_kip_http.py": 16,
    "tests/service/test_sqlite_bulk_settings.py": 16,
    "tests/logfacts/test_cached_interfaces.py": 15,
    "tests/test_pgserver.py": 15,
    "tests/service/test_kickside_session_query.py": 14,
    "tests/cli/test_cli_control_chars.py": 13,
    "tests/recall/test_recall_identity.py": 13,
    "tests/cli/test_probe7_bounded_inputs.py": 13,
    "tests/logfacts/test_log_entries.py": 13,
    "tests/service/test_kickside_priority.py": 13,
    "tests/bench/test_intake_bench.py": 12,
    "tests/api/test_unknown_query_params.py": 12,
    "tests/security/test_probe6_import_namespace.py": 12,
    "tests/api/test_json_numbers.py": 11,
    "tests/agent/test_agent_mcp.py": 11,
    "tests/logfacts/test_cached_refresh.py": 11,
    "tests/unit/test_onnx_nbits.py": 11,
    "tests/security/test_malformed_input_local.py": 11,
    "tests/api/test_api_openapi_and_cli.py": 10,
    "tests/logfacts/test_fact_retention.py": 10,
    "tests/ui/test_backends.py": 9,
    "tests/agent/test_agent_loop.py": 9,
    "tests/contract/test_scope_ops_interfaces.py": 9,
    "tests/postgres/test_postgres_store.py": 9,
    "tests/security/test_probe6_hold_delete_memory.py": 9,
    "tests/instantkv/test_commands.py": 8,
    "tests/api/test_probe7_no_store.py": 8,
    "tests/api/test_api_server.py": 8,
    "tests/bench/test_locomo_bench.py": 8,
}


def _file(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    first = {}
    for index, item in enumerate(items):
        first.setdefault(_file(item), index)
    items.sort(key=lambda item: (-FILE_SECONDS.get(_file(item), 0.0), first[_file(item)]))

"""Slowest test files first (registered by tests/conftest.py through ``pytest_plugins``).

``make test`` runs ``pytest -n 2 --dist loadfile --no-loadscope-reorder``: each xdist worker
takes whole files, in collection order. By default xdist would order files by their number
of tests, which puts the files with a few slow tests (real servers, subprocesses) last, and
one worker then runs them alone while the other is idle. Here the files measured slowest
come first (longest-processing-time-first scheduling), every other file keeps its place
after them, and the tests inside a file keep their order.

``FILE_SECONDS``: seconds per file (``--durations=0``, setup + call + teardown summed) for
the files over 8 s, from ``make test`` on main 356d066 (2 workers, 917 s, load 1-3); only
their order matters. Refresh it when a file gets much slower.
"""

from __future__ import annotations

import pytest

FILE_SECONDS: dict[str, float] = {
    "tests/security/test_malformed_input.py": 97,
    "tests/instantkv/test_product_smoke.py": 89,
    "tests/api/test_api_schemathesis.py": 81,
    "tests/ui/test_manage_view.py": 60,
    "tests/security/test_access_by_id.py": 53,
    "tests/security/test_access_agent_tools.py": 49,
    "tests/security/test_access_scopes.py": 44,
    "tests/contract/test_controls_contract.py": 41,
    "tests/cli/test_cli.py": 38,
    "tests/logfacts/test_log_tenants.py": 38,
    "tests/security/test_probe6_pg_erasure.py": 30,
    "tests/logfacts/test_fact_http.py": 27,
    "tests/security/test_access_routes.py": 25,
    "tests/logfacts/test_cached_refresh.py": 25,
    "tests/llm/test_real_model.py": 24,
    "tests/bench/test_scale_bench.py": 22,
    "tests/contract/test_memory_contract.py": 22,
    "tests/logfacts/test_export_roundtrip.py": 21,
    "tests/service/test_kickside_session_query.py": 19,
    "tests/service/test_concurrency.py": 19,
    "tests/postgres/test_concurrency.py": 17,
    "tests/contract/test_bulk_write_identity.py": 17,
    "tests/security/test_probe6_hold_payload_only.py": 17,
    "tests/contract/test_scope_ops_interfaces.py": 16,
    "tests/llm/test_kickside_reconcile.py": 16,
    "tests/cli/test_cli_control_chars.py": 16,
    "tests/instantkv/test_capture.py": 15,
    "tests/postgres/test_pg_bulk_index.py": 15,
    "tests/contract/test_unicode_contract.py": 15,
    "tests/service/test_kickside_priority.py": 15,
    "tests/security/test_probe5_ann_scopes.py": 15,
    "tests/security/test_provider_secrets.py": 15,
    "tests/logfacts/test_cached_interfaces.py": 14,
    "tests/service/test_sqlite_bulk_settings.py": 14,
    "tests/logfacts/test_log_entries.py": 14,
    "tests/contract/test_export_snapshot_contract.py": 13,
    "tests/contract/test_probe8_profile_renders.py": 13,
    "tests/api/test_api_access.py": 12,
    "tests/postgres/test_pg_recall_statements.py": 12,
    "tests/logfacts/test_export_readme.py": 12,
    "tests/security/test_probe6_import_namespace.py": 12,
    "tests/logfacts/test_export_interfaces.py": 12,
    "tests/api/test_api_openapi_and_cli.py": 11,
    "tests/test_pgserver.py": 11,
    "tests/agent/test_agent_mcp.py": 11,
    "tests/cli/test_probe7_bounded_inputs.py": 11,
    "tests/postgres/test_postgres_store.py": 11,
    "tests/unit/test_onnx_nbits.py": 11,
    "tests/contract/test_forget_contract.py": 11,
    "tests/instantkv/test_commands.py": 11,
    "tests/security/test_probe6_hold_delete_memory.py": 11,
    "tests/contract/test_recall_contract.py": 11,
    "tests/recall/test_recall_identity.py": 10,
    "tests/kip/test_kip_http.py": 10,
    "tests/logfacts/test_fact_content.py": 10,
    "tests/ui/test_backends.py": 10,
    "tests/agent/test_agent_loop.py": 10,
    "tests/bench/test_intake_bench.py": 9,
    "tests/recall/test_fts_ranked_first.py": 9,
    "tests/service/test_kickside_maintenance.py": 9,
    "tests/intake/test_intake.py": 9,
    "tests/api/test_api_server.py": 8,
    "tests/contract/test_bulk_search_identity.py": 8,
    "tests/logfacts/test_fact_retention.py": 8,
}


def _file(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    first = {}
    for index, item in enumerate(items):
        first.setdefault(_file(item), index)
    items.sort(key=lambda item: (-FILE_SECONDS.get(_file(item), 0.0), first[_file(item)]))

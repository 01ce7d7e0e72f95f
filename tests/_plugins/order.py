"""Slowest test files first (registered by tests/conftest.py through ``pytest_plugins``).

``make test`` runs ``pytest -n 2 --dist loadfile --no-loadscope-reorder``: each xdist worker
takes whole files, in collection order. By default xdist would order files by their number
of tests, which puts the files with a few slow tests (real servers, subprocesses) last, and
one worker then runs them alone while the other is idle. Here the files measured slowest
come first (longest-processing-time-first scheduling), every other file keeps its place
after them, and the tests inside a file keep their order.

``FILE_SECONDS``: wall seconds per file on 2 workers (``--durations=0``, setup + call +
teardown summed), measured on main 74d4a0f; refresh it when a file gets much slower.
"""

from __future__ import annotations

import pytest

FILE_SECONDS: dict[str, float] = {
}


def _file(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    first = {}
    for index, item in enumerate(items):
        first.setdefault(_file(item), index)
    items.sort(key=lambda item: (-FILE_SECONDS.get(_file(item), 0.0), first[_file(item)]))

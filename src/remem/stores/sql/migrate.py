"""Numbered migrations: each backend keeps its own ``NNN_name.sql`` files in a package."""

from __future__ import annotations

from importlib import resources


def migration_files(package: str) -> list[tuple[int, str, str]]:
    """(version, file name, SQL text) of every ``NNN_*.sql`` in ``package``, by version."""
    out = []
    for entry in resources.files(package).iterdir():
        name = entry.name
        if name.endswith(".sql") and name[:3].isdigit():
            out.append((int(name[:3]), name, entry.read_text(encoding="utf-8")))
    return sorted(out)

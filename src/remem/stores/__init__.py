"""Storage adapters: the only code with SQL. ``open_store(url)`` picks one by URL scheme."""

from __future__ import annotations

from pathlib import Path

from remem.errors import InvalidInput


def names_a_row(row_id: object) -> bool:
    """Whether a caller's id could name a stored row: a string without NUL (ids in every
    table are such strings). Lookups answer "not found" for anything else instead of
    sending a list, a number or a NUL to the driver."""
    return isinstance(row_id, str) and "\x00" not in row_id


def open_store(url: str | Path, **options):
    """Opens a store: a file path or ``sqlite:///path`` -> SQLiteStore;
    ``postgresql://`` -> PostgresStore (extra ``remem[postgres]``).

    Raises:
        InvalidInput: an unsupported URL scheme.
        ArtifactUnavailable: the backend's optional packages are not installed.
    """
    text = str(url)
    if text.startswith(("postgresql://", "postgres://")):
        from remem.stores.postgres import PostgresStore  # optional extra

        return PostgresStore(text, **options)
    if "://" in text and not text.startswith("sqlite://"):
        raise InvalidInput(f"Unsupported database URL {text!r}; use a file path, "
                           "sqlite:///path or postgresql://...", field="db")
    path = text.removeprefix("sqlite:///").removeprefix("sqlite://")
    from remem.stores.sqlite.store import SQLiteStore

    return SQLiteStore(path, **options)

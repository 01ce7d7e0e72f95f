"""PostgreSQL backend (extra ``remem[postgres]``: psycopg 3 with its pool, and pgvector).

Importing this package never fails: without the extra, constructing ``PostgresStore`` raises
``ArtifactUnavailable`` with the install hint.
"""

from __future__ import annotations

_REQUIRED = {"psycopg", "psycopg_pool", "pgvector", "psycopg_binary"}

try:
    from remem.stores.postgres.store import PostgresStore
except ImportError as _exc:
    if (_exc.name or "").split(".")[0] not in _REQUIRED:
        raise
    _MISSING = _exc.name

    class PostgresStore:  # type: ignore[no-redef]
        """Stand-in raising the install hint (the optional packages are missing)."""

        backend = "postgres"

        def __init__(self, url: str, **options: object) -> None:
            from remem.errors import ArtifactUnavailable

            raise ArtifactUnavailable(
                f"PostgreSQL support needs the package {_MISSING!r}: "
                "pip install 'remem[postgres]'", package=_MISSING)

__all__ = ["PostgresStore"]

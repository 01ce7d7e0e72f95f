"""PostgreSQL-only tests: one server per test session (per xdist worker), shared with every
directory; ``pg_url`` (a fresh database with no tables, per test) and ``pg_server`` come from
tests/_plugins/backends.py."""

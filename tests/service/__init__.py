"""Service-level tests (a package so basenames may repeat elsewhere, e.g. tests/postgres)."""

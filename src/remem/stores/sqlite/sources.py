"""Thin alias: the source log SQL is shared (:mod:`remem.stores.sql.sources`)."""

from remem.stores.sql.sources import COLUMNS, get, insert, run_head, verify, visible

__all__ = ["COLUMNS", "get", "insert", "run_head", "verify", "visible"]

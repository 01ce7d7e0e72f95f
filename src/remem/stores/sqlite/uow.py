"""The SQLite unit of work: one BEGIN IMMEDIATE transaction per decision.

Everything is the shared :class:`~remem.stores.sql.uow.SqlUnitOfWork`; erasure is
:mod:`remem.stores.sqlite.erasure`.
"""

from __future__ import annotations

import sqlite3

from remem.stores.sql.dialect import SQLITE
from remem.stores.sql.uow import SqlUnitOfWork
from remem.stores.sqlite import erasure


class SQLiteUnitOfWork(SqlUnitOfWork):
    """Transaction-scoped access to one memory. Created by ``SQLiteStore.unit_of_work``."""

    erasure = erasure

    def __init__(self, conn: sqlite3.Connection, memory_id: str) -> None:
        super().__init__(conn, memory_id, SQLITE)


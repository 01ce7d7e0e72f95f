"""The SQLite unit of work: one BEGIN IMMEDIATE transaction per decision.

Everything is the shared :class:`~remem.stores.sql.uow.SqlUnitOfWork`; erasure is
:mod:`remem.stores.sqlite.erasure`. A batch (``defer_inserts``, ``Writer.write_many``) raises
the connection's WAL checkpoint threshold and marks the unit of work ``bulk``;
``SQLiteStore.unit_of_work`` restores the normal threshold once the batch committed or
rolled back (``store.py``).
"""

from __future__ import annotations

import sqlite3

from remem.stores.sql.dialect import SQLITE
from remem.stores.sql.uow import SqlUnitOfWork
from remem.stores.sqlite import erasure

#: WAL pages a batch may leave before its commit checkpoints (512 MiB at 4 KiB pages), so a
#: bulk load checkpoints once per many batches: an index page dirtied by several batches is
#: copied into the database once, and fsync'd once (SQLite's normal threshold is 1000 pages,
#: about one checkpoint and one fsync per 512-item batch). ``SQLiteStore.unit_of_work``
#: restores ``NORMAL_WAL_AUTOCHECKPOINT_PAGES`` after the batch, so the next single write
#: checkpoints what the batches left.
BULK_WAL_AUTOCHECKPOINT_PAGES = 131_072
NORMAL_WAL_AUTOCHECKPOINT_PAGES = 1000


class SQLiteUnitOfWork(SqlUnitOfWork):
    """Transaction-scoped access to one memory. Created by ``SQLiteStore.unit_of_work``.

    Attributes:
        bulk: True once the unit of work holds a batch (``defer_inserts``).
    """

    erasure = erasure

    def __init__(self, conn: sqlite3.Connection, memory_id: str) -> None:
        super().__init__(conn, memory_id, SQLITE)
        self.bulk = False

    def defer_inserts(self) -> None:
        super().defer_inserts()
        self.bulk = True
        self.conn.execute(f"PRAGMA wal_autocheckpoint={BULK_WAL_AUTOCHECKPOINT_PAGES}")

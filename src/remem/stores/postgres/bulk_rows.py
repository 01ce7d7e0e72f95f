"""A batch's read-model and payload rows on PostgreSQL in one statement per table.

A batch (``Writer.write_many``) holds its read-model rows (items, key revisions, provenance)
and payloads until the unit of work settles or flushes them (``stores/sql/uow.py``). Sent as
``executemany`` (one Bind/Execute per row, even pipelined) every row costs the server a
statement and the client a parameter dump. Here each table's rows go in ONE statement:

- items, key revisions and payloads: ``INSERT ... SELECT ... FROM json_populate_recordset(
  <the rows as one JSON array>) ON CONFLICT ...`` with the per-row statement's conflict
  clause (the rows of one call are unique on the conflict key: the held saves keep one row
  per item and per key, payload ids are fresh), so the stored rows are the per-row path's
  (``tests/contract/test_bulk_write_identity.py``, ``tests/postgres/test_pg_bulk_rows.py``);
  one JSON text is formatted by the C encoder, where array parameters cost psycopg a Python
  call per element;
- provenance (plain inserts): ``COPY``.

Below :data:`BULK_FROM` rows the per-row statements run as before (one decision's rows).
Measured (20k bench items, ``bench/scale_pg.py``): server CPU 1.36 -> 0.99 ms per item.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql

from remem.stores.sql.dialect import Dialect
from remem.stores.sql.rows import ITEM_COLUMNS
from remem.stores.sql.uow import write_rows

#: From how many rows of one table a single statement replaces the per-row ones.
BULK_FROM = 16
_PAYLOAD_COLUMNS = ["memory_id", "payload_id", "item_id", "value", "quote", "salt",
                    "metadata", "fact", "tz_offset_min"]
#: The ``bytea`` columns of the tables written here (JSON carries them as hex text).
_BYTEA = {"salt"}
_REVISION_COLUMNS = ["memory_id", "scope", "key", "revision"]
_COPY_PROVENANCE = ("COPY provenance (memory_id, item_id, seq, source_id, source_role, "
                    "seen_at) FROM STDIN")


def insert_json_rows(conn: psycopg.Connection, table: str, columns: Sequence[str],
                  rows: Sequence[tuple], conflict: str) -> None:
    """``INSERT INTO table(columns) SELECT columns FROM json_populate_recordset(...)
    <conflict>``: the rows (tuples in ``columns`` order) in one statement, sent as one JSON
    array (the C JSON encoder formats it far faster than per-element array parameters; the
    table's row type gives each column its type, bytes travel as ``\\x`` hex)."""
    cols = [sql.Identifier(c) for c in columns]
    hexed = [i for i, c in enumerate(columns) if c in _BYTEA]
    data = json.dumps([dict(zip(columns, _hexed(r, hexed) if hexed else r, strict=True))
                       for r in rows], ensure_ascii=False)
    query = sql.SQL("INSERT INTO {t} ({c}) SELECT {c} FROM json_populate_recordset("
                    "NULL::{t}, %s::json) {x}").format(
        t=sql.Identifier(table), c=sql.SQL(", ").join(cols),
        x=sql.SQL(conflict))  # type: ignore[arg-type]  (module constants only)
    conn.execute(query, (data,))


def _hexed(row: tuple, at: list[int]) -> list[Any]:
    """The row with its ``bytea`` values as PostgreSQL's hex input (``\\x...``)."""
    out = list(row)
    for i in at:
        if out[i] is not None:
            out[i] = "\\x" + bytes(out[i]).hex()
    return out


def upsert_items(conn: psycopg.Connection, rows: Sequence[tuple]) -> None:
    """Item rows ``(memory_id, *ITEM_COLUMNS)``, unique by item id, inserted or replaced."""
    insert_json_rows(conn, "items", ["memory_id", *ITEM_COLUMNS], rows,
                  "ON CONFLICT (memory_id, item_id) DO UPDATE SET " + ", ".join(
                      f"{c} = excluded.{c}" for c in ITEM_COLUMNS if c != "item_id"))


def insert_payloads(conn: psycopg.Connection, rows: Sequence[tuple]) -> None:
    """Payload rows (``_INSERT_PAYLOAD``'s parameters), an existing payload id kept."""
    insert_json_rows(conn, "payloads", _PAYLOAD_COLUMNS, rows, "ON CONFLICT DO NOTHING")


def write_rows_bulk(conn: psycopg.Connection, dialect: Dialect, deletes: list[tuple],
                    upserts: list[tuple], forgotten: list[tuple], revisions: list[tuple],
                    cardinality: list[tuple], tombstones: list[tuple],
                    provenance: list[tuple]) -> None:
    """``stores.sql.uow.write_rows`` with the large kinds (items, revisions, provenance) in
    one statement each; the rest (deletes, cardinality, tombstones: rare) per row, first.
    Each table is written by one kind only, so the order across kinds does not matter beyond
    the forgotten items' provenance going before the new provenance."""
    big = [len(upserts) >= BULK_FROM, len(revisions) >= BULK_FROM,
           len(provenance) >= BULK_FROM]
    write_rows(conn, dialect, deletes, [] if big[0] else upserts, forgotten,
               [] if big[1] else revisions, cardinality, tombstones,
               [] if big[2] else provenance)
    if big[0]:
        upsert_items(conn, upserts)
    if big[1]:
        insert_json_rows(conn, "key_revisions", _REVISION_COLUMNS, revisions,
                      "ON CONFLICT (memory_id, scope, key) DO UPDATE SET revision = "
                      "excluded.revision")
    if big[2]:
        with conn.cursor() as cur, cur.copy(_COPY_PROVENANCE) as copy:
            for row in provenance:
                copy.write_row(row)


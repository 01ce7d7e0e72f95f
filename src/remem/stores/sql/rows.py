"""Row <-> record conversion shared by the SQLite and PostgreSQL stores."""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

from remem.domain.fold import ItemRecord
from remem.stores.sql.dialect import Dialect

ITEM_COLUMNS = [f.name for f in dataclasses.fields(ItemRecord)]
_BOOL = {"correction", "legal_hold"}
#: Inserts or replaces an item row (same text on both backends).
UPSERT_ITEM = (f"INSERT INTO items(memory_id, {', '.join(ITEM_COLUMNS)}) "
               f"VALUES ({', '.join('?' * (len(ITEM_COLUMNS) + 1))}) "
               "ON CONFLICT (memory_id, item_id) DO UPDATE SET "
               + ", ".join(f"{c} = excluded.{c}" for c in ITEM_COLUMNS if c != "item_id"))


def item_to_row(memory_id: str, rec: ItemRecord, dialect: Dialect | None = None) -> tuple:
    """Row parameters of an item (booleans as the dialect stores them; default SQLite 0/1)."""
    vals = [getattr(rec, c) for c in ITEM_COLUMNS]
    flag = dialect.flag if dialect is not None else int
    vals = [flag(v) if c in _BOOL else v for c, v in zip(ITEM_COLUMNS, vals, strict=True)]
    return (memory_id, *vals)


def row_to_item(row: Any) -> ItemRecord:
    data = {c: row[c] for c in ITEM_COLUMNS}
    for c in _BOOL:
        data[c] = bool(data[c])
    return ItemRecord(**data)


class RecallRow(NamedTuple):
    """The columns of an item that recall filters and renders (a light ``ItemRecord``)."""

    item_id: str
    scope: str
    key: str
    kind: str
    cardinality: str
    status: str
    revision: int
    valid_at: str
    invalid_at: str | None
    valid_until: str | None
    payload_id: str
    source_id: str | None
    created_at: str  # recorded time (the ``recorded_at`` filter window)

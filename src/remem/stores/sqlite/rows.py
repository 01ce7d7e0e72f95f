"""Row <-> record conversion shared by the SQLite and PostgreSQL stores."""

from __future__ import annotations

import dataclasses
from typing import Any

from remem.domain.fold import ItemRecord

ITEM_COLUMNS = [f.name for f in dataclasses.fields(ItemRecord)]
_BOOL = {"correction", "legal_hold"}


def item_to_row(memory_id: str, rec: ItemRecord) -> tuple:
    vals = [getattr(rec, c) for c in ITEM_COLUMNS]
    vals = [int(v) if c in _BOOL else v for c, v in zip(ITEM_COLUMNS, vals, strict=True)]
    return (memory_id, *vals)


def row_to_item(row: Any) -> ItemRecord:
    data = {c: row[c] for c in ITEM_COLUMNS}
    for c in _BOOL:
        data[c] = bool(data[c])
    return ItemRecord(**data)

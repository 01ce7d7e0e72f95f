"""Thin alias: item rows moved to :mod:`remem.stores.sql.rows` (shared by both backends)."""

from remem.stores.sql.rows import ITEM_COLUMNS, item_to_row, row_to_item

__all__ = ["ITEM_COLUMNS", "item_to_row", "row_to_item"]

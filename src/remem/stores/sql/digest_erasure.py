"""Which digests an erasure of sources touches (both backends; ``domain.digests``).

A digest joins the live texts of one scope over a window of a run: the scope of the source
that completes the window. Erasing a source therefore erases exactly the digests of the
windows containing it that its own scope completed (:func:`holding_docs`); another scope's
digest of the same window never held its text and stays. The service then derives those
windows again from their remaining live sources (``service.digests.reindex_windows``), and
the erasure check compares what is indexed with what the rows now derive
(:func:`derived_digests`): a digest equal to that holds no erased text.

Functions take the driver connection of the caller's transaction; the dialect follows from
it. Reads only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from remem.domain.digests import (
    completing_positions,
    digest_doc_id,
    holding_windows,
    parse_digest_doc,
    window_digests,
    window_range,
)
from remem.stores.sql.dialect import dialect_for
from remem.stores.sql.sources import run_windows

_CHUNK = 500


def erased_rows(conn: Any, memory_id: str, source_ids: Sequence[str]
                ) -> list[dict[str, Any]]:
    """``run_id``, ``sequence``, ``scope`` of the sources (redacted or not)."""
    d = dialect_for(conn)
    out: list[dict[str, Any]] = []
    for i in range(0, len(source_ids), _CHUNK):
        test, args = d.any_of("source_id", list(source_ids[i:i + _CHUNK]))
        out.extend(dict(r) for r in d.execute(
            conn, f"SELECT run_id, sequence, scope FROM sources WHERE memory_id=? AND {test}",
            (memory_id, *args)).fetchall())
    return out


def holding_docs(conn: Any, memory_id: str, source_ids: Sequence[str]) -> list[str]:
    """Document ids of the digests that hold (or held) the text of any of the sources,
    sorted: the windows containing one that a source of its scope completed."""
    if not source_ids:
        return []
    erased = erased_rows(conn, memory_id, source_ids)
    ends = completing_positions(erased)
    if not ends:
        return []
    rows = run_windows(conn, memory_id, [(run, seq, seq) for run, seq in ends])
    scope_at = {(r["run_id"], int(r["sequence"])): r["scope"] for r in rows}
    return [digest_doc_id(run, k) for run, k in holding_windows(erased, scope_at)]


def derived_digests(conn: Any, memory_id: str, doc_ids: Sequence[str]
                    ) -> dict[str, tuple[str, str]]:
    """``{doc id: (scope, text)}``: the digests the sources' current rows derive for those
    windows (redacted turns left out); a window without one is absent."""
    windows = sorted({parse_digest_doc(d) for d in doc_ids})
    if not windows:
        return {}
    rows = run_windows(conn, memory_id, [(run, *window_range(k)) for run, k in windows])
    return {doc: (scope, text) for doc, scope, text in window_digests(rows, windows)}

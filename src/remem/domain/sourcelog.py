"""The source log (Log+Facts seed LogEntry): hash chain per (memory, run), pure functions.

Each captured input is one entry with a ``sequence`` (1, 2, 3, ... per run), ``prev_hash``
(the previous entry's hash; the zero hash first) and

    entry_hash = sha256(bytes.fromhex(prev_hash) || canonical_json(entry_body(entry)))

The body holds ids, times, enums and ``digest = sha256(salt || canonical_json(text))`` - a
*salted* digest of the text, never the text. Erasing a source deletes its text and salt; the
chain still verifies (the digest stays) and the digest cannot be brute-forced without the salt.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from remem.domain.canonical import ZERO_HASH, canonical_json, salted_digest, sha256_hex
from remem.errors import InvalidInput

BODY_FIELDS = ("memory", "run_id", "sequence", "source_id", "scope", "kind", "role", "actor",
               "occurred_at", "recorded_at", "digest")
ITEM_ID_PREFIX = "itm_"
"""Every item id starts with it (``decision``); source ids may not, so the two never collide in
the search documents, where a source's document id is its source id."""
_KIND = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
_RUN = re.compile(r"^[^\s]{1,128}$")


def entry_body(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The hashed part of an entry."""
    return {k: entry[k] for k in BODY_FIELDS}


def entry_hash(prev_hash: str, entry: Mapping[str, Any]) -> str:
    return sha256_hex(bytes.fromhex(prev_hash) + canonical_json(entry_body(entry)))


def text_digest(salt: bytes, text: str) -> str:
    """The salted digest a source entry commits to."""
    return salted_digest(salt, text)


def source_doc_id(source_id: str) -> str:
    """Search-document id of a source: the source id itself (items use their item id), so
    erasure deletes a source's full-text row and vector by its source id."""
    return source_id


def is_item_doc(doc_id: str) -> bool:
    """Whether a search document is an item (else it is a source)."""
    return doc_id.startswith(ITEM_ID_PREFIX)


@dataclass(frozen=True)
class SourceBreak:
    """The first broken link of a run's chain."""

    run_id: str
    sequence: int
    source_id: str
    reason: str


def verify_run(rows: Iterable[Mapping[str, Any]]) -> SourceBreak | None:
    """Walks one run's entries in sequence order; returns the first broken link or None.

    Each row has the body fields plus ``prev_hash``, ``entry_hash`` and, unless erased,
    ``salt`` and ``text`` (whose salted digest must equal ``digest``).
    """
    prev, expected = ZERO_HASH, 1
    for r in rows:
        where = (r["run_id"], r["sequence"], r["source_id"])
        if r["sequence"] != expected:
            return SourceBreak(*where, f"expected sequence {expected}, found {r['sequence']}")
        if r["prev_hash"] != prev:
            return SourceBreak(*where, "prev_hash does not match the previous entry's hash")
        if entry_hash(prev, r) != r["entry_hash"]:
            return SourceBreak(*where, "entry_hash does not match the entry's content")
        if r.get("text") is not None and r.get("salt") is not None:
            if text_digest(bytes(r["salt"]), r["text"]) != r["digest"]:
                return SourceBreak(*where, "text does not match the committed digest")
        elif r.get("text") is not None:
            return SourceBreak(*where, "text is present but its salt was removed")
        prev = r["entry_hash"]
        expected += 1
    return None


def check_source_fields(*, kind: str, run_id: str, source_id: str | None = None) -> None:
    """Validates a source kind (``user-message``), run id and source id.

    Raises:
        InvalidInput: kind not lower-case ``[a-z0-9_-]`` (<= 64), run id empty/with spaces, or
            a source id starting with the reserved item prefix ``itm_``.
    """
    if isinstance(source_id, str) and source_id.startswith(ITEM_ID_PREFIX):
        raise InvalidInput(f"source id {source_id!r} starts with {ITEM_ID_PREFIX!r}, which is "
                           "reserved for item ids; choose another id.", field="source_id")
    if not isinstance(kind, str) or not _KIND.match(kind):
        raise InvalidInput(f"source kind {kind!r} must be lower-case letters, digits, '-' or "
                           "'_' (at most 64), e.g. 'user-message'.", field="kind")
    if not isinstance(run_id, str) or not _RUN.match(run_id):
        raise InvalidInput(f"run_id {run_id!r} must be 1-128 characters without spaces.",
                           field="run_id")


def check_sources(rows: list[dict[str, Any]], recorded: Mapping[str, Mapping[str, Any]]
                  ) -> dict[str, Any]:
    """Walks every run's chain (rows ordered by run, sequence) and cross-checks each row
    against the ledger's ``source.recorded`` event (``recorded``: source id -> event data).

    Returns:
        ``{"sources_ok": bool, "sources": n, "sources_broken": None | {run_id, sequence,
        source_id, reason}}`` naming the first broken link.
    """
    runs: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        assert r is not None
        runs.setdefault(r["run_id"], []).append(r)
    broken: dict[str, Any] | None = None
    for run_id in sorted(runs):
        brk = verify_run(runs[run_id])
        if brk is not None:
            broken = {"run_id": brk.run_id, "sequence": brk.sequence,
                      "source_id": brk.source_id, "reason": brk.reason}
            break
    if broken is None:
        seen = set()
        for r in rows:
            assert r is not None
            seen.add(r["source_id"])
            ev = recorded.get(r["source_id"])
            if ev is None or ev["entry_hash"] != r["entry_hash"] or ev["sequence"] != r["sequence"]:
                broken = {"run_id": r["run_id"], "sequence": r["sequence"],
                          "source_id": r["source_id"],
                          "reason": "entry does not match its source.recorded ledger event"}
                break
        missing = sorted(set(recorded) - seen)
        if broken is None and missing:
            ev = recorded[missing[0]]
            broken = {"run_id": ev["run_id"], "sequence": ev["sequence"],
                      "source_id": missing[0],
                      "reason": "the ledger records this source but its row is missing"}
    return {"sources_ok": broken is None, "sources": len(rows), "sources_broken": broken}

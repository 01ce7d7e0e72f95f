"""The source log (Log+Facts seed LogEntry): hash chain per (memory, run), pure functions.

Entries written now are schema LogEntries (``domain.logentry``: sequence from 0, ``sha256:``
hashes over the schema's fields with a salted payload digest). Entries written before
(legacy, ``log_format`` 1) keep the rule below and still verify; a run may continue from
legacy entries into schema entries. The legacy rule: each captured input is one entry with
a ``sequence`` (1, 2, 3, ... per run), ``prev_hash`` (the previous entry's hash; the zero
hash first) and

    entry_hash = sha256(bytes.fromhex(prev_hash) || canonical_json(entry_body(entry)))

The body holds ids, times, enums and ``digest = sha256(salt || canonical_json(text))`` - a
*salted* digest of the text, never the text. Erasing a source deletes its text and salt; the
chain still verifies (the digest stays) and the digest cannot be brute-forced without the salt.
"""

from __future__ import annotations

import json
import unicodedata
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from remem.domain.canonical import ZERO_HASH, canonical_json, salted_digest, sha256_hex
from remem.domain.logentry import (
    IMPORTED_FORMAT,
    LEGACY_FORMAT,
    SCHEMA_FORMAT,
    ZERO_LOG_HASH,
    content_hash,
    log_entry_hash,
    payload_digest,
    payload_role,
    payload_text,
    prefixed,
)
from remem.errors import InvalidInput

BODY_FIELDS = ("memory", "run_id", "sequence", "source_id", "scope", "kind", "role", "actor",
               "occurred_at", "recorded_at", "digest")
ITEM_ID_PREFIX = "itm_"
DIGEST_PREFIX = ITEM_ID_PREFIX + "dg:"
"""Every item id starts with it (``decision``); source ids may not, so the two never collide in
the search documents, where a source's document id is its source id."""
_KIND = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
_RUN = re.compile(r"^[^\s]{1,300}$")  # 128 for callers + a scoped token's scope prefix


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
    """Whether a search document is an item (else it is a source, or an engine-made digest:
    ``domain.digests``, whose ids take the reserved prefix ``itm_dg:``)."""
    return doc_id.startswith(ITEM_ID_PREFIX) and not doc_id.startswith(DIGEST_PREFIX)


@dataclass(frozen=True)
class SourceBreak:
    """The first broken link of a run's chain."""

    run_id: str
    sequence: int
    source_id: str
    reason: str


def verify_run(rows: Iterable[Mapping[str, Any]]) -> SourceBreak | None:
    """Walks one run's entries in sequence order; returns the first broken link or None.
    Never raises: a field of the wrong type or an unreadable hash is a broken link too.

    Each row has ``log_format`` (``domain.logentry``: 1 legacy, 2 schema, 3 imported; missing
    = 1), the hashed fields, ``prev_hash``, ``entry_hash`` and, unless erased, ``salt`` and
    ``text`` / ``payload`` (whose salted digest must equal ``digest``). A run starts with a
    legacy entry at sequence 1 and the bare zero hash, or with a schema entry at sequence 0
    and ``sha256:`` + 64 zeros; schema entries may follow legacy ones (each links to the
    previous hash with the ``sha256:`` prefix), never the other way round.
    """
    last: Mapping[str, Any] | None = None
    for r in rows:
        where = (r.get("run_id"), r.get("sequence"), r.get("source_id"))
        try:
            reason = _check_link(r, last) or _check_entry(r)
        except Exception as exc:  # noqa: BLE001 - verify reports damage, it never crashes
            reason = f"entry cannot be hashed ({type(exc).__name__})"
        if reason is not None:
            return SourceBreak(*where, reason)  # type: ignore[arg-type]
        last = r
    return None


def _format(r: Mapping[str, Any]) -> Any:
    return r.get("log_format") or LEGACY_FORMAT


def _check_link(r: Mapping[str, Any], last: Mapping[str, Any] | None) -> str | None:
    """Sequence and prev_hash of ``r`` against the previous entry (None: the first)."""
    fmt = _format(r)
    if fmt not in (LEGACY_FORMAT, SCHEMA_FORMAT, IMPORTED_FORMAT):
        return f"unknown entry format {fmt!r}"
    seq = r.get("sequence")
    if isinstance(seq, bool) or not isinstance(seq, int):
        return f"sequence {seq!r} is not an integer"
    for name in ("prev_hash", "entry_hash", "digest"):
        if not isinstance(r.get(name), str):
            return f"field {name!r} is missing or not text"
    legacy = fmt == LEGACY_FORMAT
    if last is None:
        expected, prev = (1, ZERO_HASH) if legacy else (0, ZERO_LOG_HASH)
    else:
        if legacy and _format(last) != LEGACY_FORMAT:
            return "a legacy entry follows a schema entry"
        expected = last["sequence"] + 1
        prev = last["entry_hash"] if legacy else prefixed(last["entry_hash"])
    if seq != expected:
        return f"expected sequence {expected}, found {seq}"
    if r["prev_hash"] != prev:
        return "prev_hash does not match the previous entry's hash"
    return None


def _check_entry(r: Mapping[str, Any]) -> str | None:
    """The entry's own hash and, unless erased, its text or payload against the digest."""
    fmt = _format(r)
    if fmt == LEGACY_FORMAT:
        if entry_hash(r["prev_hash"], r) != r["entry_hash"]:
            return "entry_hash does not match the entry's content"
        return _check_text(r)
    payload = r.get("payload")
    if payload is not None:
        value = json.loads(payload) if isinstance(payload, (str, bytes)) else payload
        if r.get("content_hash") is not None and content_hash(value) != r["content_hash"]:
            return "contentHash does not match the payload"
        if r.get("text") is not None and payload_text(value) != r["text"]:
            return "text does not match the payload"
        if payload_role(value, r.get("kind")) != r.get("role"):
            return "role does not match the payload and kind"
    if fmt == IMPORTED_FORMAT:
        return None  # its salt stayed with the exporter: links and contentHash only
    if log_entry_hash(r) != r["entry_hash"]:
        return "entry_hash does not match the entry's content"
    salt = r.get("salt")
    if payload is not None and salt is not None:
        if not isinstance(salt, (bytes, bytearray, memoryview)):
            return "salt has the wrong type"
        if payload_digest(bytes(salt), value) != r["digest"]:
            return "payload does not match the committed digest"
    elif payload is not None or r.get("text") is not None:
        return "payload is present but its salt was removed"
    return None


def _check_text(r: Mapping[str, Any]) -> str | None:
    text, salt = r.get("text"), r.get("salt")
    if text is not None and salt is not None:
        if not isinstance(text, str) or not isinstance(salt, (bytes, bytearray, memoryview)):
            return "text or salt has the wrong type"
        if text_digest(bytes(salt), text) != r["digest"]:
            return "text does not match the committed digest"
    elif text is not None:
        return "text is present but its salt was removed"
    return None


_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})


def check_source_fields(*, kind: str, run_id: str, source_id: str | None = None) -> None:
    """Validates a source kind (``user-message``), run id and source id.

    Raises:
        InvalidInput: kind not lower-case ``[a-z0-9_-]`` (<= 64), run id empty/with spaces, or
            a source id starting with the reserved item prefix ``itm_``.
    """
    for field, name in (("source_id", source_id), ("run_id", run_id)):
        if isinstance(name, str) and any(unicodedata.category(c) in _INVISIBLE for c in name):
            raise InvalidInput(f"{field} contains a control or invisible format character; "
                               "use printable characters only.", field=field)
    if isinstance(source_id, str) and source_id.startswith(ITEM_ID_PREFIX):
        raise InvalidInput(f"source id {source_id!r} starts with {ITEM_ID_PREFIX!r}, which is "
                           "reserved for item ids; choose another id.", field="source_id")
    if not isinstance(kind, str) or not _KIND.match(kind):
        raise InvalidInput(f"source kind {kind!r} must be lower-case letters, digits, '-' or "
                           "'_' (at most 64), e.g. 'user-message'.", field="kind")
    if not isinstance(run_id, str) or not _RUN.match(run_id):
        raise InvalidInput(f"run_id {run_id!r} must be 1-128 characters without spaces.",
                           field="run_id")


def recorded_entries(ledger_data: Iterable[Any]) -> dict[str, Mapping[str, Any]]:
    """``source.recorded`` event data by source id, from the ledger's stored data (JSON text
    or dicts). Data that does not parse is skipped: ``domain.ledger.verify_chain`` reports it,
    and the source it named then shows as unmatched."""
    out: dict[str, Mapping[str, Any]] = {}
    for data in ledger_data:
        try:
            d = json.loads(data) if isinstance(data, (str, bytes, bytearray)) else data
            if isinstance(d, Mapping) and isinstance(d.get("source_id"), str):
                out[d["source_id"]] = d
        except ValueError:
            continue
    return out


def check_sources(rows: list[Mapping[str, Any]], recorded: Mapping[str, Mapping[str, Any]],
                  *, limit: int = 100) -> dict[str, Any]:
    """Walks every run's chain (rows ordered by run, sequence) and cross-checks each row
    against the ledger's ``source.recorded`` event (``recorded``: source id -> event data,
    see ``recorded_entries``). Never raises.

    Returns:
        ``{"sources_ok": bool, "sources": n, "sources_broken": None | {run_id, sequence,
        source_id, reason}, "sources_breaks": [...]}``: the first broken link, and every one
        (each run's first break, then rows of intact runs that do not match the ledger, then
        ledger events without a row; at most ``limit``).
    """
    runs: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        runs.setdefault(str(r.get("run_id")), []).append(r)
    breaks: list[dict[str, Any]] = []
    for run_id in sorted(runs):
        brk = verify_run(runs[run_id])
        if brk is not None:
            breaks.append({"run_id": brk.run_id, "sequence": brk.sequence,
                           "source_id": brk.source_id, "reason": brk.reason})
    broken_runs = {str(b["run_id"]) for b in breaks}
    breaks += _unmatched([r for r in rows if str(r.get("run_id")) not in broken_runs], rows,
                         recorded)
    return {"sources_ok": not breaks, "sources": len(rows),
            "sources_broken": breaks[0] if breaks else None, "sources_breaks": breaks[:limit]}


def _unmatched(rows: list[Mapping[str, Any]], every_row: list[Mapping[str, Any]],
               recorded: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows without their ledger event, then ledger events without a row."""
    out = []
    for r in rows:
        ev = recorded.get(r.get("source_id"))  # type: ignore[arg-type]
        if ev is None or ev.get("entry_hash") != r.get("entry_hash") \
                or ev.get("sequence") != r.get("sequence"):
            out.append({"run_id": r.get("run_id"), "sequence": r.get("sequence"),
                        "source_id": r.get("source_id"),
                        "reason": "entry does not match its source.recorded ledger event"})
    seen = {r.get("source_id") for r in every_row}
    for source_id in sorted(set(recorded) - seen):
        ev = recorded[source_id]
        out.append({"run_id": ev.get("run_id"), "sequence": ev.get("sequence"),
                    "source_id": source_id,
                    "reason": "the ledger records this source but its row is missing"})
    return out

"""The ledger hash chain, pure: build stored events from decided events, and verify rows.

A stored event is ``{memory, seq, type, data, actor, at, prev_hash, hash}`` with

    hash = sha256(bytes.fromhex(prev_hash) || canonical_json({memory, seq, type, data, actor, at}))

and the zero hash as the first ``prev_hash`` (DESIGN.md "Storage"). ``chain`` is the only code
that assigns sequence numbers and hashes; stores insert what it returns. ``verify_chain`` walks
rows as a store reads them (``data`` may still be the raw JSON text) and never raises: every
kind of damage - a changed byte, JSON that no longer parses, a missing, duplicated or
reordered sequence, a wrong ``prev_hash``, a field of the wrong type - is a ``ChainBreak``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from remem.domain.canonical import ZERO_HASH, canonical_json, sha256_hex
from remem.domain.events import Event
from remem.domain.labels import LabelKeys
from remem.errors import HeadMoved

BODY_FIELDS = ("memory", "seq", "type", "data", "actor", "at")
#: How many broken links ``chain_breaks`` lists at most (a wholesale rewrite breaks them all).
MAX_BREAKS = 100


class Head(NamedTuple):
    """The last event of a ledger: its seq and hash ((0, zero hash) when empty)."""

    seq: int
    hash: str


EMPTY = Head(0, ZERO_HASH)


def event_body(event: Mapping[str, Any]) -> dict[str, Any]:
    """The hashed part of a ledger event: memory, seq, type, data, actor, at."""
    return {k: event[k] for k in BODY_FIELDS}


def event_hash(prev_hash: str, event: Mapping[str, Any]) -> str:
    """``sha256(bytes.fromhex(prev_hash) || canonical_json(event_body(event)))`` as hex."""
    return sha256_hex(bytes.fromhex(prev_hash) + canonical_json(event_body(event)))


def chain(events: Sequence[Event], head: tuple[int, str], *, memory_id: str, actor: str,
          at: str, expected_seq: int | None = None,
          labels: LabelKeys | None = None) -> list[dict[str, Any]]:
    """Numbers and hashes ``events`` after ``head``; returns the stored events to insert.

    Args:
        events: decided, text-free events (``Event``), in order.
        head: (seq, hash) of the ledger's last event, as read in the writer's transaction.
        memory_id: the memory whose ledger this is.
        actor: who wrote them (``owner``, ``agent``, a principal's name).
        at: ISO-8601 UTC time of the write (``timefmt.to_iso``), read by the service.
        expected_seq: the head the decision was made at; None skips the check.
        labels: the memory's label keys; a keyed one seals ``scope``/``key`` into refs
            (``domain.labels``, data version 2). None or unkeyed: raw labels (version 1).

    Returns:
        One dict per event: memory, seq, type, data (wire data with ``v``), actor, at,
        prev_hash, hash, and ``labels`` ({ref: [field, label]}, not hashed) when the data
        was sealed: what the store keeps in its erasable labels table.

    Raises:
        HeadMoved: ``head`` is not at ``expected_seq`` (retryable: decide again).
    """
    seq, prev = head
    if expected_seq is not None and seq != expected_seq:
        raise HeadMoved(f"Ledger head moved from {expected_seq} to {seq}; decide again.",
                        expected_seq=expected_seq, head_seq=seq)
    stored = []
    for ev in events:
        seq += 1
        data, named = (labels.seal(ev.wire_data()) if labels is not None
                       else (ev.wire_data(), {}))
        rec: dict[str, Any] = {"memory": memory_id, "seq": seq, "type": ev.type.value,
                               "data": data, "actor": actor, "at": at}
        rec["prev_hash"] = prev
        rec["hash"] = prev = event_hash(prev, rec)
        if named:
            rec["labels"] = named
        stored.append(rec)
    return stored


def encode_data(data: Mapping[str, Any]) -> str:
    """The stored text of an event's data (sorted keys, ASCII): the on-disk format."""
    return json.dumps(data, sort_keys=True)


@dataclass(frozen=True)
class ChainBreak:
    """A broken link: the seq the row claims (None when unreadable), its 1-based position in
    the walk (rows in seq order) and what is wrong."""

    seq: int | None
    reason: str
    position: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "position": self.position, "reason": self.reason}


def verify_chain(rows: Iterable[Mapping[str, Any]]) -> ChainBreak | None:
    """The first broken link of a ledger, or None when every link holds. Never raises.

    Args:
        rows: events in the order the store returns them (by seq); each has memory, seq,
            type, data (a dict, or the stored JSON text), actor, at, prev_hash, hash.
    """
    breaks = chain_breaks(rows, limit=1)
    return breaks[0] if breaks else None


def chain_breaks(rows: Iterable[Mapping[str, Any]], *, limit: int = MAX_BREAKS
                 ) -> list[ChainBreak]:
    """Every broken link (at most ``limit`` listed; the walk still reads every row), in walk
    order. Never raises.

    After a break the walk re-synchronises on the row's own claims (its seq and hash), so
    one altered event gives one break (plus the next event's ``prev_hash`` when the altered
    row's hash was recomputed), and independent damage further on is reported too.
    """
    out: list[ChainBreak] = []
    prev, expected = ZERO_HASH, 1
    for position, row in enumerate(rows, start=1):
        reason, seq = _check_row(row, prev, expected)
        if reason is not None and len(out) < limit:
            out.append(ChainBreak(seq, reason, position))
            if limit == 1:
                break
        prev = row.get("hash") if isinstance(row.get("hash"), str) else prev
        expected = (seq + 1) if isinstance(seq, int) else expected + 1
    return out


def _check_row(row: Mapping[str, Any], prev: str, expected: int
               ) -> tuple[str | None, int | None]:
    """(reason or None, the row's seq when it is an integer)."""
    try:
        seq = row.get("seq")
        if isinstance(seq, bool) or not isinstance(seq, int):
            return f"seq {seq!r} is not an integer", None
        if seq < expected:
            return (f"expected seq {expected}, found {seq} (duplicated or out of order)", seq)
        if seq > expected:
            missing = "seq" if seq == expected + 1 else "seqs"
            return (f"expected seq {expected}, found {seq} ({missing} {expected}"
                    f"{'' if seq == expected + 1 else f'-{seq - 1}'} missing)", seq)
        event = dict(row)
        data = event.get("data")
        if isinstance(data, (str, bytes, bytearray)):
            try:
                event["data"] = json.loads(data)
            except ValueError:
                return "event data is not valid JSON (altered bytes)", seq
        if not isinstance(event["data"], dict):
            return "event data is not a JSON object", seq
        for name in ("memory", "type", "actor", "at", "prev_hash", "hash"):
            if not isinstance(event.get(name), str):
                return f"field {name!r} is missing or not text", seq
        if event["prev_hash"] != prev:
            return "prev_hash does not match the previous event's hash", seq
        if event_hash(prev, event) != event["hash"]:
            return "hash does not match the event's content", seq
    except Exception as exc:  # noqa: BLE001 - verify reports damage, it never crashes
        return f"event cannot be hashed ({type(exc).__name__})", _int_or_none(row)
    return None, seq


def _int_or_none(row: Mapping[str, Any]) -> int | None:
    try:
        seq = row.get("seq")
    except Exception:  # noqa: BLE001
        return None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None

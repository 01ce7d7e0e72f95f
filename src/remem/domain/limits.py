"""Input limits and validation (instantKV "Limits and recovery" table).

``validate_candidate`` raises ``InvalidInput`` naming the field, the problem and what to do;
callers validate everything before writing anything.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from remem.domain.canonical import normalize_text
from remem.domain.jsondoc import check_json_text, has_lone_surrogate, lone_surrogate
from remem.domain.model import Candidate, Kind
from remem.domain.timefmt import to_iso
from remem.errors import InvalidInput

MAX_SCOPE_BYTES = 128
MAX_KEY_BYTES = 128
MAX_VALUE_BYTES = 1024
#: Inline value limit of a fact written through ``remember_fact`` (Log+Facts: "keep content
#: <= ~64 KB inline; larger goes to blob"); instantKV slots keep MAX_VALUE_BYTES.
MAX_FACT_VALUE_BYTES = 65_536
#: Largest fact content remem accepts at all (stored in a blob above MAX_FACT_VALUE_BYTES).
MAX_BLOB_BYTES = 64 * 1024 * 1024
#: Deepest container nesting of a value (``[[1]]`` is 2 deep); checked before anything
#: recursive looks at the value.
MAX_VALUE_DEPTH = 32
MAX_QUOTE_BYTES = 512
MAX_SOURCE_ID_BYTES = 256
#: A stored source id: a caller's id plus a scoped token's ``<scope>/`` namespace prefix.
MAX_STORED_SOURCE_ID_BYTES = MAX_SOURCE_ID_BYTES + 129
MAX_APPLY_BYTES = 65_536
MAX_PROPOSALS = 8
MAX_QUERY_BYTES = 16_384
_WORD_SPLIT = re.compile(r"[\W_]+")
_WORD_CHAR = re.compile(r"[^\W_]")
MAX_OBSERVE_BYTES = 16_384
#: Pinned profile renders kept per memory (one per activation, scope set and budget). Every
#: activation (``Session.activate``, ``profile(activation_id=...)`` by any reader) stores
#: one; past this many the oldest are deleted down to :data:`KEPT_PROFILE_RENDERS` (an
#: evicted activation renders afresh on its next call). Bounds the table a reader token
#: can grow and the renders every forget reads.
MAX_PROFILE_RENDERS = 1_024
KEPT_PROFILE_RENDERS = 768
#: The longest a recall waits for its ``after`` receipts and on-read refreshes (ms); a longer
#: ``deadline_ms`` (KIP's schema allows 2**53 - 1) is cut to this, so no request holds a
#: server thread for longer (HTTP /recall refuses more with 422).
MAX_DEADLINE_MS = 60_000
MIN_MAX_BYTES, MAX_MAX_BYTES = 128, 65_536
ROLES = frozenset({"user", "assistant", "tool", "system", "owner", "agent"})


def _bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def check_depth(value: Any, field: str = "value", limit: int = MAX_VALUE_DEPTH) -> None:
    """Raises InvalidInput when lists/dicts nest deeper than ``limit`` (iterative: safe on a
    value of any depth, even one that would overflow the interpreter's recursion limit)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (list, dict)):
            if depth + 1 > limit:
                raise InvalidInput(f"{field} nests lists/objects more than {limit} deep; "
                                   "flatten it.", field=field, limit=limit)
            stack.extend((c, depth + 1) for c in (v.values() if isinstance(v, dict) else v))


def check_finite(value: Any, field: str = "value") -> None:
    """Rejects NaN and infinities, and anything that is not JSON, anywhere inside a value.

    Callers check the depth first (``check_depth``): this walk is recursive.
    """
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidInput(f"{field} contains a non-finite number ({value}); use a finite "
                           "number or a string.", field=field)
    if not isinstance(value, (str, int, float, bool, list, dict)) and value is not None:
        raise InvalidInput(f"{field} contains a {type(value).__name__}; use JSON values only "
                           "(string, number, boolean, null, list, object).", field=field)
    if isinstance(value, list):
        for v in value:
            check_finite(v, field)
    elif isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise InvalidInput(f"{field} has a non-string object key.", field=field)
            check_finite(v, field)


def check_value(value: Any, key: str, max_bytes: int = MAX_VALUE_BYTES) -> None:
    """The value must be JSON, finite, non-empty, <= ``max_bytes`` (default 1,024: the
    instantKV slot limit; a fact that asks for it: ``MAX_FACT_VALUE_BYTES``), and not named by
    the key."""
    if value is None:
        raise InvalidInput("value is missing; give the value to remember.", field="value")
    if isinstance(value, str) and not value.strip():
        raise InvalidInput("value is empty or whitespace; give the value to remember.",
                           field="value")
    if not isinstance(value, (str, int, float, bool, list, dict)):
        raise InvalidInput(f"value has type {type(value).__name__}; use a JSON value "
                           "(string, number, boolean, list or object).", field="value")
    check_depth(value)
    check_json_text(value)  # lone surrogates cannot be stored as UTF-8
    check_finite(value)
    size = _bytes(json.dumps(value, ensure_ascii=False)) if not isinstance(value, str) \
        else _bytes(value)
    if size > max_bytes:
        hint = ("Store a shorter value, or remember it as a fact (remember_fact: up to "
                f"{MAX_FACT_VALUE_BYTES:,} bytes inline, larger in a blob)."
                if max_bytes < MAX_FACT_VALUE_BYTES else "Store a shorter value.")
        raise InvalidInput(f"value is {size} UTF-8 bytes; the limit is {max_bytes}. {hint}",
                           field="value", limit=max_bytes)
    if isinstance(value, str) and key_names_value(key, value):
        raise InvalidInput(
            f"key {key!r} contains the value {value!r}; a key names the topic "
            "(e.g. 'home_city'), the value goes in value.", field="key")


def key_names_value(key: str, value: str) -> bool:
    """Whether a key spells out its value: ``home_city_paris`` / ``Paris``.

    True when the value's words are a run of the key's words (``lives_in_new_york`` /
    ``New York``), or when the value, spaces removed and at least 4 characters long, is
    inside the key with underscores removed (``homecityparis``). A short value that merely
    occurs inside a word of the key is fine: ``name`` / ``Nam``, ``likes`` / ``Li``.
    """
    if _more_word_chars(value, 4 * len(key)):  # cannot be spelled by a <= 128-byte key
        return False  # (normalising merges at most 3 word characters into 1: Hangul jamo)
    val_words = [w for w in _WORD_SPLIT.split(normalize_text(value)) if w]
    squashed_val = "".join(val_words)
    if len(squashed_val) < 2:
        return False
    key_words = [w for w in key.split("_") if w]
    n = len(val_words)
    if any(key_words[i:i + n] == val_words for i in range(len(key_words) - n + 1)):
        return True
    return len(squashed_val) >= 4 and squashed_val in "".join(key_words)


def _more_word_chars(text: str, limit: int) -> bool:
    """Whether ``text`` holds more than ``limit`` letters/digits (stops scanning at the
    first one over: cheap on a 64 KB fact)."""
    for i, _ in enumerate(_WORD_CHAR.finditer(text)):
        if i >= limit:
            return True
    return False


def refuse_surrogates(value: Any, field: str) -> None:
    """Raises InvalidInput when a string (or a string nested in lists, tuples and dict keys or
    values) holds a lone UTF-16 surrogate; other types and checks are left to the caller."""
    if isinstance(value, str):
        if has_lone_surrogate(value):
            raise lone_surrogate(field)
    elif isinstance(value, (list, tuple)):
        for v in value:
            refuse_surrogates(v, field)
    elif isinstance(value, dict):
        for k, v in value.items():
            refuse_surrogates(k, field)
            refuse_surrogates(v, field)


def check_text(text: str | None, field: str, limit: int) -> None:
    if text is None:
        return
    if not isinstance(text, str):
        raise InvalidInput(f"{field} must be a string.", field=field)
    if has_lone_surrogate(text):
        raise lone_surrogate(field)
    if "\x00" in text:  # PostgreSQL text cannot hold NUL; refused on every backend alike
        raise InvalidInput(f"{field} contains a NUL character (\\x00); remove it.",
                           field=field)
    size = _bytes(text)
    if size > limit:
        raise InvalidInput(f"{field} is {size} UTF-8 bytes; the limit is {limit}.",
                           field=field, limit=limit)


def validate_candidate(c: Candidate, *, max_value_bytes: int = MAX_VALUE_BYTES) -> None:
    """Validates a candidate against the limits table; raises InvalidInput on the first issue.

    ``max_value_bytes``: 1,024 for items (instantKV); facts that ask for it pass
    ``MAX_FACT_VALUE_BYTES``."""
    if not isinstance(c.kind, Kind):
        raise InvalidInput("kind is not one of " + ", ".join(k.value for k in Kind),
                           field="kind")
    check_value(c.value, c.key, max_value_bytes)
    check_text(c.source.id, "source.id", MAX_SOURCE_ID_BYTES)
    if c.source.id is not None and not c.source.id.strip():
        raise InvalidInput("source.id is empty; omit it or give a stable id.", field="source.id")
    check_text(c.source.text, "source.text", MAX_QUOTE_BYTES)
    if c.source.role not in ROLES:
        raise InvalidInput(f"source.role {c.source.role!r} is not one of {sorted(ROLES)}.",
                           field="source.role")
    if c.source.occurred_at is not None:  # first: valid_at defaults to it
        to_iso(c.source.occurred_at, field="source.occurred_at")
    to_iso(c.valid_at, field="valid_at")
    if c.valid_until is not None:
        to_iso(c.valid_until, field="valid_until")
    if c.valid_until is not None and c.valid_until <= c.valid_at:
        raise InvalidInput("valid_until is not after valid_at.", field="valid_until")


def parse_kind(text: str) -> Kind:
    try:
        return Kind(text)
    except ValueError:
        raise InvalidInput(f"kind {text!r} is not one of "
                           + ", ".join(k.value for k in Kind) + ".", field="kind") from None

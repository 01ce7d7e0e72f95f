"""Domain types: scopes, keys, kinds, claims, items, sources (DESIGN.md "Vocabulary").

Plain frozen dataclasses and StrEnums; no pydantic, no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, NewType

from remem.errors import InvalidInput

ItemId = NewType("ItemId", str)
ClaimId = NewType("ClaimId", str)
MemoryId = NewType("MemoryId", str)

JSONValue = Any  # str | int | float | bool | None | list | dict (validated by limits)


class ScopeKind(StrEnum):
    AGENT = "agent"
    USER = "user"
    ORG = "org"
    PROJECT = "project"
    THREAD = "thread"
    SESSION = "session"


class Kind(StrEnum):
    IDENTITY = "identity"
    RULE = "rule"
    PROFILE_SLOT = "profile_slot"
    FACT = "fact"
    PREFERENCE = "preference"
    SKILL = "skill"
    LESSON = "lesson"


PINNED_KINDS = frozenset({Kind.IDENTITY, Kind.RULE, Kind.PROFILE_SLOT, Kind.PREFERENCE})
AGENT_OWNED_KINDS = frozenset({Kind.IDENTITY, Kind.RULE, Kind.SKILL, Kind.LESSON})


class Cardinality(StrEnum):
    SINGLE = "single"
    MULTI = "multi"


class OnChange(StrEnum):
    """Per-key policy for a different value on a single key (instantKV: assert -> conflict)."""

    SUPERSEDE = "supersede"
    CONFLICT = "conflict"


class ItemStatus(StrEnum):
    CURRENT = "current"
    SUPERSEDED = "superseded"
    CONFLICT = "conflict"
    ARCHIVED = "archived"
    FORGOTTEN = "forgotten"


LIVE_STATUSES = frozenset({ItemStatus.CURRENT, ItemStatus.CONFLICT})


class Authority(StrEnum):
    """Who is writing, which decides how the rules treat a different value.

    OWNER: explicit remember by the memory's owner (supersedes unless the key says conflict).
    CORRECTION: explicit correct with an expected revision (always supersedes).
    ASSERT: a plain instantKV proposal assert (a different value records a conflict).
    AUTOMATIC: extraction, consolidation, replay (judge decides; never re-learns a tombstone).
    """

    OWNER = "owner"
    CORRECTION = "correction"
    ASSERT = "assert"
    AUTOMATIC = "automatic"


class Outcome(StrEnum):
    """What a write did (instantKV status names plus KickSide verdicts)."""

    CREATED = "created"
    DUPLICATE = "duplicate"
    SUPERSEDED = "superseded"
    CONFLICT = "conflict"
    STALE = "stale"
    CORRECTED = "corrected"
    MERGED = "merged"
    FORGOTTEN = "forgotten"


class Verdict(StrEnum):
    """The judge's choice where the rules leave one (KickSide reconcile verdicts)."""

    ADD = "ADD"
    SUPERSEDE = "SUPERSEDE"
    MERGE = "MERGE"
    NOOP = "NOOP"
    CONFLICT = "CONFLICT"


# \Z, not $: "$" also matches before a trailing newline. A canonical scope handle is a
# lower-case kind, ':' and an id of printable characters: no whitespace, no control or
# surrogate code points, no '*' (never a wildcard), no '/' (it separates a scope from the
# names in its namespace, ``user:alice/turn-1``), not starting with ':'; format
# characters (zero-width, bidi) and ids not in Unicode NFC are refused in Scope.parse, so
# no two handles that look alike name different scopes.
_ID_BAD = "\\s\x00-\x1f\x7f-\x9f*/\ud800-\udfff"
_SCOPE_RE = re.compile(r"^(agent|user|org|project|thread|session):"
                       f"([^{_ID_BAD}:][^{_ID_BAD}]{{0,126}})\\Z")
_KEY_RE = re.compile(r"^[a-z][a-z0-9_]{0,127}\Z")


@dataclass(frozen=True, order=True)
class Scope:
    """Whose memory a thing is: ``<kind>:<id>`` such as ``user:alice``.

    Raises:
        InvalidInput: unknown or upper-case scope kind, empty id, whitespace, control,
            format or surrogate characters, '*', '/', an id not in Unicode NFC, or over 128
            UTF-8 bytes.
    """

    kind: ScopeKind
    id: str

    @classmethod
    def parse(cls, text: str) -> Scope:
        if not isinstance(text, str):
            raise InvalidInput("scope must be a string like 'user:alice'.", field="scope")
        if len(text.encode("utf-8", "surrogatepass")) > 128:
            raise InvalidInput(
                "scope is longer than 128 UTF-8 bytes; use a shorter id.", field="scope"
            )
        m = _SCOPE_RE.match(text)
        if not m or not _canonical_id(m.group(2)):
            kinds = ", ".join(k.value for k in ScopeKind)
            shown = text.encode("ascii", "backslashreplace").decode()
            raise InvalidInput(
                f"scope {shown!r} is not a scope handle '<kind>:<id>': kind one of {kinds} "
                "(lower case), id without spaces, control characters, '/' or '*' (no "
                "wildcards); for example 'user:alice'.",
                field="scope",
            )
        if m.group(1) == ScopeKind.USER.value and m.group(2).startswith("agent:"):
            raise InvalidInput(
                "a user id may not start with 'agent:': exported Log+Facts records carry the "
                "agent scope 'agent:<id>' as userId 'agent:<id>', so a restore would turn this "
                "user into an agent scope that every reader can read; use another id.",
                field="scope",
            )
        return cls(ScopeKind(m.group(1)), m.group(2))

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.id}"


def _canonical_id(scope_id: str) -> bool:
    """No format characters (zero-width, bidi controls) and in Unicode NFC."""
    if scope_id.isascii():
        return True
    return (unicodedata.normalize("NFC", scope_id) == scope_id
            and not any(unicodedata.category(ch) == "Cf" for ch in scope_id))


def parse_key(text: str) -> str:
    """Validates a key: snake_case topic name, 1-128 bytes, e.g. ``home_city``.

    Raises:
        InvalidInput: not snake_case or too long.
    """
    if not isinstance(text, str) or not _KEY_RE.match(text):
        raise InvalidInput(
            f"key {text!r} must be a snake_case topic name (lower-case letters, digits, "
            "underscores; starting with a letter; at most 128 bytes), e.g. 'home_city'.",
            field="key",
        )
    return text


@dataclass(frozen=True)
class Source:
    """Where a statement came from: the captured input it was taken from.

    Attributes:
        id: stable source id from the caller's runtime (<= 256 bytes).
        text: the grounded quote (<= 512 bytes), or None.
        role: ``user``, ``assistant``, ``tool``, ``system`` or ``owner``.
        occurred_at: aware UTC datetime when it was said (world time), or None.
    """

    id: str | None = None
    text: str | None = None
    role: str = "owner"
    occurred_at: datetime | None = None


@dataclass(frozen=True)
class Candidate:
    """A proposed claim occurrence, before the decision.

    Attributes:
        scope, key, value, kind: the claim.
        valid_at: aware datetime from which the value holds in the world.
        source: provenance.
        valid_until: optional aware datetime when the value stops holding (instantKV).
    """

    scope: Scope
    key: str
    value: JSONValue
    kind: Kind
    valid_at: datetime
    source: Source = field(default_factory=Source)
    valid_until: datetime | None = None


@dataclass(frozen=True)
class ItemState:
    """The decision-relevant state of one item (no text)."""

    item_id: str
    claim_id: str
    status: ItemStatus
    valid_at: datetime
    revision: int
    kind: Kind
    invalid_at: datetime | None = None
    conflict_group: str | None = None
    superseded_by: str | None = None
    legal_hold: bool = False
    confirmed_at: datetime | None = None  # world time of the newest restatement (seen again)
    priority: int | None = None  # higher is more important (item.revised changes it)


@dataclass(frozen=True)
class KeyState:
    """Everything the decision needs about one (scope, key) at the ledger head.

    Attributes:
        items: every non-forgotten item of the key in the scope, in revision order.
        revision: the key's revision counter (0 when never written).
        cardinality: persisted cardinality, or None if the key was never declared.
        tombstones: claim ids forgotten in this scope for this key.
    """

    scope: Scope
    key: str
    items: tuple[ItemState, ...] = ()
    revision: int = 0
    cardinality: Cardinality | None = None
    on_change: OnChange = OnChange.SUPERSEDE
    tombstones: frozenset[str] = frozenset()

    def live(self) -> list[ItemState]:
        return [i for i in self.items if i.status in LIVE_STATUSES]

    def by_claim(self, claim_id: str) -> list[ItemState]:
        return [i for i in self.items if i.claim_id == claim_id]

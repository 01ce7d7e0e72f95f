"""Keyed identity labels: the ledger names a scope or key by an HMAC, never by its text.

A memory created with keyed labels (every memory created since issue 15) stores, in place of
the raw ``scope`` and ``key`` of an event, their **label refs**::

    ref = "lbl_" + HMAC-SHA256(memory_secret, canonical_json(["label", memory_id, field, label]))

(``field`` is ``"scope"`` or ``"key"``), keyed with the memory's claim secret like
``claim_id``: a ledger event or tombstone cannot confirm a guessed label without the secret.
The raw labels live beside the ledger in the erasable ``labels`` table (ref -> field, label),
which forget erases once no live item of the memory uses the label. Read-model rows that
outlive an item (tombstones, key revisions, key cardinalities) are keyed by refs too; live
items keep their raw labels so reads by scope stay index lookups.

A memory without keyed labels (created before issue 15) has ``secret=None`` here: its refs are
the labels themselves and its events keep the schema-1 format (raw ``scope``/``key``), so old
ledgers fold and verify unchanged. Pure: no I/O; the secret is passed in by the caller.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from remem.domain.canonical import canonical_json

#: Event data fields that hold an identity label, and the field holding its ref in schema 2.
LABEL_FIELDS = ("scope", "key")
REF_SUFFIX = "_ref"
#: The event data version of sealed events (``scope_ref``/``key_ref`` instead of labels).
SEALED_VERSION = 2
REF_PREFIX = "lbl_"
#: How many refs one ``LabelKeys`` remembers.
_REFS_KEPT = 4096


@dataclass(frozen=True)
class LabelKeys:
    """How one memory names its labels: keyed refs (``secret`` set) or the raw labels.

    Attributes:
        memory_id: the memory.
        secret: the memory's claim secret when its labels are keyed; None: raw labels.
    """

    memory_id: str = ""
    secret: bytes | None = None
    #: refs computed so far (this instance lives for one transaction or one read).
    _refs: dict[tuple[str, str], str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def keyed(self) -> bool:
        return self.secret is not None

    def ref(self, field: str, label: str) -> str:
        """The ref of a label (``field`` is ``scope``, ``key`` or another namespace such as
        ``idem``); the label itself when the memory's labels are not keyed."""
        if self.secret is None:
            return label
        known = self._refs.get((field, label))
        if known is None:  # a bulk write names the same few scopes and keys again and again
            body = canonical_json(["label", self.memory_id, field, label])
            known = REF_PREFIX + hmac.new(self.secret, body, hashlib.sha256).hexdigest()
            if len(self._refs) < _REFS_KEPT:
                self._refs[(field, label)] = known
        return known

    def seal(self, data: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, list[str]]]:
        """Event wire data with its labels replaced by refs, and the labels it named.

        Returns:
            ``(data, labels)``: ``data`` unchanged (schema 1) when the memory's labels are
            not keyed or the data names no label; else ``scope``/``key`` replaced by
            ``scope_ref``/``key_ref`` and ``v`` set to :data:`SEALED_VERSION`. ``labels`` maps
            each ref to ``[field, label]`` (what the ``labels`` table stores).
        """
        if self.secret is None or not any(f in data for f in LABEL_FIELDS):
            return dict(data), {}
        out = dict(data)
        named: dict[str, list[str]] = {}
        for f in LABEL_FIELDS:
            if f in out:
                label = out.pop(f)
                ref = self.ref(f, label)
                out[f + REF_SUFFIX] = ref
                named[ref] = [f, label]
        out["v"] = SEALED_VERSION
        return out, named


def resolve(data: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """Event data with every ref whose label is still held replaced by the label (as in a
    schema-1 event); a ref whose label was erased stays a ref."""
    out = dict(data)
    for f in LABEL_FIELDS:
        ref = out.get(f + REF_SUFFIX)
        if ref is not None and ref in names:
            del out[f + REF_SUFFIX]
            out[f] = names[ref]
    return out


def with_refs(data: Mapping[str, Any], keys: LabelKeys,
              names: Mapping[str, str]) -> dict[str, Any]:
    """What the fold reads: both ``scope``/``key`` (the label, or the ref when the label was
    erased) and ``scope_ref``/``key_ref``, for schema-1 and schema-2 data alike."""
    out = dict(data)
    for f in LABEL_FIELDS:
        rf = f + REF_SUFFIX
        if f in out:
            out[rf] = keys.ref(f, out[f])
        elif rf in out:
            out[f] = names.get(out[rf], out[rf])
    return out

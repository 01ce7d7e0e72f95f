"""Ways to name a scope that is not the caller's: strings (case, whitespace, unicode
look-alikes, wildcards) and every JSON shape (list, object, nested)."""

from __future__ import annotations

from typing import Any

from security.kit import ALICE, BOB, T1

#: (id, text): scope strings that must never reach bob's or the thread's data for alice.
STRINGS: list[tuple[str, str]] = [
    ("bob", BOB),
    ("thread", T1),
    ("Bob-case", "User:Bob"),
    ("bob-upper-id", "user:BOB"),
    ("bob-lead-space", " user:bob"),
    ("bob-trail-space", "user:bob "),
    ("bob-inner-space", "user: bob"),
    ("bob-newline", "user:bob\n"),
    ("bob-nul", "user:bob\x00"),
    ("bob-zero-width", "user:bob\u200b"),
    ("bob-fullwidth", "\uff55\uff53\uff45\uff52:bob"),
    ("bob-cyrillic-o", "user:b\u043eb"),
    ("user-wildcard", "user:*"),
    ("wildcard", "*"),
    ("bob-glob", "user:b*"),
    ("bob-comma", f"{ALICE},{BOB}"),
]


def json_shapes(text: str) -> list[tuple[str, Any]]:
    """The JSON shapes a scope field may be sent in, each naming ``text``."""
    return [
        ("str", text),
        ("list", [text]),
        ("list-with-own", [ALICE, text]),
        ("object", {text: 1}),
        ("object-with-own", {ALICE: 1, text: 1}),
        ("nested-list", [[text]]),
        ("list-of-object", [{text: 1}]),
        ("object-of-list", {"scopes": [text]}),
        ("object-task-ref", {"task_ref": text}),
    ]


def body_variants() -> list[tuple[str, Any]]:
    """Every string in the plain shape, bob's scope in every JSON shape, and the user
    wildcard in a few."""
    out = [(name, text) for name, text in STRINGS]
    out += [(f"bob-{shape}", value) for shape, value in json_shapes(BOB) if shape != "str"]
    out += [(f"user-wildcard-{shape}", value) for shape, value in json_shapes("user:*")
            if shape in ("list", "object", "nested-list")]
    return out


def query_variants() -> list[tuple[str, Any]]:
    """Query parameters: each string alone, and repeated after the caller's own scope."""
    return [(n, t) for n, t in STRINGS] + [("own-then-bob", [ALICE, BOB]),
                                           ("own-then-thread", [ALICE, T1]),
                                           ("own-then-wildcard", [ALICE, "user:*"])]

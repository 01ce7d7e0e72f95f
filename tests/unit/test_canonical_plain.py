"""``canonical._plain`` (whether the C JSON encoder writes RFC 8785 bytes) takes exact-type
fast paths; it must answer as the plain isinstance rules do, for every shape of value."""

from __future__ import annotations

import math
from typing import Any

from remem.domain import canonical


def _reference(value: Any) -> bool:
    """The rules as first written (isinstance only)."""
    if isinstance(value, str) or value is None:
        return True
    if isinstance(value, int):
        return -(2**53 - 1) <= value <= 2**53 - 1
    if isinstance(value, list | tuple):
        return all(_reference(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and k.isascii() and _reference(v)
                   for k, v in value.items())
    return False


class _Str(str):
    pass


class _Int(int):
    pass


VALUES = ["x", "", None, True, False, 0, 2**53 - 1, 2**53, -(2**53), 1.5, math.inf, b"x",
          _Str("s"), _Int(3), _Int(2**60), [], [1, "a", None], [1.0], (1, 2), ({"a": 1},),
          {"a": 1, "b": "x", "c": None, "d": True}, {"a": 2**53}, {"a": 1.5}, {"é": 1},
          {1: "a"}, {_Str("k"): 1}, {"a": {"b": [1, {"c": 2.5}]}}, {"a": {"b": [1, {"c": 2}]}},
          {"a": _Int(4)}, {"a": _Str("v")}, {"a": b"x"}, {"a": [2**60]}, {"a": (1,)}, set()]


def test_plain_answers_as_the_isinstance_rules() -> None:
    for v in VALUES:
        assert canonical._plain(v) is _reference(v), repr(v)


def test_canonical_bytes_of_a_ledger_event_are_unchanged() -> None:
    event = {"item_id": "itm_1", "revision": 3, "valid_until": None, "ok": True,
             "labels": {"lbl_a": ["scope", "user:u1"]}}
    assert canonical.canonical_json(event) == (
        b'{"item_id":"itm_1","labels":{"lbl_a":["scope","user:u1"]},"ok":true,'
        b'"revision":3,"valid_until":null}')

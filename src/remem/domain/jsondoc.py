"""Strict parsing of JSON documents sent by callers (HTTP bodies, apply files, KIP requests).

``loads`` accepts only what every layer below can hold, and raises ``InvalidInput`` (never a
``RecursionError``, ``UnicodeEncodeError`` or ``ValueError``) for anything else:

- bytes that are not UTF-8;
- nesting deeper than ``max_depth`` containers, checked on the text *before* anything
  recursive (the parser, pydantic, canonical JSON) sees it;
- duplicate object fields (``{"key": 1, "key": 2}``): refused, never last-one-wins;
- ``NaN``, ``Infinity``, ``-Infinity`` and numbers that overflow a float (``1e999``);
- numbers a 64-bit float cannot hold closely enough to give them back: a non-zero number that
  underflows to 0 (``1e-400``), or one below the smallest normal float (2.2e-308) that would
  lose digits (``1.23456789e-320``). Ordinary rounding of a long decimal in the normal range
  (``0.1``, ``3.14159265358979323846``) is accepted, as every JSON parser does. The error names
  the refused number's place in the document (``value``, ``proposals[0].value``);
- integers longer than 4,300 digits;
- lone UTF-16 surrogates (``"\\ud800"``): they cannot be encoded as UTF-8 and so cannot be
  stored; a proper pair (``"\\ud83d\\ude00"``) is one character and is fine.

Depth counts containers: ``1`` is 0 deep, ``[1]`` is 1, ``{"a": [1]}`` is 2.
"""

from __future__ import annotations

import json
import math
import re
import sys
from decimal import Decimal
from itertools import accumulate
from typing import Any

from remem.errors import InvalidInput

#: Deepest nesting of a whole request document (a value may be at most
#: ``limits.MAX_VALUE_DEPTH`` deep inside it).
MAX_DOCUMENT_DEPTH = 64

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # unrolled: linear, fast
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def loads(data: bytes | str, *, max_depth: int = MAX_DOCUMENT_DEPTH,
          field: str = "body") -> Any:
    """Parses one JSON document strictly (see the module docstring).

    Args:
        data: the document, UTF-8 bytes or text.
        max_depth: deepest container nesting accepted.
        field: what to call the document in error messages and ``details.field``.

    Returns:
        The parsed value (dict, list, str, int, float, bool or None).

    Raises:
        InvalidInput: the document is not valid, strict JSON within the limits.
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"{field} is not valid UTF-8 (bad byte at offset {exc.start}); "
                               "send UTF-8 encoded JSON.", field=field) from None
    else:
        text = data
    if _SURROGATE.search(text):
        raise lone_surrogate(field)
    check_text_depth(text, max_depth, field)
    try:
        doc = json.loads(text, object_pairs_hook=_unique_fields,
                         parse_constant=lambda name: _no_constant(name, field),
                         parse_float=parse_float)
    except UnrepresentableNumber as exc:
        raise exc.refusal(field, number_path(text, exc.digits)) from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{field} is not valid JSON ({exc.msg} at line {exc.lineno} "
                           f"column {exc.colno}); send one JSON document.",
                           field=field, reason="syntax", position=exc.pos) from None
    except ValueError:  # an integer over 4,300 digits
        raise InvalidInput(f"{field} holds a number with too many digits; numbers must fit "
                           "a 64-bit float or integer.", field=field) from None
    if _SURROGATE_ESCAPE.search(text):  # maybe a lone one; a proper pair is one character
        check_json_text(doc, field)
    return doc


def check_text_depth(text: str, max_depth: int, field: str = "body") -> None:
    """Raises InvalidInput when the JSON text nests containers deeper than ``max_depth``.

    Linear in the text, no recursion; brackets inside strings do not count.
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if len(brackets) > max_depth and max(accumulate(map(_DEPTH_STEP.__getitem__,
                                                        brackets))) > max_depth:
        raise InvalidInput(f"{field} nests arrays/objects more than {max_depth} deep; "
                           "flatten it.", field=field, limit=max_depth)


def check_json_text(value: Any, field: str = "value") -> None:
    """Raises InvalidInput when a parsed value holds a lone surrogate or a non-finite float.

    Iterative, so it is safe on a value of any depth.
    """
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):
                raise lone_surrogate(field)
        elif isinstance(v, float):
            if not math.isfinite(v):
                raise InvalidInput(f"{field} holds a number that is not finite (NaN, Infinity "
                                   "or out of range); use a finite number.", field=field)
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def has_lone_surrogate(text: str) -> bool:
    """Whether the text holds a UTF-16 surrogate code point (not encodable as UTF-8)."""
    return _SURROGATE.search(text) is not None


def lone_surrogate(field: str) -> InvalidInput:
    return InvalidInput(f"{field} contains a lone UTF-16 surrogate (a \\ud800-\\udfff escape "
                        "without its pair); it cannot be stored as UTF-8. Send valid Unicode.",
                        field=field)


def _unique_fields(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            shown = key if len(key) <= 64 and not _SURROGATE.search(key) else key[:64]
            raise InvalidInput(f"duplicate JSON field {shown!r}; each field may appear once.",
                               field=shown.encode("utf-8", "replace").decode())
        out[key] = value
    return out


class UnrepresentableNumber(ValueError):
    """A JSON number a 64-bit float cannot hold (raised by :func:`parse_float`; a parser that
    uses the hook turns it into InvalidInput with :meth:`refusal`)."""

    def __init__(self, digits: str, why: str) -> None:
        super().__init__(why)
        self.digits, self.why = digits, why

    def refusal(self, field: str, path: str | None = None) -> InvalidInput:
        where = path or field
        return InvalidInput(f"{where} holds the number {self.digits[:32]}, which {self.why}; "
                            "nothing was written. Send a number a 64-bit float holds, or the "
                            "number as a string.", field=where, reason="number")


def parse_float(digits: str) -> float:
    """The ``parse_float`` hook of every strict JSON parser here: the float of a JSON number
    with a fraction or exponent, when a 64-bit float holds it closely enough to give it back.

    Raises:
        UnrepresentableNumber: it overflows (``1e999``), underflows to 0 (``1e-400``), or lies
            below the smallest normal float and would lose digits (``1.23456789e-320``).
    """
    value = float(digits)
    if not math.isfinite(value):
        raise UnrepresentableNumber(digits, "is out of range (over 1.8e308)")
    if abs(value) < sys.float_info.min:  # 0, or subnormal: precision is lost here
        if value == 0.0 and re.search("[1-9]", digits.lower().partition("e")[0]):
            raise UnrepresentableNumber(digits, "is too small for a 64-bit float (it would "
                                        "be stored as 0)")
        if value != 0.0 and Decimal(repr(value)) != Decimal(digits):
            raise UnrepresentableNumber(digits, "is below the smallest normal 64-bit float "
                                        f"and would be stored as {value!r}")
    return value


def number_path(text: str, digits: str) -> str | None:
    """Where in the document the first refused number stands (``proposals[0].value``), found
    by parsing again with the number as a marker; None at the top level."""
    marker = object()
    seen = [False]

    def mark(d: str) -> Any:
        try:
            return parse_float(d)
        except UnrepresentableNumber:
            if seen[0]:
                return 0.0
            seen[0] = True
            return marker

    doc = json.loads(text, parse_float=mark)
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        v, path = stack.pop()
        if v is marker:
            return path or None
        if isinstance(v, dict):
            stack.extend((c, f"{path}.{k}" if path else str(k)) for k, c in v.items())
        elif isinstance(v, list):
            stack.extend((c, f"{path}[{i}]") for i, c in enumerate(v))
    return None


def _no_constant(name: str, field: str) -> Any:
    raise InvalidInput(f"{field} holds {name}, which is not a JSON number; use a finite "
                       "number or a string.", field=field)

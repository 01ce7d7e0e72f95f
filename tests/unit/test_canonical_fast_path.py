"""``canonical_json`` takes the C encoder for plain values; its bytes must be RFC 8785's."""

from __future__ import annotations

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from remem.domain.canonical import canonical_json
from remem.errors import InvalidInput

_scalars = (st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1)
            | st.text() | st.floats(allow_nan=False, allow_infinity=False))
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(_json)
def test_canonical_json_is_rfc8785_for_any_json_value(value) -> None:
    assert canonical_json(value) == rfc8785.dumps(value)


@pytest.mark.parametrize("value", [
    {"\U0001f600": 1, "\ue000": 2},  # UTF-16 order differs from code-point order
    ["tab\t", "nul\x00", "quote\"", "back\\", "del\x7f", "line\u2028", "\x1f"],
    {"b": [1, True, None], "a": {"z": "", "y": -(2**53) + 1}},
])
def test_tricky_plain_values_match_rfc8785(value) -> None:
    assert canonical_json(value) == rfc8785.dumps(value)


@pytest.mark.parametrize("value", [2**53, {1: "x"}, ["\ud800"], float("nan"), object()])
def test_values_outside_json_are_still_refused(value) -> None:
    with pytest.raises(InvalidInput):
        canonical_json(value)

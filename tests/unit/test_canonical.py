"""Canonical JSON (RFC 8785), claim ids and the ledger hash chain (domain/canonical.py)."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from remem.domain.canonical import ZERO_HASH, canonical_json, claim_id, normalize_text
from remem.domain.ledger import event_hash, verify_chain
from remem.errors import InvalidInput

# --- RFC 8785 canonical bytes -----------------------------------------------------------------


def test_canonical_json_sorts_keys_by_utf16_code_units_not_code_points():
    # RFC 8785 section 3.2.3 example: U+1F600 is the surrogate pair D83D DE00, which sorts
    # before U+FB33 in UTF-16 order although its code point is larger.
    value = {
        "\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet",
        "1": "One", "\U0001f600": "Emoji", "\u0080": "Control", "\u00f6": "Latin o",
    }
    out = canonical_json(value).decode("utf-8")
    keys = list(json.loads(out))
    assert keys == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]
    assert keys != sorted(value)  # plain code-point sorting would differ


def test_canonical_json_matches_the_rfc_8785_number_and_string_example():
    value = {
        "numbers": [333333333.33333329, 1e30, 4.50, 2e-3, 0.000000000000000000000000001],
        "string": "\u20ac$\u000f\nA'B\"\\\\\"/",
        "literals": [None, True, False],
    }
    expected = (
        '{"literals":[null,true,false],'
        '"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    ).encode("utf-8")
    assert canonical_json(value) == expected


def test_canonical_json_has_no_whitespace_and_raw_utf8():
    assert canonical_json({"b": [1, 2], "a": "é"}) == '{"a":"é","b":[1,2]}'.encode()


@pytest.mark.parametrize(
    ("number", "text"),
    [(-0.0, b"0"), (1e21, b"1e+21"), (1e-7, b"1e-7"), (100.0, b"100"), (0.000001, b"0.000001")],
)
def test_canonical_json_serialises_numbers_like_ecmascript(number, text):
    assert canonical_json(number) == text


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), 2**53 + 1,
                                 {1: "non-string key"}, {"a": object()}])
def test_canonical_json_rejects_values_json_cannot_represent(bad):
    with pytest.raises(InvalidInput) as info:
        canonical_json(bad)
    assert info.value.details["field"] == "value"


# --- claim ids ----------------------------------------------------------------------------


SECRET = b"s" * 32


def _cid(value, *, memory="m1", scope="user:alice", key="home_city", secret=SECRET):
    return claim_id(memory, scope, key, value, secret=secret)


@pytest.mark.parametrize(
    "variant",
    ["paris", "PARIS", "  Paris  ", "\tParis\n", "\uff30\uff41\uff52\uff49\uff53"],
)
def test_claim_id_ignores_case_width_and_surrounding_space(variant):
    assert _cid(variant) == _cid("Paris")


@pytest.mark.parametrize("variant", ["new york", "NEW   YORK", "New\tYork", "New\nYork",
                                     "New\u00a0York", " new  york\n"])
def test_claim_id_collapses_inner_whitespace(variant):
    assert _cid(variant) == _cid("New York")


def test_claim_id_casefolds_beyond_lowercase():
    # casefold maps sharp s to "ss"; lower() would not.
    assert _cid("Straße") == _cid("STRASSE")


def test_claim_id_normalises_strings_inside_lists_and_objects():
    assert _cid({"city": "Paris", "tags": ["A  b"]}) == _cid({"city": "PARIS", "tags": ["a b"]})


@pytest.mark.parametrize(
    ("a", "b"),
    [("3", 3), (True, "true"), (True, 1), (False, 0), (None, "null"), (["a"], "a"),
     ({"a": 1}, {"a": "1"}), ("Paris", "Pariss"), ("New York", "NewYork"), (1, 2)],
)
def test_claim_id_keeps_json_types_and_distinct_values_apart(a, b):
    assert _cid(a) != _cid(b)


def test_claim_id_depends_on_memory_scope_and_key():
    base = _cid("Paris")
    assert _cid("Paris", memory="m2") != base
    assert _cid("Paris", scope="user:bob") != base
    assert _cid("Paris", key="hometown") != base


def test_claim_id_is_hmac_sha256_of_canonical_json_of_the_normalised_tuple():
    body = b'["m1","user:alice","home_city","paris"]'
    assert _cid(" PARIS ") == hmac.new(SECRET, body, hashlib.sha256).hexdigest()
    assert _cid(" PARIS ") != hashlib.sha256(body).hexdigest()  # not guessable without it


def test_claim_ids_of_two_secrets_differ_and_neither_is_the_plain_digest():
    other = _cid("Paris", secret=b"t" * 32)
    assert other != _cid("Paris")
    assert other != _cid("Paris", secret=None)


def test_a_legacy_memory_without_a_secret_keeps_plain_sha256_claim_ids():
    expected = hashlib.sha256(b'["m1","user:alice","home_city","paris"]').hexdigest()
    assert _cid(" PARIS ", secret=None) == expected
    assert _cid("paris", secret=None) == _cid("  Paris ", secret=None)


def test_normalize_text_applies_nfkc_casefold_and_whitespace_collapse():
    assert normalize_text("  \uff21\u00a0B\t\tC\u2003 ") == "a b c"


# --- hash chain ---------------------------------------------------------------------------


def _chain(n: int = 5, memory: str = "m1") -> list[dict]:
    events, prev = [], ZERO_HASH
    for seq in range(1, n + 1):
        ev = {"memory": memory, "seq": seq, "type": "item.added",
              "data": {"v": 1, "item_id": f"itm_{seq:04d}", "claim_id": "ab" * 32,
                       "revision": seq},
              "actor": "owner", "at": f"2024-01-01T00:00:{seq:02d}.000000Z"}
        ev["prev_hash"] = prev
        ev["hash"] = prev = event_hash(prev, ev)
        events.append(ev)
    return events


def _flip_one_byte_of_data(ev: dict) -> dict:
    raw = bytearray(json.dumps(ev["data"], sort_keys=True).encode())
    pos = raw.index(b"ab")  # inside the claim id string: stays valid JSON
    raw[pos] ^= 0x03  # 'a' (0x61) -> 'b' (0x62)
    return {**ev, "data": json.loads(bytes(raw))}


def test_event_hash_is_sha256_of_prev_hash_bytes_and_canonical_body():
    ev = _chain(1)[0]
    body = {k: ev[k] for k in ("memory", "seq", "type", "data", "actor", "at")}
    expected = hashlib.sha256(bytes(32) + canonical_json(body)).hexdigest()
    assert ev["hash"] == expected
    assert ev["prev_hash"] == ZERO_HASH


def test_event_hash_ignores_stored_hash_fields_but_covers_every_body_field():
    ev = _chain(1)[0]
    assert event_hash(ZERO_HASH, {**ev, "hash": "x", "prev_hash": "y"}) == ev["hash"]
    for field, other in (("memory", "m2"), ("seq", 2), ("type", "item.archived"),
                         ("actor", "agent"), ("at", "2024-01-01T00:00:02.000000Z")):
        assert event_hash(ZERO_HASH, {**ev, field: other}) != ev["hash"], field


def test_verify_chain_accepts_an_intact_chain():
    assert verify_chain(_chain(6)) is None
    assert verify_chain([]) is None


def test_verify_chain_catches_a_flipped_byte_and_names_its_seq():
    events = _chain(6)
    events[3] = _flip_one_byte_of_data(events[3])
    brk = verify_chain(events)
    assert brk is not None
    assert brk.seq == 4
    assert "hash" in brk.reason


def test_verify_chain_catches_a_recomputed_hash_through_the_next_link():
    events = _chain(6)
    forged = _flip_one_byte_of_data(events[2])
    forged["hash"] = event_hash(forged["prev_hash"], forged)  # attacker rehashes one event
    events[2] = forged
    brk = verify_chain(events)
    assert brk is not None and brk.seq == 4
    assert "prev_hash" in brk.reason


def test_verify_chain_requires_the_zero_hash_first_and_contiguous_seqs():
    events = _chain(4)
    assert verify_chain(events[1:]).seq == 2  # first event missing
    gap = events[:2] + events[3:]
    assert verify_chain(gap).seq == 4
    wrong_start = [{**events[0], "prev_hash": "1" * 64}]
    assert verify_chain(wrong_start).seq == 1

"""Round-5 probe: ``Memory.remember_many`` (bulk writes) read each statement dict by name and
ignored every other field. A caller that sends ``expected_revision`` believes it gets a
compare-and-set and silently gets none (a stale writer overwrites a newer value); a typo
(``valid_untill``) stores a value that never expires. ``observe_many`` already refuses an
unknown turn field; a statement that is not an object raised ``TypeError`` instead of
``invalid_input``. Real SQLite file, a scoped writer principal, as a library user would."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import remem
from remem.domain.access import Principal, Role
from remem.errors import InvalidInput

ALICE = "user:alice"


@pytest.fixture
def alice(tmp_path):
    store = remem.open(str(tmp_path / "bulk.db"))
    mem = store.create_memory("m1")
    yield mem.as_principal(Principal("m1", Role.WRITER, ALICE, "tali"))
    store.close()


@pytest.mark.parametrize("field,value", [
    ("expected_revision", 7),          # a CAS the caller believes is checked
    ("valid_untill", "2020-01-01T00:00:00Z"),  # a typo of valid_until
    ("actor", "user:bob"),             # remember_many takes actor once, not per statement
])
def test_an_unknown_statement_field_is_refused_and_nothing_is_written(alice, field, value):
    good = {"scope": ALICE, "key": "diet", "value": "vegan"}
    bad = {"scope": ALICE, "key": "home_city", "value": "Lyon", field: value}
    with pytest.raises(InvalidInput) as err:
        alice.remember_many([good, bad])
    assert err.value.details.get("index") == 1
    assert field in str(err.value)
    assert alice.items().total == 0


@pytest.mark.parametrize("statements", [["oops"], [None], "abc", {"scope": ALICE}])
def test_a_statement_that_is_not_an_object_is_invalid_input(alice, statements):
    with pytest.raises(InvalidInput):
        alice.remember_many(statements)
    assert alice.items().total == 0


def test_the_documented_fields_still_write(alice):
    out = alice.remember_many([{
        "scope": ALICE, "key": "diet", "value": "vegan", "kind": "preference",
        "valid_at": datetime(2024, 1, 1, tzinfo=UTC),
        "valid_until": datetime(2030, 1, 1, tzinfo=UTC),
        "source": {"id": "s1", "text": "I am vegan."}, "idempotency_key": "k1",
        "metadata": {"app": "crm"}, "priority": 5}])
    assert [r.outcome for r in out] == ["created"]

"""priority on POST /items and /observe is a JSON integer: true or "5" is refused (422),
never read as 1 or 5 (the API promises strict JSON types)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from remem.api.schemas import ObserveIn, RememberIn


@pytest.mark.parametrize("bad", [True, False, "5", 5.0, 5.5])
def test_a_non_integer_priority_is_refused(bad):
    with pytest.raises(ValidationError):
        RememberIn.model_validate({"scope": "user:a", "key": "k", "value": "v", "priority": bad})
    with pytest.raises(ValidationError):
        ObserveIn.model_validate({"scope": "user:a", "text": "hi", "priority": bad})


def test_an_integer_priority_is_accepted():
    assert RememberIn.model_validate({"scope": "user:a", "key": "k", "value": "v",
                                      "priority": 7}).priority == 7
    assert ObserveIn.model_validate({"scope": "user:a", "text": "hi", "priority": 0}).priority == 0

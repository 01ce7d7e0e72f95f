"""SearchMemory takes the recall controls (issue 13): mode and filters, checked like every
other argument; a filter the service cannot honour is an invalid_input result."""

from __future__ import annotations

import pytest
from conftest import AGENT, USER

from remem.agent import MemoryTools


@pytest.fixture
def tools(seeded):
    memory, _ = seeded
    return MemoryTools(memory, user_scope=USER, agent_scope=AGENT)


def keys(result: dict) -> set[str]:
    assert result["ok"] is True, result
    return {i["key"] for i in result["items"]}


def test_search_memory_filters_by_kind_and_metadata(tools, seeded):
    memory, _ = seeded
    memory.remember(USER, "allergies", "peanuts", metadata={"source_app": "clinic"})
    q = "what should I know about the user's food, dog, city and allergies"
    assert keys(tools.call("SearchMemory", {"query": q, "filters": {"kind": "preference"}})
                ) == {"diet"}
    assert keys(tools.call("SearchMemory", {
        "query": q, "filters": {"metadata": {"source_app": "clinic"}}})) == {"allergies"}


def test_search_memory_modes_pick_channels(tools):
    lexical = keys(tools.call("SearchMemory", {"query": "canine companion", "mode": "lexical"}))
    vector = keys(tools.call("SearchMemory", {"query": "canine companion", "mode": "vector"}))
    assert "dog_name" not in lexical and lexical != vector


@pytest.mark.parametrize("arguments, says", [
    ({"query": "dog", "mode": "semantic"}, "mode 'semantic'"),
    ({"query": "dog", "filters": {"metadata": {"a": {"regex": "x"}}}}, "'regex'"),
    ({"query": "dog", "filters": {"owner": "bob"}}, "'owner'"),
    ({"query": "dog", "filters": "kind=fact"}, "filters"),
])
def test_controls_that_cannot_be_honoured_are_invalid_input_results(tools, arguments, says):
    out = tools.call("SearchMemory", arguments)
    assert out["ok"] is False and out["error"]["code"] == "invalid_input", out
    assert says in out["error"]["message"]

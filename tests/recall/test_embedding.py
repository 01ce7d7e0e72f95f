"""Embedding model per memory: recorded on first use, mismatch errors, reembed switches.

The second model is an ``OpenAICompatEmbedder`` talking to a loopback HTTP server (the
``remote_service`` fixture) that stands in for a remote model service such as Ollama or vLLM.
The operator registers it as the provider ``bow``; the memory config names it.
"""

from __future__ import annotations

import numpy as np
import pytest

from remem.errors import EmbeddingMismatch
from remem.providers.local import DIMENSIONS, MODEL_ID
from remem.settings import ProviderRegistry

ALICE = "user:alice"


def _remote_spec(rstore, url: str) -> dict:
    """Registers the stand-in as the operator's provider ``bow``; the memory's section."""
    rstore.providers = ProviderRegistry.from_mapping({"bow": {"type": "openai",
                                                              "base_url": url}})
    return {"provider": "bow", "model": "bag-of-words", "dimensions": 64}


def _recorded(rstore) -> tuple:
    return tuple(rstore.adapter.conn.execute(
        "SELECT embedding_model, dimensions, vector_epoch FROM memories").fetchone())


def test_a_memory_records_its_model_and_dimensions_on_first_use(mem, rstore) -> None:
    assert _recorded(rstore)[:2] == (None, None)
    mem.remember(ALICE, "home_city", "Paris")
    assert _recorded(rstore)[:2] == (MODEL_ID, DIMENSIONS)
    (blob,) = rstore.adapter.conn.execute("SELECT vec FROM vectors").fetchone()
    vec = np.frombuffer(blob, dtype="<f4")
    assert vec.shape == (DIMENSIONS,) and abs(float(np.linalg.norm(vec)) - 1) < 1e-5


def test_a_different_configured_model_fails_clearly_naming_both(mem, rstore,
                                                               remote_service) -> None:
    url, _ = remote_service
    mem.remember(ALICE, "home_city", "Paris")
    head = mem.status()["head_seq"]
    rstore.update_config("m1", {"embedding": _remote_spec(rstore, url)})
    other = rstore.memory("m1")
    for call in (lambda: other.recall(ALICE, "Paris", budget_tokens=500),
                 lambda: other.remember(ALICE, "diet", "vegan"),
                 lambda: other.observe(ALICE, "hello")):
        with pytest.raises(EmbeddingMismatch) as err:
            call()
        msg = str(err.value)
        assert MODEL_ID in msg and "bag-of-words" in msg and "384" in msg and "64" in msg
        assert "reembed" in msg
    assert other.inspect(ALICE, "diet").state == "empty"  # nothing was written
    assert other.status()["head_seq"] == head


def test_reembed_switches_models_atomically(mem, rstore, remote_service) -> None:
    url, handler = remote_service
    mem.remember(ALICE, "home_city", "Paris")
    mem.remember(ALICE, "pets", "a cat called Mochi")
    mem.observe(ALICE, "I bought a red bicycle yesterday", source_id="t1")
    epoch = _recorded(rstore)[2]
    rstore.update_config("m1", {"embedding": _remote_spec(rstore, url)})
    other = rstore.memory("m1")
    seen = []
    out = other.reembed(batch_size=2, progress=lambda done, total: seen.append((done, total)))
    assert out["switched"] and out["previous_model"] == MODEL_ID
    assert (out["model"], out["dimensions"], out["embedded"]) == ("bag-of-words", 64, 3)
    assert seen[0] == (0, 3) and seen[-1] == (3, 3) and handler.calls == [2, 1]
    model, dims, new_epoch = _recorded(rstore)
    assert (model, dims) == ("bag-of-words", 64) and new_epoch > epoch
    widths = {len(r[0]) for r in rstore.adapter.conn.execute("SELECT vec FROM vectors")}
    assert widths == {64 * 4}
    events = [e["type"] for e in rstore.adapter.events("m1")]
    assert events[-1] == "memory.configured"
    # the new model serves recall and writes; the vector channel finds by shared words
    r = other.recall(ALICE, "red bicycle", budget_tokens=1000)
    assert [s.id for s in r.sources] == ["t1"]
    other.remember(ALICE, "diet", "vegan")
    assert rstore.verify()["ok"]


def test_reembed_skips_unchanged_content(mem, rstore, remote_service) -> None:
    mem.remember(ALICE, "home_city", "Paris")
    out = mem.reembed()
    assert (out["switched"], out["embedded"], out["skipped"]) == (False, 0, 1)
    url, handler = remote_service
    rstore.update_config("m1", {"embedding": _remote_spec(rstore, url)})
    other = rstore.memory("m1")
    assert other.reembed()["embedded"] == 1
    again = other.reembed()
    assert (again["embedded"], again["skipped"], again["switched"]) == (0, 1, False)
    assert handler.calls == [1]


def test_vectors_written_after_an_index_load_are_searched(mem) -> None:
    mem.remember(ALICE, "hobby", "sailing on lakes")
    assert mem.recall(ALICE, "sailing", budget_tokens=500).items
    mem.remember(ALICE, "sport", "competitive rowing")
    r = mem.recall(ALICE, "rowing boats", budget_tokens=500)
    assert "competitive rowing" in [i.value for i in r.items]

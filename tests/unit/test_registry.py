"""The provider registry: specs become adapters in one place, bad specs fail clearly."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from remem.errors import ConfigInvalid, InvalidInput, UnsupportedCapability
from remem.ports import Embedder, Tokenizer
from remem.providers import registry
from remem.providers.local import LocalEmbedder
from remem.providers.openai_compat import OpenAICompatEmbedder
from remem.providers.registry import build_embedder, build_tokenizer, register_embedder


@pytest.mark.parametrize("spec", [None, {}, {"provider": "local"}])
def test_default_spec_builds_the_local_embedder(spec: Any) -> None:
    embedder = build_embedder(spec)
    assert isinstance(embedder, LocalEmbedder) and isinstance(embedder, Embedder)
    assert (embedder.model_id, embedder.dimensions) == ("all-MiniLM-L6-v2-int8", 384)


def test_building_loads_nothing() -> None:
    embedder = build_embedder({"provider": "local", "model_path": "/nonexistent/model.onnx"})
    assert embedder.embed_batch([]).shape == (0, 384)


def test_local_options_reach_the_embedder() -> None:
    embedder = build_embedder({"provider": "local", "batch_size": 8, "intra_op_threads": 2})
    assert embedder._batch_size == 8 and embedder._intra_op_threads == 2


def test_openai_spec_builds_the_openai_compatible_embedder() -> None:
    spec = {
        "provider": "openai",
        "base_url": "http://127.0.0.1:8080/v1",
        "model": "nomic-embed-text",
        "dimensions": 768,
    }
    embedder = build_embedder(spec)
    assert isinstance(embedder, OpenAICompatEmbedder) and isinstance(embedder, Embedder)
    assert (embedder.model_id, embedder.dimensions) == ("nomic-embed-text", 768)
    assert spec["provider"] == "openai"  # the caller's spec is not mutated


def test_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(UnsupportedCapability) as info:
        build_embedder({"provider": "cohere"})
    assert "local" in info.value.message and "openai" in info.value.message
    assert info.value.details["provider"] == "cohere"


def test_unknown_option_lists_the_accepted_ones() -> None:
    with pytest.raises(ConfigInvalid, match="unknown option.*batchsize.*Accepted.*batch_size"):
        build_embedder({"provider": "local", "batchsize": 8})


def test_missing_required_option_is_config_invalid() -> None:
    with pytest.raises(ConfigInvalid, match="model"):
        build_embedder({"provider": "openai", "base_url": "http://x/v1", "dimensions": 8})


def test_out_of_range_option_is_invalid_input() -> None:
    with pytest.raises(InvalidInput):
        build_embedder({"provider": "local", "batch_size": 0})


def test_a_spec_must_be_a_mapping() -> None:
    with pytest.raises(ConfigInvalid):
        build_embedder(["local"])  # type: ignore[arg-type]


def test_registered_providers_are_built_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    class FakeEmbedder:
        model_id = "fake"

        def __init__(self, *, dimensions: int = 4) -> None:
            self.dimensions = dimensions

        def embed_batch(self, texts: list[str]) -> np.ndarray:
            return np.zeros((len(texts), self.dimensions), dtype=np.float32)

    monkeypatch.setattr(registry, "EMBEDDERS", dict(registry.EMBEDDERS))
    register_embedder("fake", FakeEmbedder)
    embedder = build_embedder({"provider": "fake", "dimensions": 3})
    assert isinstance(embedder, FakeEmbedder) and embedder.dimensions == 3


def test_build_tokenizer_defaults_to_o200k_base() -> None:
    tokenizer = build_tokenizer()
    assert isinstance(tokenizer, Tokenizer) and tokenizer.name == "o200k_base"
    assert build_tokenizer("cl100k_base").name == "cl100k_base"


def test_build_tokenizer_rejects_unknown_names() -> None:
    with pytest.raises(UnsupportedCapability, match="supported: cl100k_base, o200k_base"):
        build_tokenizer("p50k_base")

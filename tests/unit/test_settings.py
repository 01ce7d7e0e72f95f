"""Operator settings: the providers file (TOML, JSON), keys from the environment or a file,
and model sections resolved against the registry (endpoint and key from the operator only)."""

from __future__ import annotations

import json

import pytest

import remem
from remem.errors import ConfigInvalid
from remem.providers.llm import OpenAICompatExtractor
from remem.providers.registry import UnusableModel, build_extractor, build_judge
from remem.settings import ProviderRegistry, load_settings

KEY = "sk-test-51d2"
TOML = """
[providers.gpu]
type = "openai"
base_url = "http://10.1.2.3:8080/v1"
api_key_env = "GPU_KEY"
timeout_s = 20
models = ["qwen", "nomic"]
model = "qwen"
"""


def test_a_toml_file_registers_providers_beside_the_builtins(tmp_path):
    path = tmp_path / "providers.toml"
    path.write_text(TOML)
    settings = load_settings("x.db", path, environ={"GPU_KEY": KEY})
    assert settings.database_url == "x.db"
    assert sorted(settings.providers) == ["gpu", "local", "rules"]
    gpu = settings.providers["gpu"]
    assert (gpu.api_key, gpu.timeout_s, gpu.models) == (KEY, 20.0, ("qwen", "nomic"))
    assert KEY not in repr(settings) and KEY not in repr(gpu)
    assert settings.providers.names_for("extraction") == ["gpu", "rules"]
    assert settings.providers.names_for("embedding") == ["gpu", "local"]


def test_the_environment_names_the_file_and_a_json_file_with_a_key_file_works(tmp_path):
    (tmp_path / "key").write_text(KEY + "\n")
    path = tmp_path / "providers.json"
    path.write_text(json.dumps({"providers": {"gpu": {
        "type": "openai", "base_url": "https://models.example/v1",
        "api_key_file": str(tmp_path / "key")}}}))
    settings = load_settings(environ={"REMEM_PROVIDERS_FILE": str(path),
                                      "REMEM_DATABASE_URL": "y.db"})
    assert settings.database_url == "y.db" and settings.providers["gpu"].api_key == KEY


@pytest.mark.parametrize(("table", "needle"), [
    ({"rules": {"type": "openai", "base_url": "http://h/v1"}}, "built in"),
    ({"Bad Name": {"type": "openai", "base_url": "http://h/v1"}}, "must match"),
    ({"gpu": {"type": "openai"}}, "base_url"),
    ({"gpu": {"type": "openai", "base_url": "file:///etc/passwd"}}, "base_url"),
    ({"gpu": {"type": "openai", "base_url": "http://h/v1", "api_key_env": "UNSET_VAR"}},
     "UNSET_VAR"),
    ({"gpu": {"type": "openai", "base_url": "http://h/v1", "api_key": "sk"}}, "unknown"),
    ({"gpu": {"type": "openai", "base_url": "http://h/v1", "models": []}}, "models"),
    ({"gpu": {"type": "local", "base_url": "http://h/v1"}}, "no endpoint"),
])
def test_bad_provider_entries_are_refused_when_loaded(table, needle):
    with pytest.raises(ConfigInvalid, match=needle):
        ProviderRegistry.from_mapping(table, environ={})


def test_an_unreadable_or_malformed_file_is_config_invalid_without_its_path(tmp_path):
    with pytest.raises(ConfigInvalid, match="cannot be read") as info:
        load_settings(providers_file=tmp_path / "secret-dir" / "missing.toml", environ={})
    assert "secret-dir" not in info.value.message
    bad = tmp_path / "p.toml"
    bad.write_text("[providers.gpu\n")
    with pytest.raises(ConfigInvalid, match="not valid TOML"):
        load_settings(providers_file=bad, environ={})
    other = tmp_path / "p.json"
    other.write_text('{"database_url": "x", "providers": {}}')
    with pytest.raises(ConfigInvalid, match="one table"):
        load_settings(providers_file=other, environ={})


def test_a_section_takes_endpoint_key_and_timeout_ceiling_from_the_operator():
    registry = ProviderRegistry.from_mapping(
        {"gpu": {"type": "openai", "base_url": "http://10.1.2.3:8080/v1",
                 "api_key_env": "GPU_KEY", "timeout_s": 20, "models": ["qwen", "nomic"]}},
        environ={"GPU_KEY": KEY})
    extractor = build_extractor({"provider": "gpu", "timeout_s": 999}, registry, strict=True)
    assert isinstance(extractor, OpenAICompatExtractor)
    call = extractor._call
    assert (call.base_url, call._api_key, call.model, call._timeout_s) == (
        "http://10.1.2.3:8080/v1", KEY, "qwen", 20)  # first allowed model; timeout capped
    judge = build_judge({"provider": "gpu", "model": "nomic", "temperature": 0.5}, registry)
    assert (judge._call.model, judge._call._temperature) == ("nomic", 0.5)


def test_an_unusable_section_builds_a_stand_in_that_raises_on_use():
    extractor = build_extractor({"provider": "gone"}, ProviderRegistry())
    assert isinstance(extractor, UnusableModel)
    with pytest.raises(ConfigInvalid, match="not a registered extraction provider"):
        extractor.extract("I live in Lyon.", role="user", occurred_at=None)
    with pytest.raises(ConfigInvalid):
        build_extractor({"provider": "gone"}, ProviderRegistry(), strict=True)


def test_remem_open_takes_settings_or_a_dict(tmp_path):
    settings = load_settings(str(tmp_path / "a.db"), environ={})
    store = remem.open(settings)
    assert sorted(store.providers) == ["local", "rules"]
    store.close()
    store = remem.open(tmp_path / "b.db", providers={"gpu": {"type": "openai",
                                                             "base_url": "http://h/v1"}})
    assert "gpu" in store.providers
    store.create_memory("m1", {"judge": {"provider": "gpu", "model": "m"}})
    assert store.memory("m1").judge._call.base_url == "http://h/v1"
    store.close()
    with pytest.raises(ConfigInvalid):
        remem.open(tmp_path / "c.db", providers=["gpu"])


def test_the_config_schema_and_the_registry_allow_the_same_model_options():
    from remem.providers.registry import SECTION_OPTIONS
    from remem.service.config import CONFIG_SCHEMA

    for section, allowed in SECTION_OPTIONS.items():
        spec = CONFIG_SCHEMA["properties"][section]
        assert spec["additionalProperties"] is False
        assert set(spec["properties"]) == allowed | {"provider"}
        assert not {"base_url", "api_key", "api_key_env", "api_key_file",
                    "model_path", "tokenizer_path"} & set(spec["properties"])


def test_a_misspelt_network_type_is_named_as_the_problem():
    """Probe 8: type 'openia' with a base_url was told it 'takes no endpoint or key', as if the
    URL were the mistake; the error now points at the type and names the network types."""
    with pytest.raises(ConfigInvalid) as err:
        remem.open(":memory:", providers={"gpu": {"type": "openia",
                                                  "base_url": "http://10.0.0.5/v1"}})
    assert "only type openai calls a service" in err.value.message
    assert "spelling" in err.value.message and err.value.details["path"] == "providers.gpu.type"

"""Memory configuration: a JSON Schema (validated with ``jsonschema``) and typed accessors."""

from __future__ import annotations

from typing import Any

import jsonschema

from remem.domain.model import Cardinality, Kind, OnChange
from remem.errors import ConfigInvalid

#: A model-backed provider (extraction or judge): the offline rules, or an OpenAI-compatible
#: server. The API key is read from the environment variable named by ``api_key_env``.
_MODEL_SPEC: dict[str, Any] = {
    "type": "object",
    "properties": {
        "provider": {"enum": ["rules", "openai"]},
        "base_url": {"type": "string"},
        "model": {"type": "string"},
        "api_key_env": {"type": "string"},
        "timeout_s": {"type": "number", "exclusiveMinimum": 0},
    },
    "required": ["provider"],
    "additionalProperties": False,
}

CONFIG_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "remem memory config",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "description": {"type": "string", "maxLength": 1024},
        "default_on_change": {"enum": [o.value for o in OnChange]},
        "keys": {
            "type": "object",
            "propertyNames": {"pattern": "^[a-z][a-z0-9_]{0,127}$"},
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "cardinality": {"enum": [c.value for c in Cardinality]},
                    "on_change": {"enum": [o.value for o in OnChange]},
                    "kind": {"enum": [k.value for k in Kind]},
                },
            },
        },
        "embedding": {
            "type": "object",
            "properties": {
                "provider": {"type": "string"},
                "model": {"type": "string"},
                "base_url": {"type": "string"},
                "dimensions": {"type": "integer", "minimum": 1},
            },
            "required": ["provider"],
        },
        "retention": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"keep_days": {"type": "integer", "minimum": 1}},
        },
        "consolidation_interval_hours": {"type": "number", "minimum": 0},
        "extraction": _MODEL_SPEC,
        "judge": _MODEL_SPEC,
    },
}

_VALIDATOR = jsonschema.Draft202012Validator(CONFIG_SCHEMA)


def validate_config(config: Any) -> dict[str, Any]:
    """Validates a memory config; returns it (``{}`` for None).

    Raises:
        ConfigInvalid: the config does not match ``CONFIG_SCHEMA``; the message names the
            JSON path and the problem.
    """
    if config is None:
        return {}
    errors = sorted(_VALIDATOR.iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        path = "/".join(str(p) for p in e.absolute_path) or "(root)"
        raise ConfigInvalid(f"Memory config is invalid at {path}: {e.message}.", path=path)
    return dict(config)


def key_policy(config: dict[str, Any], key: str) -> tuple[Cardinality | None, OnChange]:
    """(cardinality from config or None, on_change from config or default supersede)."""
    spec = config.get("keys", {}).get(key, {})
    card = Cardinality(spec["cardinality"]) if "cardinality" in spec else None
    on_change = OnChange(spec.get("on_change") or config.get("default_on_change") or "supersede")
    return card, on_change

"""Memory configuration: a JSON Schema (validated with ``jsonschema``) and typed accessors."""

from __future__ import annotations

from typing import Any

import jsonschema

from remem.domain.model import Cardinality, Kind, OnChange
from remem.errors import ConfigInvalid
from remem.service.jobs.schedule import MIN_INTERVAL_HOURS
from remem.providers.registry import check_section
from remem.settings import NAME_PATTERN

_PROVIDER_NAME: dict[str, Any] = {"type": "string", "pattern": NAME_PATTERN}
_TIMEOUT: dict[str, Any] = {"type": "number", "exclusiveMinimum": 0, "maximum": 3600}
_RETRIES: dict[str, Any] = {"type": "integer", "minimum": 0, "maximum": 10}

#: A model-backed provider (extraction or judge): a provider *name* the operator registered
#: (``rules`` always exists) plus model-level options. Endpoints, keys, environment variables
#: and files are the operator's (``remem.settings``); this schema has no field for them.
_MODEL_SPEC: dict[str, Any] = {
    "type": "object",
    "properties": {
        "provider": _PROVIDER_NAME,
        "model": {"type": "string", "minLength": 1, "maxLength": 256},
        "temperature": {"type": "number", "minimum": 0, "maximum": 2},
        "max_tokens": {"type": "integer", "minimum": 1, "maximum": 32768},
        "timeout_s": _TIMEOUT,
        "seed": {"type": "integer"},
        "prompt_version": {"type": "string", "pattern": "^[a-z]+_v[0-9]+$"},
        "max_retries": _RETRIES,
    },
    "required": ["provider"],
    "additionalProperties": False,
}

#: The embedding model: a registered provider name (``local`` always exists) plus model-level
#: options. Batch size and threads are the operator's (provider ``options``): each distinct
#: option set is a process-wide model session, so a tenant must not be able to mint them.
_EMBEDDING_SPEC: dict[str, Any] = {
    "type": "object",
    "properties": {
        "provider": _PROVIDER_NAME,
        "model": {"type": "string", "minLength": 1, "maxLength": 256},
        "model_id": {"type": "string", "minLength": 1, "maxLength": 256},
        "dimensions": {"type": "integer", "minimum": 1, "maximum": 16384},
        "request_dimensions": {"type": "boolean"},
        "timeout_s": _TIMEOUT,
        "max_retries": _RETRIES,
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
        "embedding": _EMBEDDING_SPEC,
        "retention": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"keep_days": {"type": "integer", "minimum": 1},
                           "interval_hours": {"type": "number",
                                              "minimum": MIN_INTERVAL_HOURS}},
        },
        "consolidation_interval_hours": {"type": "number", "minimum": MIN_INTERVAL_HOURS},
        "occurrences": {"type": "boolean"},
        "digests": {"type": "boolean"},
        "extraction": _MODEL_SPEC,
        "judge": _MODEL_SPEC,
    },
}

_VALIDATOR = jsonschema.Draft202012Validator(CONFIG_SCHEMA)
_MODEL_SECTIONS = ("extraction", "judge", "embedding")


def validate_config(config: Any, providers: Any = None) -> dict[str, Any]:
    """Validates a memory config; returns it (``{}`` for None).

    Args:
        config: the config object.
        providers: the operator's ``ProviderRegistry`` (None: only ``rules`` and ``local``);
            the model sections must name providers registered there for their purpose, and
            models inside a provider's allow-list.

    Raises:
        ConfigInvalid: the config does not match ``CONFIG_SCHEMA`` (an endpoint, key,
            environment variable or file in a model section included), or names a provider
            or model the registry does not offer; the message names the JSON path and the
            problem, and lists registered provider names (never their URLs).
    """
    if config is None:
        return {}
    errors = sorted(_VALIDATOR.iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        path = "/".join(str(p) for p in e.absolute_path) or "(root)"
        if e.validator == "additionalProperties" and path in _MODEL_SECTIONS:
            check_section(path, config[path], providers)  # explains endpoints and keys
        raise ConfigInvalid(f"Memory config is invalid at {path}: {e.message}.", path=path)
    for section in _MODEL_SECTIONS:
        if section in config:
            check_section(section, config[section], providers)
    return dict(config)


#: Occurrences are on unless a memory's config says ``"occurrences": false`` (KickSide: "the
#: same claim stated again later is a new item with its own valid_at").
DEFAULT_OCCURRENCES = True


def occurrences_enabled(config: dict[str, Any]) -> bool:
    """Whether a later automatic statement of a current claim is recorded as a new item (an
    occurrence linked to the claim) rather than as provenance of the first item only."""
    return bool(config.get("occurrences", DEFAULT_OCCURRENCES))


def key_policy(config: dict[str, Any], key: str) -> tuple[Cardinality | None, OnChange]:
    """(cardinality from config or None, on_change from config or default supersede)."""
    spec = config.get("keys", {}).get(key, {})
    card = Cardinality(spec["cardinality"]) if "cardinality" in spec else None
    on_change = OnChange(spec.get("on_change") or config.get("default_on_change") or "supersede")
    return card, on_change

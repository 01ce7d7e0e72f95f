"""The one place that turns configuration into model adapters (STYLE.md habit 2).

An embedder spec is a JSON-like dict: ``{"provider": <name>, **options}``. The provider name picks
a factory from :data:`EMBEDDERS`; the remaining keys are passed to it as keyword arguments and
checked against its signature first, so a typo fails with the list of accepted keys. Examples::

    build_embedder(None)                                   # LocalEmbedder()
    build_embedder({"provider": "local", "batch_size": 32})
    build_embedder({"provider": "openai", "base_url": "http://127.0.0.1:8080/v1",
                    "model": "nomic-embed-text", "dimensions": 768})

Building never loads a model or opens a connection; that happens on first use.
"""

from __future__ import annotations

import inspect
import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from remem.errors import ConfigInvalid, UnsupportedCapability
from remem.ports import Embedder, Tokenizer
from remem.providers.local import LocalEmbedder
from remem.providers.openai_compat import OpenAICompatEmbedder
from remem.providers.tokenizers import get_tokenizer

EmbedderFactory = Callable[..., Embedder]

DEFAULT_EMBEDDER = "local"
DEFAULT_TOKENIZER = "o200k_base"

EMBEDDERS: dict[str, EmbedderFactory] = {
    "local": LocalEmbedder,
    "openai": OpenAICompatEmbedder,
}
"""Provider name -> factory taking the spec's options as keyword arguments."""


def register_embedder(name: str, factory: EmbedderFactory) -> None:
    """Adds or replaces an embedder provider (e.g. a ``"fake"`` one for tests).

    Args:
        name: provider name used in specs.
        factory: callable taking keyword options and returning an Embedder without doing I/O.
    """
    EMBEDDERS[name] = factory


def build_embedder(spec: Mapping[str, Any] | None = None) -> Embedder:
    """Builds the embedder a spec describes.

    Args:
        spec: ``{"provider": name, **options}``; ``None``, ``{}`` or a spec without
            ``"provider"`` means the local bundled model.

    Returns:
        An unloaded Embedder (no file read, no connection made).

    Raises:
        UnsupportedCapability: unknown provider; the message lists the known ones.
        ConfigInvalid: the spec is not a mapping, or has unknown or missing options
            (the message lists the accepted ones).
        InvalidInput: an option value is out of range (raised by the adapter).
    """
    if spec is None:
        spec = {}
    if not isinstance(spec, Mapping):
        raise ConfigInvalid(f"An embedder spec must be an object, got {type(spec).__name__}.")
    options = dict(spec)
    provider = options.pop("provider", DEFAULT_EMBEDDER)
    factory = EMBEDDERS.get(provider) if isinstance(provider, str) else None
    if factory is None:
        raise UnsupportedCapability(
            f"Unknown embedding provider {provider!r}; supported: {', '.join(sorted(EMBEDDERS))}.",
            provider=str(provider),
            supported=sorted(EMBEDDERS),
        )
    _check_options(provider, factory, options)
    return factory(**options)


_shared: dict[str, Embedder] = {}
_shared_lock = threading.Lock()


def shared_embedder(spec: Mapping[str, Any] | None = None) -> Embedder:
    """The process-wide embedder for a spec: built once, then reused (models load slowly).

    Specs are compared by their canonical JSON, so ``None``, ``{}`` and ``{"provider":
    "local"}`` share one local model.

    Raises:
        The same errors as :func:`build_embedder`.
    """
    options = dict(spec or {})
    options.setdefault("provider", DEFAULT_EMBEDDER)
    key = json.dumps(options, sort_keys=True, default=str)
    found = _shared.get(key)
    if found is not None:
        return found
    with _shared_lock:
        if key not in _shared:
            _shared[key] = build_embedder(options)
        return _shared[key]


def build_tokenizer(name: str | None = None) -> Tokenizer:
    """Returns the process-wide tokenizer for an encoding name (default ``"o200k_base"``).

    Raises:
        UnsupportedCapability: unknown name; the message lists the supported ones.
        ArtifactUnavailable: the offline BPE files are missing or corrupt.
    """
    return get_tokenizer(name or DEFAULT_TOKENIZER)


def _check_options(provider: str, factory: EmbedderFactory, options: dict[str, Any]) -> None:
    signature = inspect.signature(factory)
    accepted = sorted(
        p.name
        for p in signature.parameters.values()
        if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    )
    try:
        signature.bind(**options)
    except TypeError as exc:
        unknown = sorted(set(options) - set(accepted))
        what = f"unknown option(s) {', '.join(unknown)}" if unknown else str(exc)
        raise ConfigInvalid(
            f"Embedding provider '{provider}': {what}. Accepted options: {', '.join(accepted)}.",
            provider=provider,
            unknown=unknown,
            accepted=accepted,
        ) from exc


# --- extractors and judges -------------------------------------------------------------------
def _rule_extractor(**options: Any) -> Any:
    from remem.providers.rules import RuleExtractor

    if options:
        raise ConfigInvalid(f"the rules extractor takes no options (got {sorted(options)}).",
                            path="extraction")
    return RuleExtractor()


def _openai_extractor(**options: Any) -> Any:
    from remem.providers.llm import OpenAICompatExtractor

    return OpenAICompatExtractor(**_with_api_key(options))


def _rule_judge(**options: Any) -> Any:
    from remem.providers.judge import RuleJudge

    return RuleJudge()


def _openai_judge(**options: Any) -> Any:
    from remem.providers.llm import OpenAICompatJudge

    return OpenAICompatJudge(**_with_api_key(options))


def _with_api_key(options: dict[str, Any]) -> dict[str, Any]:
    """``api_key_env`` names an environment variable holding the key (never the key itself
    in the memory config)."""
    import os

    opts = dict(options)
    env = opts.pop("api_key_env", None)
    if env:
        opts["api_key"] = os.environ.get(env)
    return opts


EXTRACTORS: dict[str, Callable[..., Any]] = {"rules": _rule_extractor,
                                             "openai": _openai_extractor}
JUDGES: dict[str, Callable[..., Any]] = {"rules": _rule_judge, "openai": _openai_judge}


def _build(table: dict[str, Callable[..., Any]], spec: Mapping[str, Any] | None,
           what: str) -> Any:
    spec = dict(spec or {"provider": "rules"})
    name = spec.pop("provider", "rules")
    factory = table.get(name)
    if factory is None:
        raise UnsupportedCapability(f"unknown {what} provider {name!r}; known: {sorted(table)}.",
                                    provider=name)
    return factory(**spec)


def build_extractor(spec: Mapping[str, Any] | None = None) -> Any:
    """Extractor from a memory's ``extraction`` config (default: the offline rule extractor)."""
    return _build(EXTRACTORS, spec, "extraction")


def build_judge(spec: Mapping[str, Any] | None = None) -> Any:
    """Judge from a memory's ``judge`` config (default: the rule judge -> key policy)."""
    return _build(JUDGES, spec, "judge")

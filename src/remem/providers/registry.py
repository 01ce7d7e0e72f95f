"""The one place that turns configuration into model adapters (STYLE.md habit 2).

Two levels. Adapter *types* (``local``, ``openai``, code-registered ones such as ``hash``) are
built from full specs by :func:`build_embedder`; only operator code does that. A memory's
config sections (``extraction``, ``judge``, ``embedding``) name a *provider* registered by the
operator (``remem.settings``) and model-level options only; :func:`build_extractor`,
:func:`build_judge` and :func:`memory_embedder` merge the two, taking the endpoint and key
from the operator's registry, never from the memory config.

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

import functools
import inspect
import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from remem.errors import ConfigInvalid, InvalidInput, UnsupportedCapability
from remem.ports import Embedder, Tokenizer
from remem.providers.local import LocalEmbedder
from remem.providers.openai_compat import OpenAICompatEmbedder
from remem.providers.tokenizers import get_tokenizer
from remem.settings import NETWORK_TYPES, ProviderRegistry, ProviderSpec

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


# --- memory config sections -> adapters, through the operator's provider registry ------------
CHAT_OPTIONS = frozenset({"model", "temperature", "max_tokens", "timeout_s", "seed",
                          "prompt_version", "max_retries"})
EMBEDDING_OPTIONS = frozenset({"model", "dimensions", "timeout_s", "request_dimensions",
                               "max_retries", "model_id"})
SECTION_OPTIONS = {"extraction": CHAT_OPTIONS, "judge": CHAT_OPTIONS,
                   "embedding": EMBEDDING_OPTIONS}
"""What a memory config may set per section besides ``provider``: model-level options only."""
DEFAULT_PROVIDER = {"extraction": "rules", "judge": "rules", "embedding": "local"}


class UnusableModel:
    """Stands in for a model a stored memory config cannot use (an endpoint or key written
    by an older version, or a provider the operator no longer registers). Sends nothing;
    every use raises the ConfigInvalid that explains what to do."""

    name = "unusable"
    version = "-"

    def __init__(self, error: ConfigInvalid) -> None:
        self.error = error

    def extract(self, *args: Any, **kwargs: Any) -> Any:
        raise self.error

    def judge(self, *args: Any, **kwargs: Any) -> Any:
        raise self.error


def build_extractor(spec: Mapping[str, Any] | None = None, providers: Any = None, *,
                    strict: bool = False) -> Any:
    """Extractor for a memory's ``extraction`` section (default: the offline rules).

    Args:
        spec: ``{"provider": <registered name>, **model options}`` or None.
        providers: the operator's ``ProviderRegistry`` (None: only the built-ins).
        strict: raise ConfigInvalid for an unusable section instead of returning an
            :class:`UnusableModel` that raises it on use.
    """
    return _chat("extraction", spec, providers, strict)


def build_judge(spec: Mapping[str, Any] | None = None, providers: Any = None, *,
                strict: bool = False) -> Any:
    """Judge for a memory's ``judge`` section (default: the rule judge -> key policy); the
    arguments are as for :func:`build_extractor`."""
    return _chat("judge", spec, providers, strict)


def memory_embedder(spec: Mapping[str, Any] | None, providers: Any = None) -> Embedder:
    """The process-wide embedder for a memory's ``embedding`` section (default ``local``).

    Raises:
        ConfigInvalid: the section names an endpoint, a key, an option it may not set, a
            provider that is not registered for embedding, or a model outside its allow-list.
    """
    prov, opts = resolve_section("embedding", spec, providers)
    if prov.type not in NETWORK_TYPES:  # same cache entry as shared_embedder's
        _check_memory_options(prov, EMBEDDERS.get(prov.type), opts, "embedding")
        return shared_embedder({"provider": prov.type, **opts})
    secret = opts.pop("api_key", None)
    key = json.dumps([prov.name, prov.type, prov.base_url, _fingerprint(secret), opts],
                     sort_keys=True, default=str)
    found = _shared.get(key)
    if found is not None:
        return found
    with _shared_lock:
        if key not in _shared:
            _shared[key] = _construct(prov, EMBEDDERS.get(prov.type),
                                      {**opts, "api_key": secret}, "embedding")
        return _shared[key]


def check_section(section: str, spec: Any, providers: Any) -> None:
    """Builds a memory config section against the registry (no I/O) to refuse it early.

    Raises:
        ConfigInvalid: as for :func:`resolve_section`, or an option value the adapter
            refuses.
    """
    if section == "embedding":
        prov, opts = resolve_section(section, spec, providers)
        _construct(prov, EMBEDDERS.get(prov.type), opts, section)
    else:
        _chat(section, spec, providers, True)


def resolve_section(section: str, spec: Any, providers: Any) -> tuple[Any, dict[str, Any]]:
    """(provider, constructor options) for a memory config section.

    The endpoint, key and timeout ceiling come from the operator's provider; the memory
    config contributes only model-level options.

    Raises:
        ConfigInvalid: see :func:`memory_embedder`. Messages never contain an endpoint or key.
    """
    if spec is None:
        spec = {}
    if not isinstance(spec, Mapping):
        raise ConfigInvalid(f"Memory config {section} must be an object.", path=section)
    opts = dict(spec)
    name = opts.pop("provider", DEFAULT_PROVIDER[section])
    allowed = SECTION_OPTIONS[section]
    refused = sorted(set(opts) - allowed)
    if refused:
        raise ConfigInvalid(
            f"Memory config {section} may not set {', '.join(refused)}: model endpoints and "
            "credentials belong to the operator. Ask the operator to register the endpoint "
            f"under a name (providers file) and set {section}.provider to that name; "
            f"{section} may also set {', '.join(sorted(allowed))}.",
            path=f"{section}/{refused[0]}", refused=refused)
    registry = providers if providers is not None else ProviderRegistry()
    prov = registry.get(name) if isinstance(name, str) else None
    if prov is None and section == "embedding" and isinstance(name, str) \
            and name in EMBEDDERS and name not in NETWORK_TYPES:
        prov = ProviderSpec(name=name, type=name)  # an offline embedder registered in code
    if prov is None or not prov.serves(section):
        names = _names_for(registry, section)
        raise ConfigInvalid(
            f"Memory config {section}.provider {name!r} is not a registered {section} "
            f"provider; registered: {', '.join(names)}. Model endpoints are registered by "
            "the operator (--providers-file / REMEM_PROVIDERS_FILE).",
            path=f"{section}/provider", registered=names)
    return prov, _merge(section, prov, opts)


def _merge(section: str, prov: Any, opts: dict[str, Any]) -> dict[str, Any]:
    model = opts.get("model") or prov.model
    if prov.models is not None:
        model = model or prov.models[0]
        if model not in prov.models:
            raise ConfigInvalid(
                f"Provider {prov.name!r} allows the models {', '.join(prov.models)}; "
                f"{section}.model {model!r} is not one of them.", path=f"{section}/model",
                provider=prov.name, models=list(prov.models))
    if prov.type not in NETWORK_TYPES:
        return {**prov.options, **opts}
    if not model:
        raise ConfigInvalid(f"Provider {prov.name!r} needs a model: set {section}.model.",
                            path=f"{section}/model", provider=prov.name)
    timeout = opts.get("timeout_s", prov.timeout_s)
    if prov.timeout_s is not None and timeout is not None:
        timeout = min(timeout, prov.timeout_s)
    merged = {**opts, "model": model, "base_url": prov.base_url, "api_key": prov.api_key,
              "provider": prov.name}
    if timeout is not None:
        merged["timeout_s"] = timeout
    return merged


def _names_for(registry: Any, section: str) -> list[str]:
    names = set(registry.names_for(section))
    if section == "embedding":
        names |= {n for n in EMBEDDERS if n not in NETWORK_TYPES}
    return sorted(names)


def _fingerprint(secret: str | None) -> str | None:
    import hashlib

    return None if secret is None else hashlib.sha256(secret.encode()).hexdigest()[:16]


def _chat(section: str, spec: Any, providers: Any, strict: bool) -> Any:
    try:
        prov, opts = resolve_section(section, spec, providers)
        factory = CHAT_FACTORIES[section].get(prov.type)
        return _construct(prov, factory, opts, section)
    except ConfigInvalid as exc:
        if strict:
            raise
        return UnusableModel(exc)


def _construct(prov: Any, factory: Callable[..., Any] | None, options: dict[str, Any],
               section: str) -> Any:
    _check_memory_options(prov, factory, options, section)
    try:
        return factory(**options)
    except ConfigInvalid:
        raise
    except (InvalidInput, TypeError) as exc:
        text = exc.message if isinstance(exc, InvalidInput) else str(exc).split(") ", 1)[-1]
        raise ConfigInvalid(f"Memory config {section} for provider {prov.name!r} is invalid: "
                            f"{text}.", path=section, provider=prov.name) from exc


def _check_memory_options(prov: Any, factory: Callable[..., Any] | None,
                          options: dict[str, Any], section: str) -> None:
    """Refuses a factory-less type, and memory options an offline adapter does not take."""
    if factory is None:
        raise ConfigInvalid(f"Provider {prov.name!r} (type {prov.type!r}) cannot serve "
                            f"{section}.", path=f"{section}/provider", provider=prov.name)
    if prov.type in NETWORK_TYPES:
        return
    accepted = _params(factory)
    unknown = sorted(set(options) - set(prov.options) - accepted)
    if unknown:
        usable = sorted(accepted & SECTION_OPTIONS[section])
        raise ConfigInvalid(
            f"Provider {prov.name!r} takes no option(s) {', '.join(unknown)} in {section}; "
            f"it accepts: {', '.join(usable) or 'none'}.", path=f"{section}/{unknown[0]}",
            provider=prov.name)


@functools.lru_cache(maxsize=64)
def _params(factory: Callable[..., Any]) -> frozenset[str]:
    sig = inspect.signature(factory)
    return frozenset(p.name for p in sig.parameters.values()
                     if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))


def _rule_extractor() -> Any:
    from remem.providers.rules import RuleExtractor

    return RuleExtractor()


def _rule_judge() -> Any:
    from remem.providers.judge import RuleJudge

    return RuleJudge()


def _openai_extractor(**options: Any) -> Any:
    from remem.providers.llm import OpenAICompatExtractor

    return OpenAICompatExtractor(**options)


def _openai_judge(**options: Any) -> Any:
    from remem.providers.llm import OpenAICompatJudge

    return OpenAICompatJudge(**options)


CHAT_FACTORIES: dict[str, dict[str, Callable[..., Any]]] = {
    "extraction": {"rules": _rule_extractor, "openai": _openai_extractor},
    "judge": {"rules": _rule_judge, "openai": _openai_judge},
}
"""Provider type -> factory, per chat section (the rules take no options)."""


# --- refresh handlers of Kind-B cached facts (issue 16 point 4) ------------------------------
REFRESH_ORIGINS_ENV = "REMEM_REFRESH_ORIGINS"
"""Operator setting: comma-separated URL prefixes (or ``loopback``) the ``http-api`` refresh
handler may fetch; unset: none (a memory's writers never choose where the server connects)."""

REFRESH_HANDLERS: dict[str, Any] = {}
"""Handler name (a Source block's ``refresh.handler``, else its ``kind``) -> RefreshHandler."""


def register_refresh_handler(name: str, handler: Any) -> None:
    """Adds or replaces the refresh handler registered under ``name`` (operator code: e.g.
    ``register_refresh_handler("http-api", HttpRefreshHandler(["https://api.example/v1/"]))``).

    Raises:
        ConfigInvalid: the handler has no ``check`` method.
    """
    from remem.ports import RefreshHandler

    if not isinstance(handler, RefreshHandler):
        raise ConfigInvalid(f"Refresh handler {name!r} must have a name and a check(req) "
                            "method (remem.ports.RefreshHandler).", path="refresh_handler")
    REFRESH_HANDLERS[name] = handler


def refresh_handler(name: str) -> Any:
    """The handler registered under ``name``; ``http-api`` defaults to the shipped handler
    allowing the prefixes of ``REMEM_REFRESH_ORIGINS`` (read once, on first use).

    Raises:
        UnsupportedCapability: no handler by that name (the message lists the registered).
    """
    import os

    if name == "http-api" and name not in REFRESH_HANDLERS:
        from remem.providers.refresh_http import HttpRefreshHandler

        origins = os.environ.get(REFRESH_ORIGINS_ENV, "")
        with _shared_lock:
            REFRESH_HANDLERS.setdefault(name, HttpRefreshHandler(origins.split(",")))
    found = REFRESH_HANDLERS.get(name)
    if found is None:
        raise UnsupportedCapability(
            f"No refresh handler {name!r} is registered; registered: "
            f"{', '.join(sorted(REFRESH_HANDLERS | {'http-api': None}))}.",
            handler=name, supported=sorted(REFRESH_HANDLERS | {"http-api": None}))
    return found

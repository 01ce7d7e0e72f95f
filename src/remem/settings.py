"""Operator settings, read once at the edge: the database URL and the model provider registry.

Model endpoints and their credentials belong to the operator, never to a memory's config. The
operator registers each endpoint under a name; a memory config then picks a provider by that
name and sets model-level options only (``model``, ``temperature``, ``dimensions``, ...).

Sources, in order of precedence:

- Python: ``remem.open(url, providers={...})`` (a dict like the file's ``providers`` table, a
  :class:`ProviderRegistry` or a :class:`Settings`).
- CLI and server: a JSON or TOML operator file given by ``--providers-file`` or the
  ``REMEM_PROVIDERS_FILE`` environment variable; the database URL from ``--db`` or
  ``REMEM_DATABASE_URL``.

A providers file (TOML)::

    [providers.gpu]
    type = "openai"                       # an OpenAI-compatible HTTP service
    base_url = "http://10.0.0.5:8080/v1"
    api_key_env = "GPU_API_KEY"           # or api_key_file = "/run/secrets/gpu_key"
    timeout_s = 30                        # default and upper bound for memories
    models = ["qwen2.5-7b-instruct", "nomic-embed-text"]   # optional allow-list
    model = "qwen2.5-7b-instruct"         # optional default model

The names ``rules`` (the offline rule extractor and judge) and ``local`` (the bundled
embedder) always exist and cannot be redefined. Keys are read from the environment or the
file when the settings are loaded, and never appear in ``repr``, errors or memory configs.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remem.errors import ConfigInvalid

PROVIDERS_FILE_ENV = "REMEM_PROVIDERS_FILE"
DATABASE_URL_ENV = "REMEM_DATABASE_URL"

NAME_PATTERN = r"^[a-z][a-z0-9_-]{0,63}$"
"""Provider names: lower-case letters, digits, '_' and '-', starting with a letter."""

BUILTIN_NAMES = ("local", "rules")
CHAT_TYPES = frozenset({"openai", "rules"})
"""Provider types that serve ``extraction`` and ``judge``."""
NETWORK_TYPES = frozenset({"openai"})
"""Provider types that talk to an endpoint; only an operator entry can define one."""

_ENTRY_KEYS = {"type", "base_url", "api_key_env", "api_key_file", "timeout_s", "models",
               "model", "options"}


@dataclass(frozen=True)
class ProviderSpec:
    """One registered model provider.

    Attributes:
        name: the name memory configs use.
        type: ``openai`` (OpenAI-compatible HTTP service), ``rules``, ``local`` or another
            embedder type registered in code (``providers.registry.register_embedder``).
        base_url: the endpoint (``openai`` only).
        api_key: the resolved key (``None`` for keyless services); never printed.
        timeout_s: default per-request timeout in seconds, also the most a memory may set.
        models: allow-list of model names, or ``None`` for any.
        model: the model used when a memory config names none.
        options: constructor options for non-network types (e.g. a local ``model_path``).
    """

    name: str
    type: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float | None = None
    models: tuple[str, ...] | None = None
    model: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def serves(self, section: str) -> bool:
        """Whether this provider can serve a config section (extraction, judge, embedding)."""
        if section in ("extraction", "judge"):
            return self.type in CHAT_TYPES
        return self.type not in CHAT_TYPES or self.type in NETWORK_TYPES


BUILTINS: dict[str, ProviderSpec] = {
    "rules": ProviderSpec(name="rules", type="rules"),
    "local": ProviderSpec(name="local", type="local"),
}


class ProviderRegistry(Mapping[str, ProviderSpec]):
    """Registered providers by name: the built-ins plus the operator's entries (read-only)."""

    def __init__(self, entries: Mapping[str, ProviderSpec] | None = None) -> None:
        self._by_name: dict[str, ProviderSpec] = {**BUILTINS, **dict(entries or {})}

    def __getitem__(self, name: str) -> ProviderSpec:
        return self._by_name[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def __repr__(self) -> str:
        return f"ProviderRegistry({sorted(self._by_name)})"

    def names_for(self, section: str) -> list[str]:
        """Sorted names of the providers that can serve ``section``."""
        return sorted(n for n, p in self._by_name.items() if p.serves(section))

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any] | None,
                     environ: Mapping[str, str] | None = None) -> ProviderRegistry:
        """Builds the registry from a ``{name: entry}`` table (the file's ``providers``).

        Raises:
            ConfigInvalid: a bad name or entry, a redefined built-in, or a key that cannot be
                read (the message names the provider and the variable or file, never a key).
        """
        if table is None:
            return cls()
        if isinstance(table, ProviderRegistry):
            return table
        if not isinstance(table, Mapping):
            raise ConfigInvalid("Model providers must be a table of {name: entry}.",
                                path="providers")
        env = os.environ if environ is None else environ
        return cls({name: _entry(name, entry, env) for name, entry in table.items()})


@dataclass(frozen=True)
class Settings:
    """What the operator configures for a process: where the data is and which models exist.

    Attributes:
        database_url: SQLite path or ``postgresql://`` URL (``None``: the caller's default).
        providers: the provider registry.
    """

    database_url: str | None = field(default=None, repr=False)
    providers: ProviderRegistry = field(default_factory=ProviderRegistry)


def load_settings(database_url: str | None = None, providers_file: str | Path | None = None,
                  environ: Mapping[str, str] | None = None) -> Settings:
    """Reads the operator's settings once: arguments first, then the environment.

    Args:
        database_url: overrides ``REMEM_DATABASE_URL``.
        providers_file: a JSON or TOML file with a ``providers`` table; overrides
            ``REMEM_PROVIDERS_FILE``. Neither given: only the built-in providers.
        environ: the environment to read (default ``os.environ``).

    Raises:
        ConfigInvalid: the file cannot be read or parsed, or an entry is invalid.
    """
    env = os.environ if environ is None else environ
    url = database_url or env.get(DATABASE_URL_ENV) or None
    path = providers_file or env.get(PROVIDERS_FILE_ENV) or None
    table = read_providers_file(path, env) if path else None
    return Settings(database_url=url, providers=ProviderRegistry.from_mapping(table, env))


#: Bytes an operator providers file may hold.
MAX_PROVIDERS_FILE_BYTES = 1024 * 1024


def read_providers_file(path: str | Path, environ: Mapping[str, str] | None = None
                        ) -> dict[str, Any]:
    """The ``providers`` table of an operator file (``.toml``, else JSON).

    Raises:
        ConfigInvalid: unreadable file, bad syntax, or top-level keys other than ``providers``.
    """
    p = Path(path)
    try:
        with p.open("rb") as stream:
            raw = stream.read(MAX_PROVIDERS_FILE_BYTES + 1)  # never more: /dev/zero, a pipe
    except OSError as exc:
        raise ConfigInvalid(f"The providers file {p.name!r} cannot be read ({exc.strerror}); "
                            "check --providers-file / REMEM_PROVIDERS_FILE.",
                            path="providers_file") from exc
    if len(raw) > MAX_PROVIDERS_FILE_BYTES:
        raise ConfigInvalid(f"The providers file {p.name!r} is over "
                            f"{MAX_PROVIDERS_FILE_BYTES:,} bytes; an operator file registers a "
                            "few providers: check --providers-file / REMEM_PROVIDERS_FILE.",
                            path="providers_file", limit=MAX_PROVIDERS_FILE_BYTES)
    try:
        if p.suffix.lower() == ".toml":
            import tomllib

            doc = tomllib.loads(raw.decode())
        else:
            doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        kind = "TOML" if p.suffix.lower() == ".toml" else "JSON"
        raise ConfigInvalid(f"The providers file {p.name!r} is not valid {kind} ({exc}).",
                            path="providers_file") from exc
    if not isinstance(doc, dict) or set(doc) - {"providers"}:
        raise ConfigInvalid(f"The providers file {p.name!r} must hold one table, 'providers', "
                            "mapping names to entries.", path="providers_file")
    return doc.get("providers") or {}


def coerce_settings(providers: Any) -> Settings:
    """Settings from what ``remem.open(providers=...)`` accepts: None, a dict, a
    ProviderRegistry or a Settings.

    Raises:
        ConfigInvalid: anything else, or an invalid entry.
    """
    if isinstance(providers, Settings):
        return providers
    if providers is None or isinstance(providers, Mapping):
        return Settings(providers=ProviderRegistry.from_mapping(providers))
    raise ConfigInvalid("providers must be a dict of {name: entry}, a ProviderRegistry or a "
                        f"Settings, not {type(providers).__name__}.", path="providers")


def _entry(name: Any, entry: Any, env: Mapping[str, str]) -> ProviderSpec:
    where = f"providers.{name}"
    if not isinstance(name, str) or not re.fullmatch(NAME_PATTERN, name):
        raise ConfigInvalid(f"Provider name {name!r} must match {NAME_PATTERN}.", path=where)
    if name in BUILTINS:
        raise ConfigInvalid(f"Provider name {name!r} is built in and cannot be redefined; "
                            "register the endpoint under another name.", path=where)
    if isinstance(entry, ProviderSpec):
        return entry
    if not isinstance(entry, Mapping):
        raise ConfigInvalid(f"Provider {name!r} must be a table.", path=where)
    unknown = sorted(set(entry) - _ENTRY_KEYS)
    if unknown:
        raise ConfigInvalid(f"Provider {name!r} has unknown field(s) {', '.join(unknown)}; "
                            f"accepted: {', '.join(sorted(_ENTRY_KEYS))}.", path=where)
    kind = entry.get("type")
    if not isinstance(kind, str) or not kind:
        raise ConfigInvalid(f"Provider {name!r} needs a type ('openai' for an "
                            "OpenAI-compatible service).", path=f"{where}.type")
    base_url = entry.get("base_url")
    if kind in NETWORK_TYPES:
        if not isinstance(base_url, str) or not re.match(r"^https?://\S+$", base_url):
            raise ConfigInvalid(f"Provider {name!r} needs base_url, an http(s) URL.",
                                path=f"{where}.base_url")
    elif base_url is not None or "api_key_env" in entry or "api_key_file" in entry:
        raise ConfigInvalid(f"Provider {name!r} of type {kind!r} takes no endpoint or key: "
                            f"only type {', '.join(sorted(NETWORK_TYPES))} calls a service. "
                            "Check the type's spelling, or drop base_url and the key.",
                            path=f"{where}.type")
    options = entry.get("options") or {}
    if not isinstance(options, Mapping) or (options and kind in NETWORK_TYPES):
        raise ConfigInvalid(f"Provider {name!r}: options is a table for non-network types.",
                            path=f"{where}.options")
    return ProviderSpec(name=name, type=kind, base_url=base_url,
                        api_key=_api_key(name, entry, env), timeout_s=_timeout(name, entry),
                        models=_models(name, entry), model=_str_or_none(name, entry, "model"),
                        options=dict(options))


def _api_key(name: str, entry: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    var, path = entry.get("api_key_env"), entry.get("api_key_file")
    if var is not None and path is not None:
        raise ConfigInvalid(f"Provider {name!r}: give api_key_env or api_key_file, not both.",
                            path=f"providers.{name}")
    if var is not None:
        if not isinstance(var, str) or not var or var not in env:
            raise ConfigInvalid(f"Provider {name!r}: the environment variable {var!r} named by "
                                "api_key_env is not set.", path=f"providers.{name}.api_key_env")
        return env[var]
    if path is not None:
        try:
            return Path(str(path)).read_text().strip() or None
        except OSError as exc:
            raise ConfigInvalid(f"Provider {name!r}: the api_key_file cannot be read "
                                f"({exc.strerror}).", path=f"providers.{name}.api_key_file"
                                ) from exc
    return None


def _timeout(name: str, entry: Mapping[str, Any]) -> float | None:
    t = entry.get("timeout_s")
    if t is None:
        return None
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t <= 3600:
        raise ConfigInvalid(f"Provider {name!r}: timeout_s must be a number of seconds in "
                            "(0, 3600].", path=f"providers.{name}.timeout_s")
    return float(t)


def _models(name: str, entry: Mapping[str, Any]) -> tuple[str, ...] | None:
    models = entry.get("models")
    if models is None:
        return None
    if not isinstance(models, list) or not models or not all(
            isinstance(m, str) and m for m in models):
        raise ConfigInvalid(f"Provider {name!r}: models must be a non-empty list of model "
                            "names.", path=f"providers.{name}.models")
    return tuple(models)


def _str_or_none(name: str, entry: Mapping[str, Any], key: str) -> str | None:
    value = entry.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise ConfigInvalid(f"Provider {name!r}: {key} must be a non-empty string.",
                            path=f"providers.{name}.{key}")
    if key == "model" and value is not None and entry.get("models") and \
            value not in entry["models"]:
        raise ConfigInvalid(f"Provider {name!r}: model {value!r} is not in its models list.",
                            path=f"providers.{name}.model")
    return value

"""The derive Extractor a ``remem bench locomo`` run may use instead of the offline rules.

With :class:`ModelExtraction` every memory the bench builds is opened with one operator
provider, :data:`PROVIDER`, of type ``openai`` at the given endpoint, and its config names it
in the ``extraction`` section, so derive asks that chat model for each turn's claims
(``extract_v1``) and recall can return the items it forms, each counting as the turns it
cites. The model sees only what any memory's extractor sees: one turn's text, role and time;
nothing of the benchmark's annotations. Without it the bench builds memories exactly as before.

The endpoint is any OpenAI-compatible server with JSON-schema output; for a local GGUF model::

    python -m remem.testing.llmserver --model FILE.gguf --threads 1   # prints the base URL
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from remem.errors import InvalidInput

PROVIDER = "bench-extractor"
DEFAULT_TIMEOUT_S = 600.0
"""Per request: a small local model on a shared CPU takes minutes for a long reply."""
DEFAULT_MAX_TOKENS = 384
"""Reply budget: a turn's claims fit in ~100 tokens each; a small model that loops inside the
JSON (135M ones do) is cut off here (``truncated``: that turn's derive run fails) instead of
generating to the extractor's default 1024."""


@dataclass(frozen=True)
class ModelExtraction:
    """An OpenAI-compatible chat model as the derive Extractor of the bench's memories.

    Attributes:
        base_url: API root including the version, e.g. ``http://127.0.0.1:8080/v1``.
        model: model name sent with each request.
        timeout_s: per-request timeout in seconds (0 < t <= 3600).
        max_tokens: reply budget per turn.
    """

    base_url: str
    model: str
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_tokens: int = DEFAULT_MAX_TOKENS

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")) or not self.model:
            raise InvalidInput("A model extractor needs an http(s) base URL and a model name.",
                               field="extraction")

    def providers(self) -> dict[str, Any]:
        """The operator's provider registry for ``remem.open``."""
        return {PROVIDER: {"type": "openai", "base_url": self.base_url,
                           "models": [self.model], "timeout_s": self.timeout_s}}

    def section(self) -> dict[str, Any]:
        """The memory config's ``extraction`` section."""
        return {"provider": PROVIDER, "model": self.model, "max_tokens": self.max_tokens,
                "max_retries": 0}


def memory_config(digests: bool, extraction: ModelExtraction | None) -> dict[str, Any]:
    """The config of every memory a run builds."""
    config: dict[str, Any] = {"digests": digests}
    if extraction is not None:
        config["extraction"] = extraction.section()
    return config


def same_build(config: dict[str, Any], digests: bool,
               extraction: ModelExtraction | None) -> bool:
    """Whether a kept memory's config is the one this run would build (for ``reuse_db``)."""
    wanted = memory_config(digests, extraction)
    return (bool(config.get("digests")) == digests
            and config.get("extraction") == wanted.get("extraction"))

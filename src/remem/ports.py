"""Ports: the small protocols the service layer talks to (STYLE.md habit 2).

Adapters live in ``stores/`` (Store) and ``providers/`` (everything that talks to a model or a
tokenizer). Core code never branches on an adapter's name; ``providers.registry`` picks them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors.

    Attributes:
        model_id: stable identifier recorded per memory, e.g. ``"minilm-l6-v2-int8"``.
        dimensions: vector length.
    """

    model_id: str
    dimensions: int

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """Returns an array of shape ``[len(texts), dimensions]``, dtype float32, rows of norm 1."""
        ...


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens the way a named model family does (tiktoken encodings)."""

    name: str

    def count(self, text: str) -> int:
        """Number of tokens in ``text``."""
        ...


class Clock(Protocol):
    """Source of the current time (aware UTC). Injected so the domain never reads the clock."""

    def now(self) -> datetime: ...

"""A deterministic bag-of-words embedder for tests and benches that are not about embeddings.

Each word adds a hashed +-1 to one of ``dimensions`` slots, so texts sharing words get similar
vectors; rows are L2-normalised float32 (the ``Embedder`` port). Importing this module
registers it as the embedding provider ``"hash"``::

    import remem.testing.hashembed  # noqa: F401
    store.create_memory("m1", {"embedding": {"provider": "hash", "dimensions": 32}})

Every process that writes or recalls such a memory must import it first.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

from remem.providers.registry import register_embedder

_WORD = re.compile(r"\w+")


class HashEmbedder:
    """Bag-of-words vectors of ``dimensions`` floats; ``model_id`` is ``hash-<dimensions>``."""

    def __init__(self, dimensions: int = 32) -> None:
        self.model_id, self.dimensions = f"hash-{dimensions}", dimensions

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in zip(out, texts, strict=True):
            for w in _WORD.findall(text.lower()) or ["_"]:
                h = int.from_bytes(hashlib.sha256(w.encode()).digest()[:4], "big")
                row[h % self.dimensions] += 1.0 if h & 1 << 31 else -1.0
            row[0] += 1e-3  # never the zero vector
            row /= np.linalg.norm(row)
        return out


register_embedder("hash", HashEmbedder)

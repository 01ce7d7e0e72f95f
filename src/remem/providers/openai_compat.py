"""Embeddings from any OpenAI-compatible HTTP service (``POST {base_url}/embeddings``).

Uses the ``openai`` client (the ``llm`` extra), imported on first use. Works with OpenAI itself
and with local servers that speak the same API (llama.cpp, vLLM, Ollama, LM Studio, ...).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from remem.errors import (
    ArtifactUnavailable,
    EmbeddingMismatch,
    ExtractionFailed,
    InvalidInput,
)

LLM_HINT = "pip install 'remem[llm]'"
PLACEHOLDER_API_KEY = "unused"
"""Sent when no key is configured; local OpenAI-compatible servers ignore it."""


class OpenAICompatEmbedder:
    """An :class:`~remem.ports.Embedder` backed by an OpenAI-compatible embeddings endpoint.

    The constructor only stores settings; the client is created on the first call. Returned
    vectors are L2-normalised here, whatever the service does.

    Attributes:
        model_id: identifier recorded per memory; ``model`` unless ``model_id`` is given.
        dimensions: vector length every response must have.

    Args:
        base_url: API root including the version, e.g. ``"http://127.0.0.1:8080/v1"``.
        model: model name sent with each request.
        dimensions: expected vector length (> 0).
        api_key: bearer token; ``None`` sends a placeholder (for keyless local servers).
        model_id: overrides the recorded model id (e.g. to tell two deployments apart).
        request_dimensions: also send ``dimensions`` in the request (only models that can
            shorten their output accept it, e.g. OpenAI text-embedding-3-*).
        batch_size: texts per request (default 128).
        timeout_s: per-request timeout in seconds.
        max_retries: retries by the client on connection errors, 429 and 5xx.
        provider: the registered provider name, used in error messages instead of the URL.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        dimensions: int,
        api_key: str | None = None,
        model_id: str | None = None,
        request_dimensions: bool = False,
        batch_size: int = 128,
        timeout_s: float = 30.0,
        max_retries: int = 2,
        provider: str | None = None,
    ) -> None:
        if not base_url or not model:
            raise InvalidInput("An OpenAI-compatible embedder needs both base_url and model.")
        if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1:
            raise InvalidInput(f"dimensions must be a positive integer, got {dimensions!r}.")
        if batch_size < 1:
            raise InvalidInput(f"batch_size must be at least 1, got {batch_size}.")
        self.model_id = model_id or model
        self.dimensions = dimensions
        self._base_url = base_url
        self._label = f"Embedding provider {provider!r}" if provider else "The embedding service"
        self._model = model
        self._api_key = api_key
        self._request_dimensions = request_dimensions
        self._batch_size = batch_size
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._client: Any = None
        self._lock = threading.Lock()

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """Embeds texts with the remote model, ``batch_size`` texts per request.

        Args:
            texts: strings to embed (the service may reject empty strings).

        Returns:
            float32 array of shape ``[len(texts), dimensions]``, rows of L2 norm 1, in input
            order (``[0, dimensions]`` for an empty list, with no request).

        Raises:
            ArtifactUnavailable: ``openai`` is not installed, or the service cannot be reached
                or answers with an error status.
            EmbeddingMismatch: a returned vector's length differs from ``dimensions``.
            ExtractionFailed: the reply has the wrong number of vectors, or a vector that is
                zero or not finite.
            InvalidInput: ``texts`` is not a list of strings.
        """
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise InvalidInput("embed_batch takes a list of strings.")
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        client = self._get_client()
        for start in range(0, len(texts), self._batch_size):
            chunk = texts[start : start + self._batch_size]
            out[start : start + len(chunk)] = self._embed_chunk(client, chunk)
        return out

    def _embed_chunk(self, client: Any, texts: list[str]) -> np.ndarray:
        import openai

        extra: dict[str, Any] = {}
        if self._request_dimensions:
            extra["dimensions"] = self.dimensions
        try:
            response = client.embeddings.create(
                model=self._model, input=texts, encoding_format="float", **extra
            )
        except openai.APIStatusError as exc:
            raise ArtifactUnavailable(
                f"{self._label} answered HTTP {exc.status_code} for model '{self._model}'. "
                "Check the model name, key and server logs.",
                model=self._model,
                status=exc.status_code,
            ) from exc
        except openai.APIError as exc:
            raise ArtifactUnavailable(
                f"{self._label} is unreachable ({type(exc).__name__}). Check that it is "
                "running and that the operator's base_url is right.",
                model=self._model,
            ) from exc
        rows = sorted(response.data, key=lambda row: row.index)
        if len(rows) != len(texts):
            raise ExtractionFailed(
                f"Embedding service returned {len(rows)} vectors for {len(texts)} texts.",
                model=self._model,
                expected=len(texts),
                actual=len(rows),
            )
        return self._to_unit_matrix([row.embedding for row in rows])

    def _to_unit_matrix(self, vectors: list[list[float]]) -> np.ndarray:
        for vector in vectors:
            if len(vector) != self.dimensions:
                raise EmbeddingMismatch(
                    f"Model '{self._model}' returned {len(vector)}-dimensional vectors, but this "
                    f"embedder is configured for {self.dimensions} dimensions. Set dimensions to "
                    f"{len(vector)} or use a model that produces {self.dimensions}.",
                    model=self._model,
                    expected_dimensions=self.dimensions,
                    actual_dimensions=len(vector),
                )
        matrix = np.asarray(vectors, dtype=np.float64)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        if not np.all(np.isfinite(matrix)) or np.any(norms == 0):
            raise ExtractionFailed(
                f"Model '{self._model}' returned a zero or non-finite vector.", model=self._model
            )
        return (matrix / norms).astype(np.float32)

    def _get_client(self) -> Any:
        client = self._client
        if client is not None:
            return client
        with self._lock:
            if self._client is None:
                try:
                    import openai
                except ImportError as exc:
                    raise ArtifactUnavailable(
                        f"The 'openai' package is needed for OpenAI-compatible embeddings. "
                        f"Run: {LLM_HINT}",
                        package="openai",
                        hint=LLM_HINT,
                    ) from exc
                self._client = openai.OpenAI(
                    base_url=self._base_url,
                    api_key=self._api_key or PLACEHOLDER_API_KEY,
                    timeout=self._timeout_s,
                    max_retries=self._max_retries,
                )
            return self._client

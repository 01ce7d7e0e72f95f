"""A scripted OpenAI-compatible chat service on 127.0.0.1 that can answer with tool calls.

``ScriptedChatService.script(...)`` queues replies, in order: a string is a plain answer, a
list of ``(name, arguments)`` pairs is one assistant message calling those tools. Every
request body is recorded, so a test sees exactly what the agent loop sent (tools, tool
results, system prompt). Once the script is used up it answers "ok".
"""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedChatService:
    """Loopback stand-in for a chat model with tool calling (see the module doc)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._replies: deque[Any] = deque()
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                service.requests.append(body)
                reply = service._replies.popleft() if service._replies else "ok"
                payload = json.dumps(_completion(reply, len(service.requests))).encode()
                self.send_response(200)
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

    def script(self, *replies: str | list[tuple[str, dict[str, Any]]]) -> None:
        self._replies.extend(replies)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _completion(reply: Any, n: int) -> dict[str, Any]:
    if isinstance(reply, str):
        message: dict[str, Any] = {"role": "assistant", "content": reply}
        finish = "stop"
    else:
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{n}_{i}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(reply)]}
        finish = "tool_calls"
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0,
            "model": "scripted", "choices": [{"index": 0, "message": message,
                                              "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}

"""A chat loop with long-term memory against any OpenAI-compatible endpoint.

Each step: the user's turn is persisted (here: appended to the history) and captured; the
provider injects facts, skills and lessons not yet shown in this conversation; the model
answers with the pinned block in its system prompt and the memory tools at hand (tool calls
run against the memory; refusals come back as tool results); the reply is persisted and
captured. ``/activate`` re-pins the block from current memory; ``/quit`` ends.

    python examples/agent_loop.py --base-url http://127.0.0.1:8080/v1 --model my-model \\
        --db chat.db --say "I live in Lyon and I'm vegan." --say "What do you know about me?"

Without ``--say`` it reads turns from stdin. ``--json`` prints one JSON summary at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import openai

import remem
from remem.agent import MemoryProvider, MemoryTools, Session
from remem.errors import NotFound, RememError

BASE_PROMPT = ("You are a helpful assistant with long-term memory. The pinned block below is "
               "what you know about yourself and the user. Use SearchMemory when the past "
               "matters, Remember when the user states a durable fact or preference, and "
               "ForgetMemory when they ask you to forget something. Be brief.")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL",
                                                        "http://127.0.0.1:8080/v1"))
    p.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"))
    p.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY", "unused"))
    p.add_argument("--db", default="agent_loop.db", help="SQLite file (created if missing)")
    p.add_argument("--memory", default="agent", help="memory id (created if missing)")
    p.add_argument("--user", default="user:alice", help="the user's scope")
    p.add_argument("--agent", default="agent:assistant", help="the agent's scope")
    p.add_argument("--conversation", default=None, help="conversation id (default: new)")
    p.add_argument("--say", action="append", default=None,
                   help="a user turn (repeatable); without it, turns are read from stdin")
    p.add_argument("--max-tokens", type=int, default=256, help="reply length limit")
    p.add_argument("--tool-rounds", type=int, default=3,
                   help="model calls per turn that may use tools before a plain answer")
    p.add_argument("--budget-tokens", type=int, default=300, help="per-step recall budget")
    p.add_argument("--json", action="store_true", help="print a JSON summary at the end")
    return p.parse_args(argv)


class AgentLoop:
    """The loop's state: one memory, one session, the history sent to the model."""

    def __init__(self, client: Any, model: str, memory: Any, args: argparse.Namespace) -> None:
        self.client, self.model, self.args = client, model, args
        self.session = Session(memory, user_scope=args.user, agent_scope=args.agent,
                               conversation_id=args.conversation)
        self.provider = MemoryProvider(memory, user_scope=args.user, agent_scope=args.agent,
                                       budget_tokens=args.budget_tokens)
        self.tools = MemoryTools(memory, user_scope=args.user, agent_scope=args.agent)
        self.history: list[dict[str, Any]] = []
        self.log: list[dict[str, Any]] = []
        self.session.activate()

    def turn(self, text: str) -> str:
        """One step: persist + capture the user turn, inject, answer (with tools), capture."""
        self.history.append({"role": "user", "content": text})
        self.session.capture_turn("user", text)
        injected = self.provider.recall(self.session.conversation_id, text)
        if injected.text:  # kept in the history: each item is injected once per conversation
            self.history.insert(len(self.history) - 1,
                                {"role": "system", "content": injected.text})
        calls: list[dict[str, Any]] = []
        reply = self._answer(calls)
        self.history.append({"role": "assistant", "content": reply})
        if reply:  # an empty reply says nothing to remember
            self.session.capture_turn("assistant", reply)
        self.log.append({"user": text, "assistant": reply, "injected": injected.ids,
                         "tool_calls": calls})
        return reply

    def _answer(self, calls: list[dict[str, Any]]) -> str:
        system = {"role": "system", "content": BASE_PROMPT + "\n\n" + self.session.prompt()}
        for round_ in range(self.args.tool_rounds + 1):
            use_tools = round_ < self.args.tool_rounds
            extra = {"tools": self.tools.schemas()} if use_tools else {}
            resp = self.client.chat.completions.create(
                model=self.model, messages=[system, *self.history],
                max_tokens=self.args.max_tokens, **extra)
            msg = resp.choices[0].message
            if not (use_tools and msg.tool_calls):
                return (msg.content or "").strip()
            self.history.append({"role": "assistant", "content": msg.content or "",
                                 "tool_calls": [tc.model_dump() for tc in msg.tool_calls]})
            for tc in msg.tool_calls:
                result = self.tools.tool_message(tc)
                self.history.append(result)
                calls.append({"name": tc.function.name, "arguments": tc.function.arguments,
                              "result": json.loads(result["content"])})
        raise AssertionError("unreachable")  # the last round never offers tools

    def summary(self) -> dict[str, Any]:
        return {"conversation_id": self.session.conversation_id,
                "activation_id": self.session.activation_id,
                "captured": [t["id"] for t in self.session.turns], "turns": self.log}


def open_memory(store: Any, memory_id: str) -> Any:
    try:
        return store.memory(memory_id)
    except NotFound:
        return store.create_memory(memory_id)


def user_turns(args: argparse.Namespace):
    if args.say is not None:
        yield from args.say
        return
    while True:
        try:
            line = input("you> ")
        except EOFError:
            return
        if line.strip() == "/quit":
            return
        if line.strip():
            yield line


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    client = openai.OpenAI(base_url=args.base_url, api_key=args.api_key)
    store = remem.open(args.db)
    try:
        loop = AgentLoop(client, args.model, open_memory(store, args.memory), args)
        for text in user_turns(args):
            if text.strip() == "/activate":
                print(f"(re-activated: {loop.session.activate()})", file=sys.stderr)
                continue
            reply = loop.turn(text)
            if not args.json:
                said = f"you> {text}\n" if args.say is not None else ""  # stdin echoes itself
                print(f"{said}bot> {reply}", flush=True)
    except RememError as exc:
        print(f"memory error ({exc.code}): {exc.message}", file=sys.stderr)
        return 1
    except openai.OpenAIError as exc:
        print(f"model endpoint error: {exc}", file=sys.stderr)
        return 2
    finally:
        store.close()
    if args.json:
        print(json.dumps(loop.summary(), ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Extractor and Judge backed by any OpenAI-compatible chat model with JSON-schema output.

Both send one chat request rendered from a versioned prompt (``remem.providers.prompts``) with
``response_format={"type": "json_schema", "json_schema": {"name", "strict": true, "schema"}}``
and parse the reply into the prompt's pydantic model. A reply that is cut off, refused, empty,
not JSON or not valid raises :class:`~remem.errors.ExtractionFailed` with
``details["reason"]`` — never an empty success. The ``openai`` client (the ``llm`` extra) is
imported on first use; constructors do no I/O.

Works with OpenAI and with local servers that implement structured output (llama.cpp /
xllamacpp, vLLM, ...). Sampling defaults to temperature 0 so a given server answers the same
way twice.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from remem.domain.decision import Judgement
from remem.domain.model import Verdict
from remem.errors import ArtifactUnavailable, ExtractionFailed, InvalidInput
from remem.providers.judge import judge_input
from remem.providers.openai_compat import LLM_HINT, PLACEHOLDER_API_KEY
from remem.providers.prompts import PromptSpec, get_prompt
from remem.providers.prompts.extract_v1 import (
    MAX_QUOTE_BYTES,
    ExtractInput,
    ExtractReply,
    resolve_valid_at,
)
from remem.providers.rules import ExtractedClaim

__all__ = ["OpenAICompatExtractor", "OpenAICompatJudge"]


class _ChatCall:
    """One OpenAI-compatible endpoint + model: renders a prompt, sends it, parses the reply."""

    def __init__(self, *, base_url: str, model: str, api_key: str | None, timeout_s: float,
                 max_retries: int, max_tokens: int, temperature: float,
                 seed: int | None, provider: str | None) -> None:
        if not base_url or not model:
            raise InvalidInput("An OpenAI-compatible model client needs both base_url and model.")
        if max_tokens < 1:
            raise InvalidInput(f"max_tokens must be at least 1, got {max_tokens}.")
        self.base_url = base_url
        self.model = model
        self.label = f"Model provider {provider!r}" if provider else "The model service"
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._max_tokens = max_tokens
        self._temperature = temperature
        self._seed = seed
        self._client: Any = None
        self._lock = threading.Lock()

    def ask(self, spec: PromptSpec[Any, Any], data: BaseModel) -> Any:
        """Sends ``spec`` rendered from ``data``; returns the validated reply model.

        Raises:
            ArtifactUnavailable: ``openai`` missing; service unreachable or answering an error.
            ExtractionFailed: reply truncated, refused, empty, not JSON, or not valid.
        """
        client = self._get_client()
        import openai

        extra: dict[str, Any] = {} if self._seed is None else {"seed": self._seed}
        try:
            response = client.chat.completions.create(
                model=self.model, messages=spec.messages(data),
                response_format=spec.response_format(data), temperature=self._temperature,
                max_tokens=self._max_tokens, **extra)
        except openai.APIStatusError as exc:
            raise ArtifactUnavailable(
                f"{self.label} answered HTTP {exc.status_code} for model '{self.model}' "
                f"({spec.version}). Check the model name, the key, that the server supports "
                "JSON-schema response_format, and its logs.",
                model=self.model, status=exc.status_code) from exc
        except openai.APIError as exc:
            raise ArtifactUnavailable(
                f"{self.label} is unreachable or answered garbage ({type(exc).__name__}). "
                "Check that it is running and that the operator's base_url is right.",
                model=self.model) from exc
        return spec.parse(self._content(spec, response), data)

    def _content(self, spec: PromptSpec[Any, Any], response: Any) -> str | None:
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise self._failed(spec, "empty_reply", "The model service returned no choices.")
        choice = choices[0]
        if choice.finish_reason == "length":
            raise self._failed(spec, "truncated",
                               f"The model's reply was cut off at max_tokens={self._max_tokens} "
                               "before the JSON was complete; raise max_tokens or shorten the "
                               "input.")
        message = choice.message
        if getattr(message, "refusal", None):
            raise self._failed(spec, "refusal", "The model refused to answer.")
        return message.content

    def _failed(self, spec: PromptSpec[Any, Any], reason: str, message: str) -> ExtractionFailed:
        return ExtractionFailed(message, reason=reason, prompt_version=spec.version,
                                model=self.model)

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                try:
                    import openai
                except ImportError as exc:
                    raise ArtifactUnavailable(
                        f"The 'openai' package is needed for OpenAI-compatible models. "
                        f"Run: {LLM_HINT}", package="openai", hint=LLM_HINT) from exc
                self._client = openai.OpenAI(
                    base_url=self.base_url, api_key=self._api_key or PLACEHOLDER_API_KEY,
                    timeout=self._timeout_s, max_retries=self._max_retries)
            return self._client


class OpenAICompatExtractor:
    """An Extractor that asks a chat model for the user's claims (prompt ``extract_v<N>``).

    Only the user's own statements become claims: the prompt says so, and turns whose role is
    not ``"user"`` return ``[]`` without a request.

    Attributes:
        name: registry name, ``"openai"``.
        version: the prompt version, recorded by callers with every derived item.
        model: model name sent with each request.

    Args:
        base_url: API root including the version, e.g. ``"http://127.0.0.1:8080/v1"``.
        model: model name.
        api_key: bearer token; ``None`` sends a placeholder (keyless local servers).
        timeout_s: per-request timeout in seconds.
        prompt_version: which extraction prompt to use (``"extract_v1"``).
        max_tokens: reply budget; a reply cut off there fails with reason ``truncated``.
        temperature: sampling temperature (0 = greedy).
        seed: optional sampling seed sent with each request.
        max_retries: client retries on connection errors, 429 and 5xx.
        provider: the registered provider name, used in error messages instead of the URL.

    Raises:
        InvalidInput: empty base_url/model or max_tokens < 1.
        UnsupportedCapability: unknown prompt version.
    """

    name = "openai"

    def __init__(self, base_url: str, model: str, api_key: str | None = None,
                 timeout_s: float = 60.0, prompt_version: str = "extract_v1", *,
                 max_tokens: int = 1024, temperature: float = 0.0, seed: int | None = None,
                 max_retries: int = 2, provider: str | None = None) -> None:
        self._spec: PromptSpec[ExtractInput, ExtractReply] = get_prompt(prompt_version,
                                                                        task="extract")
        self._call = _ChatCall(base_url=base_url, model=model, api_key=api_key,
                               timeout_s=timeout_s, max_retries=max_retries,
                               max_tokens=max_tokens, temperature=temperature, seed=seed,
                               provider=provider)
        self.version = prompt_version
        self.model = model

    def extract(self, text: str, *, role: str, occurred_at: datetime) -> list[ExtractedClaim]:
        """Claims the user states about themselves in one turn, in reply order, deduplicated.

        Args:
            text: the turn's text.
            role: the speaker's role; only ``"user"`` is sent to the model.
            occurred_at: aware datetime the turn was written; ``valid_at`` dates resolve
                against it and keep its tzinfo; a claim without a date gets ``occurred_at``.

        Returns:
            ExtractedClaim list (``kind`` as its string value; quotes longer than 512 UTF-8
            bytes are cut to a prefix); ``[]`` when the model found nothing or the role is not
            ``"user"``.

        Raises:
            InvalidInput: ``occurred_at`` is naive.
            ExtractionFailed: the reply was cut off, refused, empty, not JSON, not valid
                against ``extract_v1`` (``details["reason"]``: ``truncated``, ``refusal``,
                ``empty_reply``, ``malformed_json``, ``schema_violation``,
                ``quote_not_in_text``, ``bad_date``).
            ArtifactUnavailable: ``openai`` is missing or the service is unreachable.
        """
        if occurred_at.tzinfo is None or occurred_at.utcoffset() is None:
            raise InvalidInput("occurred_at must be timezone-aware; pass e.g. "
                               "datetime.now(timezone.utc) or attach the speaker's zone.",
                               field="occurred_at")
        if role != "user" or not text or not text.strip():
            return []
        data = ExtractInput(text=text, occurred_at=occurred_at)
        reply: ExtractReply = self._call.ask(self._spec, data)
        claims: list[ExtractedClaim] = []
        seen: set[tuple[str, str, str]] = set()
        for c in reply.claims:
            ident = (c.key, json.dumps(c.value, sort_keys=True), c.operation)
            if ident in seen:
                continue
            seen.add(ident)
            valid_at, precision = (resolve_valid_at(c.valid_at, occurred_at)
                                   if c.valid_at is not None else (occurred_at, "instant"))
            claims.append(ExtractedClaim(
                key=c.key, value=c.value, kind=c.kind.value, quote=_cut(c.quote),
                valid_at=valid_at, negated=c.negated, operation=c.operation,
                valid_at_precision=precision))
        return claims


def _cut(quote: str) -> str:
    """The longest prefix of ``quote`` that fits in MAX_QUOTE_BYTES UTF-8 bytes."""
    data = quote.encode()
    if len(data) <= MAX_QUOTE_BYTES:
        return quote
    return data[:MAX_QUOTE_BYTES].decode(errors="ignore")


class OpenAICompatJudge:
    """A Judge that asks a chat model for ADD/SUPERSEDE/MERGE/NOOP/CONFLICT over item ids.

    With no existing items the answer is ADD without a request. The reply's ``target`` must be
    one of the given ids or ``null`` (the request's schema says so too).

    Attributes:
        name: registry name, ``"openai"``.
        version: the prompt version (``"judge_v1"``), recorded by callers.
        model: model name sent with each request.

    Args:
        base_url, model, api_key, timeout_s, max_retries, temperature, seed, provider: as for
            :class:`OpenAICompatExtractor`.
        prompt_version: which judge prompt to use (``"judge_v1"``).
        max_tokens: reply budget (the reply is two short fields).

    Raises:
        InvalidInput: empty base_url/model or max_tokens < 1.
        UnsupportedCapability: unknown prompt version.
    """

    name = "openai"

    def __init__(self, base_url: str, model: str, api_key: str | None = None,
                 timeout_s: float = 60.0, prompt_version: str = "judge_v1", *,
                 max_tokens: int = 128, temperature: float = 0.0, seed: int | None = None,
                 max_retries: int = 2, provider: str | None = None) -> None:
        self._spec = get_prompt(prompt_version, task="judge")
        self._call = _ChatCall(base_url=base_url, model=model, api_key=api_key,
                               timeout_s=timeout_s, max_retries=max_retries,
                               max_tokens=max_tokens, temperature=temperature, seed=seed,
                               provider=provider)
        self.version = prompt_version
        self.model = model

    def judge(self, existing: Sequence[Mapping[str, Any]],
              candidate: Mapping[str, Any]) -> Judgement:
        """The model's verdict on ``candidate`` against ``existing``.

        Args:
            existing: ``[{item_id, key, value, kind, valid_at}]`` (see ``providers.judge``).
            candidate: ``{key, value, kind, valid_at}``.

        Returns:
            Judgement(verdict, target) with ``target`` one of the given ids or None.

        Raises:
            InvalidInput: the arguments do not have the documented shapes.
            ExtractionFailed: reply truncated, refused, empty, not JSON or not valid
                (``details["reason"]`` also ``unknown_target``). A target sent with ADD is
                dropped.
            ArtifactUnavailable: ``openai`` is missing or the service is unreachable.
        """
        data = judge_input(existing, candidate)
        if not data.existing:
            return Judgement(Verdict.ADD)
        reply = self._call.ask(self._spec, data)
        return Judgement(Verdict(reply.verdict), reply.target)

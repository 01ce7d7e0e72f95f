"""``capture``: one user turn -> reviewed proposals, with a local model (instantKV seed).

``--model PROVIDER[/MODEL]`` names an extraction provider the operator registered
(``--providers-file``), optionally with a model name; the built-in ``rules`` provider is the
offline rule extractor. A provider whose endpoint is not loopback, or whose model or provider
name carries a cloud tag (``:cloud``, ``-cloud``), is refused before any request. The turn's
time is fixed once by the caller (``occurred_at_ms``); the model never sets it. The preview
contacts no memory: it is ``{"proposals": [...], "applied": false}``, each proposal carrying
its final source id, quote and time, ready for ``apply --file``.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any
from urllib.parse import urlsplit

from remem.domain.limits import MAX_PROPOSALS
from remem.domain.timefmt import from_ms
from remem.errors import ArtifactUnavailable, ExtractionFailed, InvalidInput, RememError

MAX_CAPTURE_BYTES = 16_384
#: Reply budget of one capture: eight proposals fit; a longer reply is rejected as truncated.
CAPTURE_MAX_TOKENS = 512
_CLOUD = re.compile(r"(^|[:\-_/.])cloud($|[:\-_/.])", re.IGNORECASE)
MODEL_DOWN = ("The local model is unavailable; start your installed local model, or apply "
              "reviewed JSON with `apply --file` (no model is needed for reads, corrections "
              "or forgetting).")


def _loopback(url: str | None) -> bool:
    try:
        host = urlsplit(url or "").hostname
        return host == "localhost" or (host is not None
                                       and ipaddress.ip_address(host).is_loopback)
    except ValueError:
        return False


def extractor_for(model: str) -> Any:
    """The extractor ``--model`` names, after the loopback and cloud checks.

    Raises:
        InvalidInput: not a registered extraction provider, not loopback, or cloud-backed.
    """
    from remem.cli.main import STATE
    from remem.errors import ConfigInvalid
    from remem.providers.registry import build_extractor
    from remem.settings import NETWORK_TYPES, load_settings

    name, _, model_name = model.partition("/")
    providers = load_settings(None, STATE.providers_file).providers
    prov = providers.get(name)
    if prov is None or not prov.serves("extraction"):
        raise InvalidInput("--model names no registered local extraction provider; register "
                           "one with --providers-file (or use 'rules').", field="model",
                           registered=providers.names_for("extraction"))
    if prov.type in NETWORK_TYPES and not _loopback(prov.base_url):
        raise InvalidInput("--model's endpoint is not loopback; capture only uses a local "
                           "model.", field="model")
    for label in (name, model_name or prov.model or ""):
        if _CLOUD.search(label):
            raise InvalidInput("--model is marked cloud-backed; capture only uses a local "
                               "model.", field="model")
    spec: dict[str, Any] = {"provider": name}
    if prov.type in NETWORK_TYPES:
        spec["max_tokens"] = CAPTURE_MAX_TOKENS
    if model_name:
        spec["model"] = model_name
    try:
        return build_extractor(spec, providers, strict=True)
    except ConfigInvalid as exc:
        raise InvalidInput(f"--model cannot be used: {exc.message}", field="model") from None


def preview(data: bytes, *, source_id: str, model: str, occurred_at_ms: int) -> dict[str, Any]:
    """Proposals for one user turn (no memory is contacted).

    Raises:
        InvalidInput: bad text, source id, time or model.
        ExtractionFailed / ArtifactUnavailable: the model failed or is down (nothing written);
            the message suggests deterministic apply.
    """
    from remem.domain.limits import MAX_SOURCE_ID_BYTES, check_text

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("capture input is not valid UTF-8.", field="file") from None
    check_text(source_id, "source_id", MAX_SOURCE_ID_BYTES)
    at = from_ms(occurred_at_ms, "occurred_at_ms")
    extractor = extractor_for(model)
    try:
        claims = extractor.extract(text, role="user", occurred_at=at)
    except ArtifactUnavailable:
        raise ArtifactUnavailable(MODEL_DOWN) from None
    except ExtractionFailed as exc:
        raise ExtractionFailed("The model's output was rejected "
                               f"({exc.details.get('reason', 'invalid')}). " + MODEL_DOWN,
                               reason=exc.details.get("reason")) from None
    except RememError:
        raise
    except Exception:  # noqa: BLE001 - a client library failure is "model unavailable"
        raise ArtifactUnavailable(MODEL_DOWN) from None
    proposals = [_proposal(c, source_id, occurred_at_ms) for c in claims
                 if getattr(c, "operation", "assert") == "assert"]
    if len(proposals) > MAX_PROPOSALS:
        raise ExtractionFailed(f"The model proposed {len(proposals)} facts; at most "
                               f"{MAX_PROPOSALS} per capture. Split the turn, or apply "
                               "reviewed JSON.", reason="too_many")
    return {"proposals": proposals, "applied": False}


def _proposal(claim: Any, source_id: str, occurred_at_ms: int) -> dict[str, Any]:
    return {"entity": "user", "attribute": claim.key, "value": claim.value,
            "kind": claim.kind, "operation": "assert",
            "source": {"id": source_id, "text": claim.quote, "role": "user",
                       "occurred_at_ms": occurred_at_ms},
            "valid_until_ms": None}

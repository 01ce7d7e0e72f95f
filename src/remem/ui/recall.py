"""Pages: conflicts side by side (resolve by keeping one) and the recall playground (the
model-facing text exactly as the API returns it, its token count, truncated, coverage)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Form, Query
from fastapi.responses import RedirectResponse
from pydantic import Field

from remem.errors import RememError
from remem.ui import adapters
from remem.ui.items import FormIn, Looking, Posting
from remem.ui.render import UiRoute, page
from remem.ui.session import Viewer, needs_memory

router = APIRouter(prefix="/ui", route_class=UiRoute, include_in_schema=False)

TOKENIZERS = ("o200k_base", "cl100k_base")


class ResolveForm(FormIn):
    keep: str = Field(min_length=1, max_length=128)


class RecallForm(FormIn):
    query: str = Field(min_length=1, max_length=16_384)
    scopes: str = Field(default="", max_length=2048)
    budget_tokens: int = Field(default=300, ge=1, le=1_000_000)
    tokenizer: Literal[TOKENIZERS] = "o200k_base"  # type: ignore[valid-type]


@router.get("/conflicts")
def conflicts_page(who: Looking, scope: Annotated[str, Query(max_length=128)] = "",
                   resolved: Annotated[str, Query(max_length=128)] = "") -> Any:
    memory = needs_memory(who)
    groups = memory.conflicts(scope.strip() or None)
    offsets = memory.tz_offsets([it["item_id"] for g in groups for it in g["items"]])
    return page("conflicts", who=who, groups=groups, scope=scope, resolved=resolved,
                offsets=offsets)


@router.post("/conflicts/{group_id}/resolve")
def resolve(group_id: str, who: Posting, form: Annotated[ResolveForm, Form()]) -> Any:
    """Keeps one item of the group; the others are superseded by it (role admin)."""
    out = needs_memory(who).resolve_conflict(group_id, form.keep)
    return RedirectResponse(f"/ui/conflicts?resolved={out['kept']}", status_code=303)


def _default_scopes(who: Viewer) -> str:
    return who.principal.scope or ""


@router.get("/recall")
def recall_page(who: Looking) -> Any:
    needs_memory(who)
    return page("recall", who=who, form={"scopes": _default_scopes(who), "query": "",
                                         "budget_tokens": 300, "tokenizer": "o200k_base"},
                tokenizers=TOKENIZERS, result=None)


@router.post("/recall")
def recall(who: Posting, form: Annotated[RecallForm, Form()]) -> Any:
    """Runs ``Memory.recall`` (it never writes) and shows what the model would be given."""
    scopes = form.scopes.replace(",", " ").split() or [_default_scopes(who)]
    shown = form.model_dump(exclude={"csrf"}) | {"scopes": " ".join(scopes)}
    try:
        result = needs_memory(who).recall(scopes, form.query,
                                          budget_tokens=form.budget_tokens,
                                          tokenizer=form.tokenizer)
    except RememError as exc:
        if exc.http_status not in (400, 403, 404, 409, 413):
            raise
        return page("recall", who=who, form=shown, tokenizers=TOKENIZERS, result=None,
                    error=exc.message, status_code=exc.http_status)
    text, tokens = adapters.model_facing(result)
    return page("recall", who=who, form=shown, tokenizers=TOKENIZERS, result=result,
                text=text, tokens=tokens)

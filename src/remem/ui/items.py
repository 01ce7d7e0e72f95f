"""Pages: the items table, an item's detail (timeline, sources, provenance, revision) and its
actions (correct at an expected revision, archive, restore, forget with typed confirmation).

Each handler parses the form or query, calls one ``Memory`` method as the viewer's principal
and renders; the service refuses what the principal may not do.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Form, Query
from fastapi.responses import RedirectResponse
from pydantic import BaseModel, ConfigDict, Field

from remem.errors import InvalidInput, RememError
from remem.ui import adapters
from remem.ui.render import UiRoute, page
from remem.ui.session import Viewer, needs_memory, posting_viewer, viewer
from remem.ui.timeline import timeline

router = APIRouter(prefix="/ui", route_class=UiRoute, include_in_schema=False)
Looking = Annotated[Viewer, Depends(viewer)]
Posting = Annotated[Viewer, Depends(posting_viewer)]

STATUSES = ("", "current", "superseded", "conflict", "archived", "all")
KINDS = ("", "identity", "rule", "profile_slot", "fact", "preference", "skill", "lesson")
Status = Literal[STATUSES]  # type: ignore[valid-type]
Kind = Literal[KINDS]  # type: ignore[valid-type]
Text = Annotated[str, Query(max_length=256)]


class FormIn(BaseModel):
    """Every form posts its CSRF token (checked by ``posting_viewer``); nothing else unknown."""

    model_config = ConfigDict(extra="forbid")
    csrf: str = Field(max_length=128)


class CorrectForm(FormIn):
    value: str = Field(max_length=4096)
    expected_revision: int = Field(ge=0)


class ForgetForm(FormIn):
    confirm: str = Field(default="", max_length=256)


def _blank(s: str) -> str | None:
    return s.strip() or None


def _metadata(text: str) -> dict[str, str] | None:
    """``team=red lang=fr`` -> {"team": "red", "lang": "fr"} (None when blank).

    Raises:
        InvalidInput: a term without ``=`` or with an empty name.
    """
    pairs = [term.partition("=") for term in text.replace(",", " ").split()]
    if any(not sep or not name for name, sep, _ in pairs):
        raise InvalidInput("The metadata filter takes name=value terms separated by spaces.",
                           field="meta")
    return {name: value for name, _, value in pairs} or None


@router.get("/items")
def items_page(who: Looking, scope: Text = "", key: Text = "",
               kind: Kind = "", status: Status = "",
               text: Text = "", meta: Text = "",
               cursor: Annotated[str, Query(max_length=1024)] = "",
               limit: Annotated[int, Query(ge=1, le=200)] = 25) -> Any:
    """The items table; ``cursor`` pages forward (``next_cursor`` of the previous page)."""
    memory = needs_memory(who)
    view = adapters.list_items(memory, text=_blank(text), metadata=_metadata(meta),
                               scope=_blank(scope), key=_blank(key),
                               kind=_blank(kind), status=_blank(status),
                               cursor=_blank(cursor), limit=limit)
    filters = {"scope": scope, "key": key, "kind": kind, "status": status, "text": text,
               "meta": meta, "limit": limit}
    offsets = memory.tz_offsets([it.item_id for it in view.items])  # the stated zones
    return page("items", who=who, view=view, filters=filters, kinds=KINDS, statuses=STATUSES,
                first_page=not cursor, offsets=offsets)


def _detail(who: Viewer, item_id: str, *, error: RememError | str | None = None,
            status_code: int = 200) -> Any:
    memory = needs_memory(who)
    hist = memory.history(item_id)
    item = hist["item"]
    bars = timeline(hist["versions"], now=memory.clock.now(), selected=item_id)
    message = error.message if isinstance(error, RememError) else error
    offsets = memory.tz_offsets([item_id] + [v["item_id"] for v in hist["versions"]])
    return page("item", who=who, item=item, hist=hist, bars=bars, error=message,
                can_write=who.may_write(item["scope"]), status_code=status_code,
                value_text=_editable(item["value"]), offsets=offsets)


@router.get("/items/{item_id}")
def item_page(item_id: str, who: Looking) -> Any:
    return _detail(who, item_id)


def _editable(value: Any) -> str:
    """The value as the correct form shows it: text as typed unless it would read as JSON."""
    if isinstance(value, str) and _value(value) == value:
        return value
    return json.dumps(value, ensure_ascii=False)


def _value(text: str) -> Any:
    """A typed value: JSON when it parses (``42``, ``true``, ``{"a": 1}``), else the text."""
    from remem.domain.jsondoc import UnrepresentableNumber, parse_float

    try:
        return json.loads(text, parse_float=parse_float)
    except UnrepresentableNumber as exc:  # 1e-400 would be stored as 0: refused
        raise exc.refusal("value") from None
    except ValueError:
        return text


@router.post("/items/{item_id}/correct")
def correct(item_id: str, who: Posting, form: Annotated[CorrectForm, Form()]) -> Any:
    """Corrects the item's key at the revision the page showed (RevisionMismatch inline)."""
    try:
        result = needs_memory(who).correct_item(item_id, _value(form.value),
                                                expected_revision=form.expected_revision)
    except RememError as exc:
        if exc.http_status not in (400, 409):
            raise
        return _detail(who, item_id, error=exc, status_code=exc.http_status)
    return RedirectResponse(f"/ui/items/{result.item_id or item_id}", status_code=303)


@router.post("/items/{item_id}/archive")
def archive(item_id: str, who: Posting, form: Annotated[FormIn, Form()]) -> Any:
    needs_memory(who).archive(item_id)
    return RedirectResponse(f"/ui/items/{item_id}", status_code=303)


@router.post("/items/{item_id}/restore")
def restore(item_id: str, who: Posting, form: Annotated[FormIn, Form()]) -> Any:
    needs_memory(who).restore(item_id)
    return RedirectResponse(f"/ui/items/{item_id}", status_code=303)


@router.post("/items/{item_id}/forget")
def forget(item_id: str, who: Posting, form: Annotated[ForgetForm, Form()]) -> Any:
    """Forgets for real once the key's name is typed; shows the erasure report per surface."""
    memory = needs_memory(who)
    item = memory.get(item_id)
    if form.confirm.strip() != item.key:
        return _detail(who, item_id, status_code=400,
                       error=f"Type the key name '{item.key}' to confirm; nothing was erased.")
    report = memory.forget(item_id)
    return page("forgotten", who=who, report=report.to_dict(), key=item.key,
                scope=item.scope)

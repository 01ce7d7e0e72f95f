"""Pages: sign in/out, memories (create, config with inline errors), runs and receipts,
status (ledger head, verify, pending erasures, index health).

Memory-wide pages call ``Memory`` methods the guard allows only to a memory admin; other
viewers get the service's refusal rendered as a page.
"""

from __future__ import annotations

import hmac
import json
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import RedirectResponse
from pydantic import Field

from remem.errors import (
    ConfigInvalid,
    InvalidInput,
    PermissionDenied,
    RememError,
    Unauthenticated,
)
from remem.ui import adapters
from remem.ui.items import FormIn, Looking, Posting
from remem.ui.render import UiRoute, page
from remem.ui.session import (
    PRE_COOKIE,
    CsrfRejected,
    Viewer,
    check_token_shape,
    clear_session,
    needs_memory,
    set_session,
)

router = APIRouter(prefix="/ui", route_class=UiRoute, include_in_schema=False)


class ConfigForm(FormIn):
    config: str = Field(max_length=65_536)


@router.get("/login")
def login_page(request: Request) -> Any:
    """The sign-in form; a pre-session cookie pairs with its hidden field (login CSRF)."""
    pre = secrets.token_urlsafe(24)
    resp = page("login", pre=pre)
    resp.set_cookie(PRE_COOKIE, pre, max_age=3600, path="/ui", httponly=True,
                    samesite="strict", secure=request.url.scheme == "https")
    return resp


@router.post("/login")
def login(request: Request, token: Annotated[str, Form(max_length=512)],
          pre: Annotated[str, Form(max_length=128)]) -> Any:
    """Checks the token exactly as the API does, then keeps it in the session cookie."""
    cookie = request.cookies.get(PRE_COOKIE, "")
    if not cookie or not hmac.compare_digest(cookie.encode(), pre.encode()):
        raise CsrfRejected("The sign-in form is stale; reload it and sign in again.")
    token = check_token_shape(token)
    try:
        request.app.state.tokens.authenticate(token)
    except Unauthenticated as exc:
        return page("login", pre=pre, error=exc.message, status_code=401)
    resp = RedirectResponse("/ui/", status_code=303)
    set_session(resp, request, token)
    return resp


@router.post("/logout")
def logout(who: Posting, form: Annotated[FormIn, Form()]) -> Any:
    resp = RedirectResponse("/ui/login", status_code=303)
    clear_session(resp)
    return resp


@router.get("/")
def home(who: Looking) -> Any:
    return RedirectResponse("/ui/items" if who.memory else "/ui/memories", status_code=303)


def _memories(who: Viewer, *, error: RememError | None = None, draft: str | None = None,
              status_code: int = 200, saved: bool = False) -> Any:
    """The viewer's memory (a token reaches one); its config for a memory admin."""
    config = None
    if who.memory is not None and who.manages:
        config = draft if draft is not None else json.dumps(who.memory.memory_config(),
                                                            indent=2, sort_keys=True)
    return page("memories", who=who, config=config, draft=draft or "{}",
                error=error.message if error else None,
                error_details=error.details if error else None, status_code=status_code,
                saved=saved)


@router.get("/memories")
def memories_page(who: Looking, saved: Annotated[bool, Query()] = False) -> Any:
    return _memories(who, saved=saved)


def _config(text: str) -> dict[str, Any]:
    from remem.domain.jsondoc import UnrepresentableNumber, parse_float

    try:
        value = json.loads(text or "{}", parse_float=parse_float)
    except UnrepresentableNumber as exc:
        raise exc.refusal("config") from None
    except ValueError as exc:
        raise InvalidInput(f"The config is not valid JSON ({exc.msg} at line {exc.lineno}); "
                           "nothing was changed.", field="config") from None
    if not isinstance(value, dict):
        raise InvalidInput("The config must be a JSON object; nothing was changed.",
                           field="config")
    return value


@router.post("/memories")
def create_memory(request: Request, who: Posting, form: Annotated[ConfigForm, Form()]) -> Any:
    """Creates the token's memory (memory admins only; the service checks)."""
    try:
        request.app.state.store.create_memory(who.memory_id, _config(form.config),
                                              principal=who.principal)
    except (ConfigInvalid, InvalidInput) as exc:
        return _memories(who, error=exc, draft=form.config, status_code=exc.http_status)
    return RedirectResponse("/ui/memories", status_code=303)


@router.post("/memories/config")
def replace_config(who: Posting, form: Annotated[ConfigForm, Form()]) -> Any:
    """Replaces the config; a schema error is shown inline beside the submitted text."""
    memory = needs_memory(who)
    try:
        memory.replace_config(_config(form.config))
    except (ConfigInvalid, InvalidInput) as exc:
        return _memories(who, error=exc, draft=form.config, status_code=exc.http_status)
    return RedirectResponse("/ui/memories?saved=1", status_code=303)


@router.get("/runs")
def runs_page(who: Looking,
              receipt: Annotated[str, Query(max_length=128)] = "") -> Any:
    """Derive runs (memory admins) and a receipt's phases (anyone who reads its scope)."""
    memory = needs_memory(who)
    runs = memory.runs() if who.manages else None
    found = memory.receipt(receipt.strip()).to_dict() if receipt.strip() else None
    return page("runs", who=who, runs=runs, receipt=found, receipt_id=receipt)


@router.post("/runs/run-due")
def run_due(who: Posting, form: Annotated[FormIn, Form()]) -> Any:
    """Runs the memory's due jobs now (failed retryable runs are due again)."""
    outcomes = needs_memory(who).run_jobs()
    return page("runs", who=who, runs=needs_memory(who).runs(), receipt=None, receipt_id="",
                outcomes=outcomes)


@router.get("/status")
def status_page(who: Looking) -> Any:
    memory = needs_memory(who)
    status = memory.status()
    try:
        verify, verify_error = memory.verify(), None
    except PermissionDenied as exc:
        verify, verify_error = None, exc.message
    return page("status", who=who, status=status, verify=verify, verify_error=verify_error,
                index=adapters.index_health(status))

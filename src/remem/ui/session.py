"""Sign-in for the manage view: a remem token in a cookie -> a principal -> its ``Memory``.

The token lives only in the ``remem_ui`` cookie (``HttpOnly``, ``SameSite=Strict``, path
``/ui``; ``Secure`` when the request came over https), never in a URL or a log line. It is
resolved exactly as the API resolves a bearer token (``app.state.tokens.authenticate`` then
``store.memory(id, principal=...)``), so every page calls the one guarded ``Memory`` facade.

Every form carries a CSRF token: ``HMAC(sha256(token), context)``, checked on every
POST (the sign-in form uses a double-submit pre-session cookie instead). Nothing here decides
access: the service refuses what the principal may not do; the view only hides buttons.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any

from fastapi import Request

from remem.domain.access import Principal, Role, can_write
from remem.errors import NotFoundOrNotVisible, PermissionDenied, Unauthenticated

COOKIE = "remem_ui"
PRE_COOKIE = "remem_ui_pre"
COOKIE_PATH = "/ui"
SESSION_MAX_AGE_S = 8 * 3600
CSRF_CONTEXT = b"remem-ui-csrf-v1"


class CsrfRejected(PermissionDenied):
    """A POST without the session's CSRF token (or with another's)."""

    code = "csrf_rejected"


@dataclass(frozen=True)
class Viewer:
    """Who is looking: the principal, its memory (None until an admin creates it) and the
    CSRF token every form of this session carries."""

    principal: Principal
    memory: Any
    csrf: str

    @property
    def memory_id(self) -> str:
        return self.principal.memory_id or ""

    @property
    def manages(self) -> bool:
        """Display only: a memory admin (role admin, subject admin) sees admin pages."""
        return self.principal.role is Role.ADMIN and self.principal.scope is None

    @property
    def writes(self) -> bool:
        return self.principal.has_role(Role.WRITER)

    def may_write(self, scope: str) -> bool:
        """Display only: show write actions for items of ``scope`` (the service decides)."""
        return can_write(self.principal, scope)


def csrf_for(token: str) -> str:
    """The session's CSRF token: an HMAC keyed by the session's remem token. Stateless, so
    it holds across server processes; a cross-site page can neither read the HttpOnly cookie
    nor derive this value, and the value does not reveal the token."""
    key = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
    return hmac.new(key, CSRF_CONTEXT, hashlib.sha256).hexdigest()


def viewer(request: Request) -> Viewer:
    """The signed-in viewer.

    Raises:
        Unauthenticated: no cookie, or a token that is unknown, revoked or malformed.
    """
    token = request.cookies.get(COOKIE)
    principal = request.app.state.tokens.authenticate(token)
    try:
        memory = request.app.state.store.memory(principal.memory_id, principal=principal)
    except NotFoundOrNotVisible:
        memory = None
    return Viewer(principal, memory, csrf_for(token or ""))


async def posting_viewer(request: Request) -> Viewer:
    """The viewer of a POST whose form carries this session's CSRF token.

    Raises:
        Unauthenticated: not signed in. CsrfRejected: missing or wrong CSRF token.
    """
    form = await request.form()
    who = viewer(request)
    sent = form.get("csrf")
    if not isinstance(sent, str) or not hmac.compare_digest(sent.encode(), who.csrf.encode()):
        raise CsrfRejected("This form is missing its security token or it is stale; reload "
                           "the page and submit again.")
    return who


def needs_memory(who: Viewer) -> Any:
    """The viewer's memory. Raises NotFoundOrNotVisible when it does not exist (yet)."""
    if who.memory is None:
        raise NotFoundOrNotVisible(f"Memory {who.memory_id!r} was not found or is not "
                                   "visible; an admin can create it on the Memories page.")
    return who.memory


def set_session(response: Any, request: Request, token: str) -> None:
    response.set_cookie(COOKIE, token, max_age=SESSION_MAX_AGE_S, path=COOKIE_PATH,
                        httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")
    response.delete_cookie(PRE_COOKIE, path=COOKIE_PATH)


def clear_session(response: Any) -> None:
    response.delete_cookie(COOKIE, path=COOKIE_PATH, httponly=True, samesite="strict")


def check_token_shape(token: Any) -> str:
    """The pasted token, stripped. Raises Unauthenticated for anything not a string."""
    if not isinstance(token, str) or not token.strip() or len(token) > 512:
        raise Unauthenticated("That token was not accepted; paste a token from "
                              "`remem token create`.")
    return token.strip()

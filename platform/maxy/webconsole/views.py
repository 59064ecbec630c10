"""What every console page stands on: its view of a session's key (``View``, ``Console``), the
guard each handler runs in (session, CSRF, same origin, errors as pages) and the headers.

Every page resolves its session to the API key that logged in and reads through the
``ToolContext`` that key pins (``context_for_key``, the same one ``/mcp`` builds), so the
console sees exactly what the key's tools see. A session's key is looked up again on every
request: a revoked key, or a deleted account, ends its sessions at once.
"""

from __future__ import annotations

import hmac
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..config import Settings
from ..db import Database
from ..errors import AccountError, ConfigError, GraphWriteError, MaxyError, ValidationError
from ..httpjson import ClientGone, hung_up
from ..logs import log_line
from ..plugins.api import ToolContext, ToolError
from ..serving.keys import ApiKey, ApiKeyStore
from ..textcheck import check_clean, printable
from .sessions import COOKIE, ConsoleSession, ConsoleSessions
from .templates import render

PREFIX = "/console"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",  # a form post carries its Origin (no-referrer would send "null")
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}


@dataclass(frozen=True)
class View:
    """Who is looking: the session, the key it logged in with, and the context that key pins."""

    session: ConsoleSession
    key: ApiKey
    ctx: ToolContext

    @property
    def admin(self) -> bool:
        """The whole account, unpinned: what counts and deleted documents need."""
        return self.key.role == "admin" and not self.ctx.caller.pinned


class NotFound(Exception):
    """A page asked for something this view cannot read: absent and hidden look the same."""

    def __init__(self, what: str):
        self.what = what
        super().__init__(what)


class Console:
    """What the pages share: the database, the embedder, the keys and the open sessions."""

    def __init__(self, settings: Settings, store: ApiKeyStore, db: Database, embedder: Any):
        self.settings = settings
        self.store = store
        self.db = db
        self.embedder = embedder
        self.sessions = ConsoleSessions(db)
        self._contexts: dict[tuple[Any, ...], ToolContext] = {}
        self._lock = threading.Lock()

    def view(self, request: Any) -> View | None:
        session = self.sessions.get(request.cookies.get(COOKIE))
        if session is None:
            return None
        key = self.store.by_id(session.account_id, session.key_id)
        if key is not None and not key.holds_view:  # a member's key made without a view reaches no page
            self.sessions.close(request.cookies.get(COOKIE))
            log_line("console", "session-ended", level=logging.WARNING, reason="no-memory-view", keyId=key.key_id)
            return None
        if key is None:
            self.sessions.close(request.cookies.get(COOKIE))
            log_line("console", "session-ended", level=logging.WARNING, reason="key-revoked", keyId=session.key_id)
            return None
        try:
            ctx = self._context(key)
        except (AccountError, ConfigError, ValidationError) as unusable:  # account gone, or a key file edited badly
            self.sessions.close(request.cookies.get(COOKIE))
            log_line(
                "console",
                "session-ended",
                level=logging.WARNING,
                reason="key-unusable",
                keyId=key.key_id,
                error=str(unusable),
            )
            return None
        return View(session, key, ctx)

    def _context(self, key: ApiKey) -> ToolContext:
        """The key's context, built again whenever its role or pins change in the key file."""
        from ..serving.auth import context_for_key

        pins = (key.key_id, key.role, key.scopes, key.agent_slug)
        with self._lock:
            ctx = self._contexts.get(pins)
            if ctx is None:
                ctx = context_for_key(self.settings, key, db=self.db, embedder=self.embedder)
                self._contexts[pins] = ctx
            return ctx

    def page(self, request: Any, view: View, template: str, *, code: int = 200, **values: Any) -> Any:
        from starlette.responses import HTMLResponse

        html = render(template, view=view, csrf=view.session.csrf, path=request.url.path, **values)
        return HTMLResponse(printable(html), status_code=code)


def same_origin(request: Any) -> bool:
    """A form post comes from a console page: its Origin (else Referer) is this server's own."""
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    origin = request.headers.get("origin")
    if origin:
        return origin == own
    referer = request.headers.get("referer") or ""
    return referer == own or referer.startswith(own + "/")


async def read_form(request: Any) -> Any:
    """The posted form; ClientGone (after one ``[http] client-disconnected`` line) when the
    client hung up before its body was over."""
    from starlette.requests import ClientDisconnect

    try:
        return await request.form()
    except ClientDisconnect:
        raise hung_up(request) from None


async def checked_form(request: Any, view: View) -> dict[str, str] | None:
    """The posted form when its CSRF token and origin are right; None (nothing done) otherwise.
    Its values are checked once for NUL characters and lone surrogates (ValidationError naming
    the field)."""
    form = await read_form(request)
    token = str(form.get("csrf") or "")
    if not same_origin(request) or not hmac.compare_digest(token.encode(), view.session.csrf.encode()):
        log_line("console", "csrf-refused", level=logging.WARNING, keyId=view.key.key_id, path=request.url.path)
        return None
    values = {k: str(v) for k, v in form.items()}
    check_clean(values)
    return values


class ConsoleHeaders:
    """ASGI middleware: the security headers on every response under /console."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith(PREFIX):
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", ())}
                extra = [(k.encode(), v.encode()) for k, v in HEADERS.items() if k.encode() not in present]
                message = dict(message, headers=[*message.get("headers", ()), *extra])
            await send(message)

        await self.app(scope, receive, with_headers)


def signed_out(request: Any) -> Any:
    from starlette.responses import HTMLResponse

    return HTMLResponse(render("signed_out.html", path=request.url.path), status_code=401)


def _described(err: BaseException) -> str:
    return f"{type(err).__name__}: {str(err)[:300]}"


def guarded(console: Console, handler: Callable[..., Any]) -> Callable[..., Any]:
    """A page handler run for a signed-in view; bad input and unreadable ids answer a page."""
    import inspect

    async def endpoint(request: Any) -> Any:
        from starlette.concurrency import run_in_threadpool

        try:
            view = await run_in_threadpool(console.view, request)
        except Exception as err:  # a key store that cannot be read: nobody is signed in
            log_line("console", "page-failed", level=logging.ERROR, path=request.url.path, error=_described(err))
            view = None
        if view is None:
            return signed_out(request)
        try:
            check_clean(dict(request.query_params))
            if inspect.iscoroutinefunction(handler):
                return await handler(console, request, view)
            return await run_in_threadpool(handler, console, request, view)
        except ClientGone:
            return console.page(request, view, "error.html", code=400, message="the request's body never arrived")
        except ValidationError as err:
            return console.page(request, view, "error.html", code=400, message=str(err))
        except (ToolError, GraphWriteError) as refused:  # a write this view may not make: nothing was written
            return console.page(request, view, "error.html", code=403, message=str(refused))
        except NotFound as missing:
            return console.page(request, view, "error.html", code=404, message=f"no {missing.what} in this view")
        except MaxyError as err:
            log_line("console", "page-failed", level=logging.WARNING, path=request.url.path, error=str(err))
            return console.page(request, view, "error.html", code=503, message=str(err))
        except Exception as err:  # never a bare 500 without the console's headers: the log has the cause
            log_line("console", "page-failed", level=logging.ERROR, path=request.url.path, error=_described(err))
            message = "this page could not be shown: the server's log says why"
            return console.page(request, view, "error.html", code=500, message=message)

    return endpoint


def never_fails(handler: Callable[..., Any]) -> Callable[..., Any]:
    """An unauthenticated route: any failure answers the signed-out page (the log has the cause)."""

    async def endpoint(request: Any) -> Any:
        try:
            return await handler(request)
        except ClientGone:  # logged where it was noticed: nobody reads this answer
            return signed_out(request)
        except Exception as err:
            log_line("console", "page-failed", level=logging.ERROR, path=request.url.path, error=_described(err))
            return signed_out(request)

    return endpoint

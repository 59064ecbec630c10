"""The console's routes under ``/console`` of ``maxy serve``: its pages (:mod:`.pages`), login
and logout, and its static files, each page behind the guard of :mod:`.views`."""

from __future__ import annotations

import logging
from typing import Any

from ..config import Settings
from ..db import Database
from ..logs import log_line, short
from ..serving.keys import ApiKeyStore
from .login import consume_login, token_shape
from .sessions import COOKIE
from .templates import render
from .views import (
    PREFIX,
    Console,
    ConsoleHeaders,
    View,
    checked_form,
    guarded,
    never_fails,
    read_form,
    same_origin,
    signed_out,
)


async def logout(console: Console, request: Any, view: View) -> Any:
    from starlette.concurrency import run_in_threadpool

    if await checked_form(request, view) is None:
        return console.page(request, view, "error.html", code=403, message="the form is stale: reload the page")
    await run_in_threadpool(console.sessions.close, request.cookies.get(COOKIE))  # on every replica
    log_line("console", "logout", keyId=view.key.key_id)
    response = signed_out(request)
    response.status_code = 200
    response.delete_cookie(COOKIE, path=PREFIX)
    return response


def mount_console(app: Any, settings: Settings, store: ApiKeyStore, db: Database, embedder: Any) -> Console:
    """Add ``/console`` (pages, login, logout, static files) to the server's app."""
    from starlette.responses import RedirectResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from . import pages
    from .vendor import static_dir

    console = Console(settings, store, db, embedder)

    async def login_page(request: Any) -> Any:
        """The link's page: a button that posts the token. Opening the link uses nothing up, so a
        link checker or a chat preview that fetches it leaves it to the person it was made for."""
        from starlette.responses import HTMLResponse

        token = request.query_params.get("token") or ""
        if not token_shape(token):
            return signed_out(request)
        return HTMLResponse(render("login.html", token=token, path=request.url.path))

    async def login(request: Any) -> Any:
        from starlette.concurrency import run_in_threadpool

        form = await read_form(request)
        used = None
        if same_origin(request):
            used = await run_in_threadpool(consume_login, db, str(form.get("token") or ""))
        key = await run_in_threadpool(store.by_id, used.account_id, used.key_id) if used else None
        if used is None or key is None or not key.holds_view:
            log_line("console", "login-refused", level=logging.WARNING)
            return signed_out(request)
        await run_in_threadpool(console.sessions.close, request.cookies.get(COOKIE))  # the browser's earlier one
        cookie, _ = await run_in_threadpool(console.sessions.open, key.account_id, key.key_id)
        log_line("console", "login", accountId=short(key.account_id), keyId=key.key_id)
        response = RedirectResponse(f"{PREFIX}/search", status_code=303)
        response.set_cookie(
            COOKIE,
            cookie,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path=PREFIX,
        )
        return response

    async def home(request: Any) -> Any:
        return RedirectResponse(f"{PREFIX}/search", status_code=303)

    routes = [
        Route(PREFIX, home),
        Route(PREFIX + "/", home),
        Route(PREFIX + "/login", login_page, methods=["GET"]),
        Route(PREFIX + "/login", never_fails(login), methods=["POST"]),
        Route(PREFIX + "/logout", guarded(console, logout), methods=["POST"]),
        *[Route(PREFIX + path, guarded(console, handler), methods=methods) for path, handler, methods in pages.ROUTES],
        Mount(PREFIX + "/static", app=StaticFiles(directory=static_dir()), name="console-static"),
    ]
    app.router.routes.extend(routes)
    app.add_middleware(ConsoleHeaders)
    return console

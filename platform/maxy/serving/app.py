"""The app ``maxy serve`` runs: one FastAPI app assembled from its routers.

Each router adds its routes to the app and may hand the app something to run for its life
(``Parts.running``: the MCP session managers), to start and stop beside it
(``Parts.background``: the negotiation sweep) and to do once it stops (``Parts.stopping``).
The routers share one database driver, one embedder and one key store, and none imports
another: what they share (reading a request's key, pinning its view) is :mod:`.auth`.

- ``/mcp``: streamable HTTP MCP (:mod:`maxy.mcp.http`);
- ``/console``: the operator console (:mod:`maxy.webconsole`);
- ``/agents``, ``/gateway``, ``/negotiations``: an agent's context, message screening and
  negotiation turns;
- ``/sites``: agents' public pages;
- ``/health``, ``/health/live``, ``/openapi.json`` and ``/docs``: here.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from ..config import Settings, load_settings
from ..db import Database
from ..heap import settle
from ..logs import log_line
from ..plugins.discovery import LoadedPlugin
from .keys import ApiKeyStore
from .parts import Parts

Router = Callable[[Any, Parts], None]


def _mcp(app: Any, parts: Parts) -> None:
    from ..mcp.http import mount_mcp

    mount_mcp(app, parts)


def _console(app: Any, parts: Parts) -> None:
    from ..webconsole.app import mount_console

    mount_console(app, parts.settings, parts.store, parts.db, parts.embedder)


def _agents(app: Any, parts: Parts) -> None:
    from ..agents.http import mount_agent_routes

    mount_agent_routes(app, parts.settings, parts.store, parts.plugins)


def _gateway(app: Any, parts: Parts) -> None:
    from ..gateway.http import mount_gateway_routes

    mount_gateway_routes(app, parts.settings, parts.store, parts.db, parts.embedder)


def _negotiation(app: Any, parts: Parts) -> None:
    from ..community.negotiation.http import mount_negotiation_routes
    from ..community.negotiation.sweep import SweepLoop

    mount_negotiation_routes(app, parts.settings, parts.store, parts.db, parts.embedder)
    parts.background.append(SweepLoop(parts.settings, parts.db, parts.embedder))  # timers fall due while it runs


def _sites(app: Any, parts: Parts) -> None:
    from ..sites.http import mount_sites

    mount_sites(app, parts.settings)


ROUTERS: tuple[Router, ...] = (_mcp, _console, _agents, _gateway, _negotiation, _sites)


def create_app(
    plugins: Sequence[LoadedPlugin],
    settings: Settings | None = None,
    *,
    host: str = "127.0.0.1",
    profiles: Sequence[str] | None = None,
    routers: Sequence[Router] = ROUTERS,
    stateless: bool | None = None,
    settle_heap: bool = False,
) -> Any:
    """The FastAPI app of ``maxy serve``: every router of ``routers`` mounted, ``/health`` and
    ``/health/live``, and ``/openapi.json`` and ``/docs`` describing them (``/mcp`` included).
    An API key is served the tool profiles it was made with, else ``profiles`` (all tools).
    ``stateless`` (None: ``MAXY_MCP_STATELESS``): ``/mcp`` keeps no MCP session between requests.
    ``settle_heap``: once started, settle the process's heap (:func:`maxy.heap.settle`); for the
    process that serves the app (``maxy serve``), never for an application embedding it."""
    from fastapi import FastAPI

    from .. import __version__
    from ..httpjson import JSONAnswer
    from ..mcp.profiles import ALL
    from ..mcp.server import _embedder
    from ..specialists.gate import check_specialists

    settings = settings or load_settings()
    check_specialists(plugins, settings)  # before anything is opened: drift refuses the start
    db = Database(settings)
    parts = Parts(
        settings,
        plugins,
        ApiKeyStore(settings.data_root),
        db,
        _embedder(settings),
        host,
        tuple(profiles or (ALL,)),
        stateless=settings.MAXY_MCP_STATELESS if stateless is None else stateless,
    )

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for run in parts.running:
                await stack.enter_async_context(run())
            for task in parts.background:
                task.start()
            if settle_heap:
                settle("mcp-http")  # everything loaded: later collections skip it
            yield
        for task in parts.background:
            task.stop()
        for stop in parts.stopping:
            stop()
        db.close()

    app = FastAPI(
        title="maxy",
        version=__version__,
        default_response_class=JSONAnswer,
        description="Maxy's MCP tools over streamable HTTP at `/mcp`. Authenticate with an API key from "
        "`maxy mcp key create`, sent as `Authorization: Bearer <key>` or as `x-api-key: <key>`.",
        lifespan=lifespan,
    )
    for router in routers:
        router(app, parts)
    _describe(app)
    _health(app, parts)
    return app


def _describe(app: Any) -> None:
    """``/openapi.json``: FastAPI's, with ``/mcp`` (a mounted ASGI endpoint it leaves out) added."""
    from fastapi.openapi.utils import get_openapi

    from ..mcp.http import MCP_PATH
    from ..mcp.openapi import add_mcp

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            app.openapi_schema = add_mcp(schema, MCP_PATH)
        return app.openapi_schema

    app.openapi = openapi


def _health(app: Any, parts: Parts) -> None:
    from ..httpjson import JSONAnswer
    from ..mcp.health import health_report

    @app.get(
        "/health",
        responses={503: {"description": "Neo4j is unreachable or hung: every tool call fails until it is back"}},
    )
    def health() -> Any:
        """The database (reachable, round-trip latency), the embedder (its breaker, its last error),
        the plugins and tools; 503 when the database is down."""
        report = health_report(parts.db, parts.embedder)
        report["plugins"] = [p.name for p in parts.plugins]
        report["tools"] = dict(parts.tools)
        return JSONAnswer(report, status_code=200 if report["ok"] else 503)

    @app.get("/health/live")
    def live() -> dict[str, Any]:
        """The process answers (no database round trip)."""
        return {"ok": True}


def _loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve_http(
    plugins: Sequence[LoadedPlugin],
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    profiles: Sequence[str] | None = None,
    stateless: bool | None = None,
) -> None:
    """Run the app with uvicorn on ``host:port`` (a warning when it is not a loopback address);
    ``stateless`` as :func:`create_app` takes it."""
    import uvicorn

    from ..mcp.http import MCP_PATH
    from ..mcp.profiles import ALL

    served = tuple(profiles or (ALL,))
    settings = load_settings()
    stateless = settings.MAXY_MCP_STATELESS if stateless is None else stateless
    app = create_app(plugins, settings, host=host, profiles=served, stateless=stateless, settle_heap=True)
    log_line(
        "mcp-http",
        "serve",
        host=host,
        port=port,
        path=MCP_PATH,
        plugins=[p.name for p in plugins],
        profiles=",".join(served),
        mcpSessions="none" if stateless else "kept",
    )
    if not _loopback(host):
        log_line(
            "console",
            "warn",
            level=logging.WARNING,
            reason="plain-http",
            detail="the console's session cookie crosses the network unencrypted: put TLS in front of this server",
        )
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)

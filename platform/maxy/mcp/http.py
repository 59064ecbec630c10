"""Streamable HTTP MCP in a FastAPI app (``maxy serve``), authenticated by an API key.

The key travels as ``Authorization: Bearer <key>`` or as ``x-api-key: <key>`` (both headers
with different keys is refused). A key resolves to an account, a role, an agent slug and
scopes; the call is then pinned exactly as environment pinning pins a stdio server (the key
is the environment). Keys are stored hashed (SHA-256) in
``DATA_ROOT/accounts/<id>/api-keys.json`` (mode 0600) and shown once, by ``maxy mcp key
create``. A missing, unknown or ambiguous key gets 401 (``WWW-Authenticate: Bearer``) before
any MCP message is read. One MCP server per role: an admin key reaches the admin tool set, a
public key the public (read-only, publicAllowlist) one. A session (``mcp-session-id``)
answers only the key that opened it; to any other key it is an unknown session. The active
conversation of a call (what session-compact writes to) is the ``x-maxy-session-id`` header,
else the MCP session. A body that is not one JSON-RPC message gets a JSON-RPC error (400).
``/console`` is the operator console (:mod:`maxy.webconsole`). ``/health`` reports the database and the embedder (503 when Neo4j is down), ``/health/live``
only that the process answers. ``/openapi.json`` and ``/docs`` describe ``/mcp`` and both ways
to send the key. The keys
themselves are kept by :mod:`maxy.mcp.keys`.
"""

from __future__ import annotations

import hmac
import logging
import threading
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any

from ..accounts import validate_account
from ..config import Settings, load_settings
from ..db import Database
from ..errors import ConfigError
from ..logs import log_line, short
from ..plugins.api import COMMUNITY_PLUGIN, ROLES, Role, ToolContext, ToolError
from ..plugins.discovery import LoadedPlugin
from .audit_retention import finish_prunes
from .health import health_report
from .keys import ApiKey, ApiKeyStore
from .profiles import ALL
from .server import MaxyMCPServer, _embedder, check_public_pins, create_mcp_server, pinned_context
from .stdio import bad_message

MCP_PATH = "/mcp"
SESSION_HEADER = "mcp-session-id"
CONVERSATION_HEADER = "x-maxy-session-id"  # the client's own session: the call's active conversation
API_KEY_HEADER = "x-api-key"
REALM = "maxy"
_MAX_BOUND_SESSIONS = 50_000  # above the SDK's default cap of open sessions (10,000 per role server)


@dataclass(frozen=True)
class KeyRefusal:
    """Why a request presents no API key that can be used (a 401)."""

    reason: str  # missing-key, not-bearer, conflicting-keys, unknown-key
    message: str

    def challenge(self) -> str:
        """The WWW-Authenticate value (RFC 6750): no error code when no key was sent at all."""
        base = f'Bearer realm="{REALM}"'
        if self.reason in ("missing-key", "not-bearer"):
            return base
        error = "invalid_token" if self.reason == "unknown-key" else "invalid_request"
        return f'{base}, error="{error}", error_description="{self.message}"'


UNKNOWN_KEY = KeyRefusal("unknown-key", "unknown API key")


def presented_key(headers: Mapping[str, str]) -> tuple[str | None, KeyRefusal | None]:
    """(the API key a request presents, None), or (None, why it presents none that can be used).

    ``Authorization: Bearer <key>`` and ``x-api-key: <key>`` are equivalent; both with the same
    key is fine, with different keys is refused. Another Authorization scheme (Basic from a
    proxy in front, say) is ignored beside an x-api-key and refused on its own."""
    api_key = (headers.get(API_KEY_HEADER) or "").strip() or None
    authorization = (headers.get("authorization") or "").strip()
    scheme, _, token = authorization.partition(" ")
    is_bearer = scheme.lower() == "bearer"
    bearer = (token.strip() or None) if is_bearer else None
    if authorization and not is_bearer and api_key is None:
        return None, KeyRefusal(
            "not-bearer",
            f"Authorization: only the Bearer scheme is accepted (Authorization: Bearer <key>), not {scheme}",
        )
    if api_key and bearer and not hmac.compare_digest(api_key.encode(), bearer.encode()):
        return None, KeyRefusal(
            "conflicting-keys",
            "x-api-key and Authorization: Bearer carry different keys: send one key, in either header",
        )
    key = api_key or bearer
    if key is None:
        return None, KeyRefusal(
            "missing-key", "missing API key: send Authorization: Bearer <key> (or x-api-key: <key>)"
        )
    return key, None


def context_for_key(settings: Settings, record: ApiKey, *, db: Database, embedder: Any) -> ToolContext:
    """The ToolContext an API key pins: its account (validated), role, scopes, agent, task role and
    member, no session.
    ``/mcp`` and the console both build their callers here, so both see exactly the same view."""
    account = validate_account(settings.data_root, record.account_id)
    pinned = settings.model_copy(
        update={
            "ACCOUNT_ID": account.account_id,
            "ALLOWED_SCOPES": list(record.scopes) if record.scopes else None,
            "AGENT_SLUG": record.agent_slug,
            "SESSION_ID": None,
            "SESSION_NODE_ID": None,
            "KNOWLEDGE_KEYWORDS": None,
            "TASK_ROLE": record.task_role,  # the key's, never the serving process's own
            "MEMBER_ID": record.member_id,  # likewise
        }
    )
    if record.role == "public":  # a key file edited by hand must not widen a public key
        check_public_pins(pinned)
    log_line(
        "mcp",
        "pinned",
        role=record.role,
        accountId=short(account.account_id),
        scopes=record.scopes or "all",
        agent=record.agent_slug,
        taskRole=record.task_role,
        member=record.member_id,
        keyId=record.key_id,
    )
    return pinned_context(pinned, record.role, account, db=db, embedder=embedder)


class KeyContexts:
    """The ContextFactory of an HTTP server: pins come from the caller's API key."""

    def __init__(self, settings: Settings, role: Role, store: ApiKeyStore, db: Database, embedder: Any):
        self.settings = settings
        self.role = role
        self.store = store
        self.db = db
        self.embedder = embedder
        self._contexts: dict[tuple[str, str], ToolContext] = {}
        self._lock = threading.Lock()

    def __call__(self, plugin: str, headers: Mapping[str, str] | None) -> ToolContext:
        key, problem = presented_key(headers or {})
        record = self.store.resolve(key)
        if record is None:
            raise ToolError(f"API key: {(problem or UNKNOWN_KEY).message}")
        if record.role != self.role:
            raise ToolError(f"API key: this key has the {record.role} role, not {self.role}")
        with self._lock:
            ctx = self._contexts.get((record.key_id, plugin))
            if ctx is None:
                try:
                    ctx = context_for_key(self.settings, record, db=self.db, embedder=self.embedder)
                except ConfigError as unusable:  # a public key whose record lost its pins
                    raise ToolError(f"API key: {unusable}") from None
                ctx = replace(ctx, plugin=plugin)
                self._contexts[(record.key_id, plugin)] = ctx
        conversation = (headers or {}).get(CONVERSATION_HEADER) or (headers or {}).get(SESSION_HEADER)
        return replace(ctx, session_node_id=conversation.strip()) if conversation and conversation.strip() else ctx


class KeyProfiles:
    """The tool profiles one caller is served: its key's, else the server's (``maxy serve
    --profile``); a member's key without its own is served the community's tools as well."""

    def __init__(self, store: ApiKeyStore, default: Sequence[str]):
        self.store = store
        self.default = tuple(default)

    def __call__(self, headers: Mapping[str, str] | None) -> tuple[str, ...]:
        record = self.store.resolve(presented_key(headers or {})[0])
        if record is None:
            return self.default
        if record.profiles is not None:
            return record.profiles
        if record.member_id is not None and COMMUNITY_PLUGIN not in self.default:
            return (*self.default, COMMUNITY_PLUGIN)
        return self.default


class McpEndpoint:
    """ASGI endpoint at /mcp: authenticate, hold each session to the key that opened it, answer
    an undecodable body, then hand the request to the key's role server."""

    def __init__(self, servers: Mapping[str, MaxyMCPServer], store: ApiKeyStore):
        self.servers = servers
        self.store = store
        self._owners: dict[str, str] = {}  # mcp-session-id -> the key id that opened the session

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        import anyio
        from mcp.server.transport_security import RequestBodyLimitMiddleware
        from starlette.datastructures import Headers
        from starlette.responses import Response

        headers = Headers(scope=scope)
        key, problem = presented_key(headers)
        record = await anyio.to_thread.run_sync(self.store.resolve, key) if key else None
        if record is None:
            await unauthorized(problem)(scope, receive, send)
            return
        manager = self.servers[record.role].session_manager
        scope, send = self._hold_session(scope, send, record.key_id, headers.get(SESSION_HEADER))
        if scope["method"] != "POST":
            await manager.handle_request(scope, receive, send)
            return

        async def checked(scope: Any, receive: Any, send: Any) -> None:
            messages, body = await _read_body(receive)
            bad = bad_message(body) if messages and messages[-1]["type"] == "http.request" else None
            if bad is None:
                await manager.handle_request(scope, _replay(messages, receive), send)
                return
            log_line("mcp-http", "bad-request", level=logging.WARNING, reason=bad.reason, keyId=record.key_id)
            body_json = bad.reply().model_dump_json(by_alias=True, exclude_unset=True)
            await Response(body_json, status_code=400, media_type="application/json")(scope, receive, send)

        # the SDK's size limit applies before the body is read here
        await RequestBodyLimitMiddleware(checked, manager.max_request_body_size)(scope, receive, send)

    def _hold_session(self, scope: Any, send: Any, key_id: str, session: str | None) -> tuple[Any, Any]:
        """Bind a session opened by this request to ``key_id``; a session id bound to another key
        (or to none) is replaced by a fresh one, so the SDK answers exactly as for an unknown session."""
        if session is not None and self._owners.get(session) != key_id:
            if session in self._owners:
                log_line("mcp-http", "session-key-mismatch", level=logging.WARNING, keyId=key_id)
            scope = dict(scope, headers=[(k, v) for k, v in scope["headers"] if k != SESSION_HEADER.encode()])
            scope["headers"].append((SESSION_HEADER.encode(), uuid.uuid4().hex.encode()))
            return scope, send
        method = scope["method"]

        async def watching(message: Any) -> None:
            if message["type"] == "http.response.start":
                status = message["status"]
                opened = next((v for k, v in message.get("headers", ()) if k.lower() == SESSION_HEADER.encode()), None)
                if session is None and opened and status < 400:
                    self._bind(opened.decode("latin-1"), key_id)
                elif session is not None and (status == 404 or (method == "DELETE" and status < 400)):
                    self._owners.pop(session, None)  # deleted by its client, or expired in the SDK
            await send(message)

        return scope, watching

    def _bind(self, session: str, key_id: str) -> None:
        self._owners[session] = key_id
        while len(self._owners) > _MAX_BOUND_SESSIONS:  # expired unseen, oldest first (a live one dropped is refused)
            self._owners.pop(next(iter(self._owners)))


def unauthorized(refusal: KeyRefusal | None) -> Any:
    """The 401 for a request without a usable API key (logged), with its Bearer challenge."""
    from ..httpjson import JSONAnswer

    refusal = refusal or UNKNOWN_KEY
    log_line("mcp-http", "auth-failed", level=logging.WARNING, reason=refusal.reason)
    return JSONAnswer({"error": refusal.message}, status_code=401, headers={"WWW-Authenticate": refusal.challenge()})


async def _read_body(receive: Any) -> tuple[list[Any], bytes]:
    """Every message of the request body (and a disconnect, if one came instead)."""
    messages: list[Any] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request" or not message.get("more_body", False):
            break
    return messages, b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")


def _replay(messages: list[Any], receive: Any) -> Any:
    pending = list(messages)

    async def replay() -> Any:
        return pending.pop(0) if pending else await receive()

    return replay


def create_app(
    plugins: Sequence[LoadedPlugin],
    settings: Settings | None = None,
    *,
    host: str = "127.0.0.1",
    profiles: Sequence[str] = (ALL,),
) -> Any:
    """The FastAPI app: ``/mcp`` (streamable HTTP MCP; Authorization: Bearer or x-api-key),
    ``/health``, and ``/openapi.json`` and ``/docs`` describing both. Each key is served the
    tool profiles it was made with, else ``profiles``."""
    from fastapi import FastAPI
    from fastapi.openapi.utils import get_openapi
    from starlette.routing import Route

    from .. import __version__
    from ..httpjson import JSONAnswer
    from ..specialists.gate import check_specialists
    from .openapi import add_mcp

    settings = settings or load_settings()
    check_specialists(plugins, settings)  # before anything is opened: drift refuses the start
    store = ApiKeyStore(settings.data_root)
    db = Database(settings)
    embedder = _embedder(settings)
    servers: dict[str, MaxyMCPServer] = {}
    for role in ROLES:
        servers[role] = create_mcp_server(
            plugins,
            role,
            KeyContexts(settings, role, store, db, embedder),
            request_profiles=KeyProfiles(store, profiles),
        )
        servers[role].streamable_http_app(streamable_http_path=MCP_PATH, host=host)  # builds its session manager

    from ..negotiation.sweep import SweepLoop

    sweeper = SweepLoop(settings, db, embedder)  # negotiation timers fall due while the server runs

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for server in servers.values():
                await stack.enter_async_context(server.session_manager.run())
            sweeper.start()
            yield
        sweeper.stop()
        finish_prunes(db)
        db.close()

    app = FastAPI(
        title="maxy",
        version=__version__,
        default_response_class=JSONAnswer,
        description="Maxy's MCP tools over streamable HTTP at `/mcp`. Authenticate with an API key from "
        "`maxy mcp key create`, sent as `Authorization: Bearer <key>` or as `x-api-key: <key>`.",
        lifespan=lifespan,
    )
    endpoint = McpEndpoint(servers, store)
    app.router.routes.append(Route(MCP_PATH, endpoint=endpoint))
    app.router.routes.append(Route(MCP_PATH + "/", endpoint=endpoint))

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:  # FastAPI leaves a mounted ASGI app out: describe /mcp here
            schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            app.openapi_schema = add_mcp(schema, MCP_PATH)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    @app.get(
        "/health",
        responses={503: {"description": "Neo4j is unreachable or hung: every tool call fails until it is back"}},
    )
    def health() -> Any:
        """The database (reachable, round-trip latency), the embedder (its breaker, its last error),
        the plugins and tools; 503 when the database is down."""
        from ..httpjson import JSONAnswer

        report = health_report(db, embedder)
        report["plugins"] = [p.name for p in plugins]
        report["tools"] = {role: sorted(server.maxy_tools) for role, server in servers.items()}
        return JSONAnswer(report, status_code=200 if report["ok"] else 503)

    from ..agents.http import mount_agent_routes
    from ..gateway.http import mount_gateway_routes
    from ..negotiation.http import mount_negotiation_routes
    from ..sites.http import mount_sites
    from ..webconsole.app import mount_console

    mount_console(app, settings, store, db, embedder)
    mount_agent_routes(app, settings, store, plugins)
    mount_gateway_routes(app, settings, store, db, embedder)
    mount_negotiation_routes(app, settings, store, db, embedder)
    mount_sites(app, settings)

    @app.get("/health/live")
    def live() -> dict[str, Any]:
        """The process answers (no database round trip)."""
        return {"ok": True}

    return app


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
    profiles: Sequence[str] = (ALL,),
) -> None:
    import uvicorn

    app = create_app(plugins, host=host, profiles=profiles)
    log_line(
        "mcp-http",
        "serve",
        host=host,
        port=port,
        path=MCP_PATH,
        plugins=[p.name for p in plugins],
        profiles=",".join(profiles),
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

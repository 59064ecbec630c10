"""``/mcp``: streamable HTTP MCP, one of the routers of ``maxy serve`` (:mod:`maxy.serving.app`).

A request's API key (``Authorization: Bearer`` or ``x-api-key``, read by
:mod:`maxy.serving.auth`) resolves to an account, a role, an agent slug and scopes; the call is
then pinned exactly as environment pinning pins a stdio server (the key is the environment). A
missing, unknown or ambiguous key gets 401 (``WWW-Authenticate: Bearer``) before any MCP message
is read. One MCP server per role: an admin key reaches the admin tool set, a public key the
public (read-only, publicAllowlist) one. A session (``mcp-session-id``) answers only the key that
opened it; to any other key it is an unknown session. The active conversation of a call (what
session-compact writes to) is the ``x-maxy-session-id`` header, else the MCP session. A body
that is not one JSON-RPC message gets a JSON-RPC error (400).

Stateless (``MAXY_MCP_STATELESS``, ``maxy serve --stateless``): no MCP session is opened or
kept, each request is served on its own, so any replica behind a load balancer answers any
request; the key is still resolved and pinned on every request and every tool call.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..config import Settings
from ..db import Database
from ..errors import ConfigError
from ..logs import log_line
from ..plugins.api import COMMUNITY_PLUGIN, ROLES, Role, ToolContext, ToolError
from ..serving.auth import UNKNOWN_KEY, context_for_key, presented_key, unauthorized
from ..serving.keys import ApiKey, ApiKeyStore
from ..serving.parts import Parts
from .audit_retention import finish_prunes
from .server import MaxyMCPServer, create_mcp_server
from .stdio import bad_message

MCP_PATH = "/mcp"
SESSION_HEADER = "mcp-session-id"
CONVERSATION_HEADER = "x-maxy-session-id"  # the client's own session: the call's active conversation
_MAX_BOUND_SESSIONS = 50_000  # above the SDK's default cap of open sessions (10,000 per role server)


class KeyContexts:
    """The ContextFactory of an HTTP server: pins come from the caller's API key."""

    def __init__(self, settings: Settings, role: Role, store: ApiKeyStore, db: Database, embedder: Any):
        self.settings = settings
        self.role = role
        self.store = store
        self.db = db
        self.embedder = embedder
        # (the key's whole record, plugin) -> its context: a record edited in the key file builds a
        # new one; a revoked key never reaches it, as the key is resolved on every call first
        self._contexts: dict[tuple[ApiKey, str], ToolContext] = {}
        self._lock = threading.Lock()

    def __call__(self, plugin: str, headers: Mapping[str, str] | None) -> ToolContext:
        key, problem = presented_key(headers or {})
        record = self.store.resolve(key)
        if record is None:
            raise ToolError(f"API key: {(problem or UNKNOWN_KEY).message}")
        if record.role != self.role:
            raise ToolError(f"API key: this key has the {record.role} role, not {self.role}")
        with self._lock:
            ctx = self._contexts.get((record, plugin))
            if ctx is None:
                try:
                    ctx = context_for_key(self.settings, record, db=self.db, embedder=self.embedder)
                except ConfigError as unusable:  # a public key whose record lost its pins
                    raise ToolError(f"API key: {unusable}") from None
                ctx = replace(ctx, plugin=plugin)
                self._contexts[(record, plugin)] = ctx
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
    """ASGI endpoint at /mcp: authenticate, hold each session to the key that opened it (when
    sessions are kept), answer an undecodable body, then hand the request to the key's role server."""

    def __init__(self, servers: Mapping[str, MaxyMCPServer], store: ApiKeyStore, *, stateless: bool = False):
        self.servers = servers
        self.store = store
        self.stateless = stateless  # no session to hold: the SDK serves each request on its own
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
        if not self.stateless:
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


def mount_mcp(app: Any, parts: Parts) -> None:
    """Add ``/mcp`` to the server's app: one MCP server per role, each caller served the tool
    profiles of its key, else the server's; their session managers run for the app's life
    (``parts.stateless``: without MCP sessions)."""
    from starlette.routing import Route

    servers: dict[str, MaxyMCPServer] = {}
    for role in ROLES:
        servers[role] = create_mcp_server(
            parts.plugins,
            role,
            KeyContexts(parts.settings, role, parts.store, parts.db, parts.embedder),
            request_profiles=KeyProfiles(parts.store, parts.profiles),
        )
        # builds its session manager; stateless, it opens no MCP session
        servers[role].streamable_http_app(
            streamable_http_path=MCP_PATH, host=parts.host, stateless_http=parts.stateless
        )
        parts.running.append(servers[role].session_manager.run)
    parts.tools.update({role: sorted(server.maxy_tools) for role, server in servers.items()})
    parts.stopping.append(lambda: finish_prunes(parts.db))
    endpoint = McpEndpoint(servers, parts.store, stateless=parts.stateless)
    app.router.routes.append(Route(MCP_PATH, endpoint=endpoint))
    app.router.routes.append(Route(MCP_PATH + "/", endpoint=endpoint))

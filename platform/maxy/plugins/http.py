"""Streamable HTTP MCP in a FastAPI app (``maxy serve``), authenticated by ``x-api-key``.

A key resolves to an account, a role, an agent slug and scopes; the call is then pinned
exactly as environment pinning pins a stdio server (the key is the environment). Keys are
stored hashed (SHA-256) in ``DATA_ROOT/accounts/<id>/api-keys.json`` (mode 0600) and shown
once, by ``maxy mcp key create``. A missing or unknown key gets 401 before any MCP message
is read. One MCP server per role: an admin key reaches the admin tool set, a public key the
public (read-only, publicAllowlist) one. A session (``mcp-session-id``) answers only the key
that opened it; to any other key it is an unknown session. A body that is not one JSON-RPC
message gets a JSON-RPC error (400). A key file that cannot be read is never rewritten.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import threading
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..accounts import accounts_dir, list_accounts, validate_account
from ..config import SCOPE_VALUES, Settings, load_settings
from ..db import Database
from ..errors import ConfigError, ValidationError
from ..graph.allowlist import check_agent_slug
from ..logs import log_line, short
from .api import Role, ToolContext, ToolError
from .discovery import LoadedPlugin
from .server import ROLES, MaxyMCPServer, _embedder, create_mcp_server, pinned_context
from .stdio import bad_message, json_kind

API_KEYS_FILE = "api-keys.json"
KEY_PREFIX = "mxy"
MCP_PATH = "/mcp"
SESSION_HEADER = "mcp-session-id"
_MAX_BOUND_SESSIONS = 50_000  # above the SDK's default cap of open sessions (10,000 per role server)
_lock = threading.Lock()


@dataclass(frozen=True)
class ApiKey:
    key_id: str
    account_id: str
    role: Role
    agent_slug: str | None
    scopes: tuple[str, ...] | None  # None: no scope filter (admin keys only)
    created_at: str
    key_hash: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "keyId": self.key_id,
            "accountId": self.account_id,
            "role": self.role,
            "agentSlug": self.agent_slug,
            "scopes": list(self.scopes) if self.scopes is not None else None,
            "createdAt": self.created_at,
        }


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _keys_path(data_root: Path, account_id: str) -> Path:
    return accounts_dir(data_root) / account_id / API_KEYS_FILE


def _load_keys(path: Path) -> list[dict[str, Any]]:
    """The key records of one account; [] when it has no file. Raises KeyFileError naming the
    file, where it is wrong and the fix, so no writer ever replaces keys it could not read."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as err:
        raise KeyFileError(path, f"cannot be read ({err.strerror or err})") from None
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise KeyFileError(path, f"is not UTF-8 at line {line} column {column} (byte {data[err.start]:#04x})") from None
    except json.JSONDecodeError as err:
        raise KeyFileError(path, f"is not valid JSON at line {err.lineno} column {err.colno} ({err.msg})") from None
    keys = value.get("keys") if isinstance(value, dict) else None
    if not isinstance(value, dict) or not isinstance(keys, list):
        if not isinstance(value, dict):
            found = f"the file holds {json_kind(value)}"
        else:
            found = f'"keys" is {json_kind(keys)}' if "keys" in value else '"keys" is missing'
        raise KeyFileError(path, f'must be an object {{"keys": [...]}}, but {found}')
    for i, key in enumerate(keys):
        if not isinstance(key, dict):
            raise KeyFileError(path, f"keys[{i}] must be an object, but is {json_kind(key)}")
    return keys


class KeyFileError(ConfigError):
    """An API key file that cannot be read: writers refuse, readers count it as no keys."""

    def __init__(self, path: Path, problem: str):
        self.path = path
        self.problem = problem
        super().__init__(f"API key file {path} {problem}: fix or remove {path}; nothing was changed")


def _read_keys(path: Path) -> list[dict[str, Any]]:
    """For readers: a broken file counts as no keys (each of its keys is refused), with a warning."""
    try:
        return _load_keys(path)
    except KeyFileError as err:
        log_line(
            "mcp-http", "warn", level=logging.WARNING, reason="api-keys-unreadable", path=str(path), problem=err.problem
        )
        return []


def _write_keys(path: Path, keys: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(json.dumps({"keys": keys}, indent=2) + "\n")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def _record(account_id: str, raw: dict[str, Any]) -> ApiKey | None:
    role = raw.get("role")
    if role not in ROLES or not isinstance(raw.get("keyId"), str) or not isinstance(raw.get("hash"), str):
        return None
    scopes = raw.get("scopes")
    return ApiKey(
        key_id=raw["keyId"],
        account_id=account_id,
        role=role,
        agent_slug=raw.get("agentSlug") or None,
        scopes=tuple(scopes) if isinstance(scopes, list) else None,
        created_at=str(raw.get("createdAt", "")),
        key_hash=raw["hash"],
    )


def create_api_key(
    data_root: Path,
    account_id: str,
    *,
    role: Role,
    agent_slug: str | None = None,
    scopes: Sequence[str] | None = None,
) -> tuple[str, ApiKey]:
    """Create a key; returns (the key, shown only now, its stored record)."""
    if role not in ROLES:
        raise ValidationError("role", f"must be one of {list(ROLES)}")
    account = validate_account(data_root, account_id)
    if agent_slug is not None:
        agent_slug = check_agent_slug(agent_slug, field="agent")
    if scopes is not None:
        scopes = [s.strip() for s in scopes if s and s.strip()]
        bad = [s for s in scopes if s not in SCOPE_VALUES]
        if bad:
            raise ValidationError("scopes", f"unknown scope(s) {bad}; allowed: {list(SCOPE_VALUES)}")
    if role == "public":
        if not agent_slug:
            raise ValidationError("agent", "a public key needs the public agent's slug (--agent SLUG)")
        scopes = scopes or ["public"]
        if "admin" in scopes:
            raise ValidationError("scopes", "a public key cannot read the admin scope: use public or public,shared")
    key_id = secrets.token_hex(6)
    key = f"{KEY_PREFIX}_{key_id}_{secrets.token_urlsafe(32)}"
    record = ApiKey(
        key_id=key_id,
        account_id=account.account_id,
        role=role,
        agent_slug=agent_slug,
        scopes=tuple(scopes) if scopes else None,
        created_at=datetime.now(UTC).isoformat(),
        key_hash=_hash(key),
    )
    path = _keys_path(data_root, account.account_id)
    with _lock:
        keys = _load_keys(path)
        keys.append(
            {
                "keyId": record.key_id,
                "hash": record.key_hash,
                "role": record.role,
                "agentSlug": record.agent_slug,
                "scopes": list(record.scopes) if record.scopes is not None else None,
                "createdAt": record.created_at,
            }
        )
        _write_keys(path, keys)
    log_line(
        "mcp-http", "api-key", "created", keyId=key_id, role=role, accountId=short(account.account_id), agent=agent_slug
    )
    return key, record


def list_api_keys(data_root: Path, account_id: str | None = None) -> list[ApiKey]:
    out: list[ApiKey] = []
    for account in list_accounts(data_root):
        if account_id and account.account_id != account_id:
            continue
        for raw in _read_keys(_keys_path(data_root, account.account_id)):
            rec = _record(account.account_id, raw)
            if rec is not None:
                out.append(rec)
    return out


def revoke_api_key(data_root: Path, key_id: str) -> bool:
    """Revoke ``key_id`` wherever it is; a key file that cannot be read is never rewritten, and it
    is an error only when the key was not found in any readable one (it may be in that file)."""
    unreadable: KeyFileError | None = None
    for account in list_accounts(data_root):
        path = _keys_path(data_root, account.account_id)
        with _lock:
            try:
                keys = _load_keys(path)
            except KeyFileError as err:
                unreadable = unreadable or err
                continue
            kept = [k for k in keys if k.get("keyId") != key_id]
            if len(kept) != len(keys):
                _write_keys(path, kept)
                log_line("mcp-http", "api-key", "revoked", keyId=key_id, accountId=short(account.account_id))
                return True
    if unreadable is not None:
        raise unreadable
    return False


class ApiKeyStore:
    """Resolves a presented key to its record; re-reads a key file when it changes."""

    def __init__(self, data_root: Path):
        self.data_root = Path(data_root)
        self._cache: dict[Path, tuple[tuple[int, int, int], list[dict[str, Any]]]] = {}
        self._lock = threading.Lock()

    def _keys(self, path: Path) -> list[dict[str, Any]]:
        """The file's keys, read again only when it changes (so a broken one warns once per change)."""
        try:
            st = path.stat()
        except OSError:
            return []
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        with self._lock:
            cached = self._cache.get(path)
            if cached is None or cached[0] != stamp:
                cached = (stamp, _read_keys(path))
                self._cache[path] = cached
            return cached[1]

    def resolve(self, key: str | None) -> ApiKey | None:
        if not key or not isinstance(key, str):
            return None
        parts = key.split("_", 2)
        if len(parts) != 3 or parts[0] != KEY_PREFIX:
            return None
        key_id, digest = parts[1], _hash(key)
        for account in list_accounts(self.data_root):
            for raw in self._keys(_keys_path(self.data_root, account.account_id)):
                if raw.get("keyId") == key_id and hmac.compare_digest(str(raw.get("hash", "")), digest):
                    return _record(account.account_id, raw)
        return None


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
        record = self.store.resolve(headers.get("x-api-key") if headers else None)
        if record is None:
            raise ToolError("x-api-key: missing or unknown API key")
        if record.role != self.role:
            raise ToolError(f"x-api-key: this key has the {record.role} role, not {self.role}")
        with self._lock:
            ctx = self._contexts.get((record.key_id, plugin))
            if ctx is None:
                ctx = replace(self._context_for(record), plugin=plugin)
                self._contexts[(record.key_id, plugin)] = ctx
        return ctx

    def _context_for(self, record: ApiKey) -> ToolContext:
        account = validate_account(self.settings.data_root, record.account_id)
        pinned = self.settings.model_copy(
            update={
                "ACCOUNT_ID": account.account_id,
                "ALLOWED_SCOPES": list(record.scopes) if record.scopes else None,
                "AGENT_SLUG": record.agent_slug,
                "SESSION_ID": None,
                "SESSION_NODE_ID": None,
                "KNOWLEDGE_KEYWORDS": None,
            }
        )
        log_line(
            "mcp",
            "pinned",
            role=record.role,
            accountId=short(account.account_id),
            scopes=record.scopes or "all",
            agent=record.agent_slug,
            keyId=record.key_id,
        )
        return pinned_context(pinned, record.role, account, db=self.db, embedder=self.embedder)


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
        from starlette.responses import JSONResponse, Response

        headers = Headers(scope=scope)
        key = headers.get("x-api-key")
        record = await anyio.to_thread.run_sync(self.store.resolve, key) if key else None
        if record is None:
            reason = "missing-key" if not key else "unknown-key"
            log_line("mcp-http", "auth-failed", level=logging.WARNING, reason=reason)
            message = "missing x-api-key header" if not key else "unknown API key"
            response = JSONResponse({"error": message}, status_code=401, headers={"WWW-Authenticate": "x-api-key"})
            await response(scope, receive, send)
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
) -> Any:
    """The FastAPI app: ``/mcp`` (streamable HTTP MCP, x-api-key) and ``/health``."""
    from fastapi import FastAPI
    from starlette.routing import Route

    settings = settings or load_settings()
    store = ApiKeyStore(settings.data_root)
    db = Database(settings)
    embedder = _embedder(settings)
    servers: dict[str, MaxyMCPServer] = {}
    for role in ROLES:
        servers[role] = create_mcp_server(plugins, role, KeyContexts(settings, role, store, db, embedder))
        servers[role].streamable_http_app(streamable_http_path=MCP_PATH, host=host)  # builds its session manager

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for server in servers.values():
                await stack.enter_async_context(server.session_manager.run())
            yield
        db.close()

    app = FastAPI(title="maxy", lifespan=lifespan)
    endpoint = McpEndpoint(servers, store)
    app.router.routes.append(Route(MCP_PATH, endpoint=endpoint))
    app.router.routes.append(Route(MCP_PATH + "/", endpoint=endpoint))

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {
            "ok": True,
            "plugins": [p.name for p in plugins],
            "tools": {role: sorted(server.maxy_tools) for role, server in servers.items()},
        }

    return app


def serve_http(plugins: Sequence[LoadedPlugin], *, host: str = "127.0.0.1", port: int = 8765) -> None:
    import uvicorn

    app = create_app(plugins, host=host)
    log_line("mcp-http", "serve", host=host, port=port, path=MCP_PATH, plugins=[p.name for p in plugins])
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)

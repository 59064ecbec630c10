"""`maxy serve` authentication: `Authorization: Bearer <key>` beside `x-api-key` (the same key
store), 401s with a Bearer challenge for a missing, unknown or conflicting key, the active
conversation from x-maxy-session-id, and /mcp with both security schemes in /openapi.json.
uvicorn on a free port, the MCP SDK's streamable HTTP client, the real Neo4j."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from maxy.config import load_settings
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.auth import presented_key
from maxy.serving.keys import create_api_key
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.local_http import serve_app
from tests.plugins_fixture.helpers import ACCEPT, ECHO, INIT, text

BRIEFING = {"asked": "a", "done": "b", "decisions": "c", "workInProgress": "d", "aboutUser": "e"}


@contextmanager
def _serving(data_root: Path) -> Iterator[str]:
    plugins = discover_plugins(["session"], [ECHO])
    with serve_app(create_app(plugins, load_settings(DATA_ROOT=data_root))) as base:
        yield base


async def _session(url: str, headers: dict[str, str], work: Any) -> Any:
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await work(session)


async def _modern(url: str, headers: dict[str, str], tool: str, arguments: dict[str, Any]) -> Any:
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        return await client.call_tool(tool, arguments)


def test_presented_key() -> None:
    assert presented_key({"authorization": "Bearer k1"}) == ("k1", None)
    assert presented_key({"authorization": "bearer   k1 "}) == ("k1", None)
    assert presented_key({"x-api-key": "k1"}) == ("k1", None)
    assert presented_key({"x-api-key": "k1", "authorization": "Bearer k1"}) == ("k1", None)
    assert presented_key({"x-api-key": "k1", "authorization": "Basic dTpw"}) == ("k1", None)  # a proxy's own auth
    refusals = {
        "conflicting-keys": {"x-api-key": "k1", "authorization": "Bearer k2"},
        "not-bearer": {"authorization": "Basic dTpw"},
        "missing-key": {"authorization": "Bearer "},
    }
    for reason, headers in refusals.items():
        key, refusal = presented_key(headers)
        assert key is None and refusal is not None and refusal.reason == reason
    key, refusal = presented_key({})
    assert key is None and refusal is not None and refusal.challenge() == 'Bearer realm="maxy"'


def test_bearer_keys_over_http(db, account, data_root: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    admin_key, admin = create_api_key(data_root, account.account_id, role="admin")
    bot_key, _ = create_api_key(data_root, account.account_id, role="public", agent_slug="bot")

    async def whoami(s: ClientSession) -> dict[str, Any]:
        return {
            "tools": {t.name for t in (await s.list_tools()).tools},
            "who": json.loads(text(await s.call_tool("echo-whoami", {}))),
        }

    async def compact(s: ClientSession) -> Any:
        return json.loads(text(await s.call_tool("session-compact", BRIEFING)))

    with _serving(data_root) as base:
        url = base + "/mcp"
        bearer = anyio.run(_session, url, {"authorization": f"Bearer {admin_key}"}, whoami)
        both = anyio.run(_session, url, {"authorization": f"Bearer {admin_key}", "x-api-key": admin_key}, whoami)
        public = anyio.run(_session, url, {"authorization": f"Bearer {bot_key}"}, whoami)
        modern = anyio.run(_modern, url, {"authorization": f"Bearer {bot_key}"}, "echo-whoami", {})
        # the active conversation: the client's x-maxy-session-id, else the MCP session
        named = anyio.run(
            _session, url, {"authorization": f"Bearer {admin_key}", "x-maxy-session-id": "chat-42"}, compact
        )
        by_mcp_session = anyio.run(_session, url, {"authorization": f"Bearer {admin_key}"}, compact)

        # refusals: 401 before any MCP message is read, with a Bearer challenge
        def post(headers: dict[str, str]) -> httpx2.Response:
            return httpx2.post(url, json=INIT, headers=ACCEPT | headers, timeout=30)

        missing = post({})
        unknown = post({"authorization": f"Bearer {admin_key}x"})
        conflicting = post({"authorization": f"Bearer {admin_key}", "x-api-key": bot_key})
        basic = post({"authorization": "Basic dTpw"})
        proxied = post({"authorization": "Basic dTpw", "x-api-key": admin_key})
        with pytest.raises(Exception):  # noqa: B017 - the SDK's own error for the 401 (an MCPError in a group)
            anyio.run(_session, url, {"authorization": "Bearer mxy_000000000000_nope"}, whoami)

    assert bearer["who"]["role"] == "admin" and bearer["who"]["accountId"] == account.account_id
    assert {"echo-write", "session-compact"} <= bearer["tools"]
    assert both["who"] == bearer["who"]
    assert public["tools"] == {"echo-search", "echo-whoami", "echo-slow-search"}
    assert (public["who"]["role"], public["who"]["agentSlug"]) == ("public", "bot")
    assert json.loads(text(modern))["agentSlug"] == "bot"
    assert named["sessionId"] == "chat-42" and named["created"] is True
    assert by_mcp_session["sessionId"] not in ("chat-42", None) and by_mcp_session["created"] is True

    assert missing.status_code == 401 and missing.headers["www-authenticate"] == 'Bearer realm="maxy"'
    assert "Authorization: Bearer" in missing.json()["error"]
    assert unknown.status_code == 401 and unknown.json() == {"error": "unknown API key"}
    assert unknown.headers["www-authenticate"].startswith('Bearer realm="maxy", error="invalid_token"')
    assert conflicting.status_code == 401 and "different keys" in conflicting.json()["error"]
    assert 'error="invalid_request"' in conflicting.headers["www-authenticate"]
    assert basic.status_code == 401 and "only the Bearer scheme" in basic.json()["error"]
    assert proxied.status_code == 200
    assert caplog.text.count("[mcp-http] auth-failed reason=unknown-key") == 2  # the raw request and the SDK's
    conversations = db.read(
        "MATCH (c:Conversation {accountId: $a}) RETURN c.sessionId AS s ORDER BY s", a=account.account_id
    )
    assert "chat-42" in [c["s"] for c in conversations] and len(conversations) == 2
    assert admin.key_id in admin_key


def test_openapi_documents_mcp_and_its_security_schemes(data_root: Path) -> None:
    with _serving(data_root) as base:
        schema = httpx2.get(base + "/openapi.json", timeout=30).json()
        docs = httpx2.get(base + "/docs", timeout=30)
    mcp = schema["paths"]["/mcp"]
    assert set(mcp) == {"post", "get", "delete"}
    schemes = schema["components"]["securitySchemes"]
    assert schemes["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "description": schemes["bearerAuth"]["description"],
    }
    assert (schemes["apiKeyHeader"]["type"], schemes["apiKeyHeader"]["in"], schemes["apiKeyHeader"]["name"]) == (
        "apiKey",
        "header",
        "x-api-key",
    )
    for operation in mcp.values():
        assert operation["security"] == [{"bearerAuth": []}, {"apiKeyHeader": []}]
        assert "WWW-Authenticate" in operation["responses"]["401"]["headers"]
    assert "/health" in schema["paths"]
    assert docs.status_code == 200 and "swagger" in docs.text.lower()

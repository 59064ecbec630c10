"""Streamable HTTP transport: the FastAPI app under uvicorn (in a thread, free port), driven
by the MCP SDK's streamable HTTP client with x-api-key headers against the real Neo4j."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from maxy.config import load_settings
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import create_api_key
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.local_http import serve_app
from tests.plugins_fixture.helpers import ECHO, count, seed_notes, text, tool_calls

EAGER = "anthropic/alwaysLoad"


@contextmanager
def _serving(data_root: Path) -> Iterator[str]:
    """The app with the echo test plugin; yields its MCP URL."""
    with serve_app(create_app(discover_plugins([], [ECHO]), load_settings(DATA_ROOT=data_root))) as base:
        yield base + "/mcp"


async def _with_key(url: str, key: str, work):
    async with (
        httpx2.AsyncClient(headers={"x-api-key": key}, timeout=httpx2.Timeout(30, read=60)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await work(session)


async def _modern_whoami(url: str, key: str) -> tuple[str, str]:
    """The SDK's high-level Client (protocol negotiated automatically, 2026-07-28 when offered)."""
    async with (
        httpx2.AsyncClient(headers={"x-api-key": key}, timeout=httpx2.Timeout(30, read=60)) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        result = await client.call_tool("echo-whoami", {})
        return client.protocol_version, text(result)


def test_http_keys_pin_account_role_and_agent(
    db, account, make_account, data_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    other = make_account("other")
    seed_notes(db, account, other)
    admin_key, _ = create_api_key(data_root, account.account_id, role="admin")
    bot_key, _ = create_api_key(data_root, account.account_id, role="public", agent_slug="bot")
    shared_key, _ = create_api_key(
        data_root, account.account_id, role="public", agent_slug="bot", scopes=["public", "shared"]
    )
    foreign_key, _ = create_api_key(data_root, other.account_id, role="public", agent_slug="bot")

    async def admin_work(s: ClientSession) -> dict:
        out: dict = {"tools": {t.name: t for t in (await s.list_tools()).tools}}
        out["write"] = await s.call_tool("echo-write", {"name": "http note", "scope": "admin"})
        out["search"] = await s.call_tool("echo-search", {"query": "http"})
        out["bad"] = await s.call_tool("echo-write", {"name": "x", "agents": "bot"})
        out["widen"] = await s.call_tool("echo-search", {"query": "alpha", "accountId": other.account_id})
        out["who"] = await s.call_tool("echo-whoami", {})
        return out

    async def public_work(s: ClientSession) -> dict:
        return {
            "tools": {t.name for t in (await s.list_tools()).tools},
            "search": await s.call_tool("echo-search", {"query": "alpha"}),
            "who": await s.call_tool("echo-whoami", {}),
            "write": await s.call_tool("echo-write", {"name": "nope"}),
            "widen": [
                await s.call_tool("echo-search", {"query": "alpha", "agent_slug": "other"}),
                await s.call_tool("echo-search", {"query": "alpha", "allowed_scopes": ["public", "admin"]}),
                await s.call_tool("echo-search", {"query": "alpha", "account_id": str(uuid.uuid4())}),
            ],
        }

    notes_before = count(db, account.account_id, "Note")
    with _serving(data_root) as url:
        # no key / unknown key: 401 before any MCP message is read
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        accept = {"accept": "application/json, text/event-stream"}
        assert httpx2.post(url, json=init, headers=accept).status_code == 401
        assert httpx2.post(url, json=init, headers=accept | {"x-api-key": admin_key + "x"}).status_code == 401
        assert httpx2.get(url.replace("/mcp", "/health")).json()["ok"] is True

        admin = anyio.run(_with_key, url, admin_key, admin_work)
        bot = anyio.run(_with_key, url, bot_key, public_work)
        shared = anyio.run(_with_key, url, shared_key, public_work)
        foreign = anyio.run(_with_key, url, foreign_key, public_work)
        modern_version, modern_who = anyio.run(_modern_whoami, url, foreign_key)

    # admin key: every admin tool, eager meta, writes, audit
    assert {n for n, t in admin["tools"].items() if (t.meta or {}).get(EAGER)} == {"echo-search", "echo-write"}
    assert "echo-fail" in admin["tools"] and "echo-slow-search" not in admin["tools"]
    assert not admin["write"].is_error and text(admin["search"]) == "http note (scope: admin)"
    assert admin["bad"].is_error and text(admin["bad"]).startswith("invalid arguments for echo-write: agents:")
    assert admin["widen"].is_error and "ACCOUNT_ID is pinned" in text(admin["widen"])
    assert json.loads(text(admin["who"]))["allowedScopes"] is None
    assert count(db, account.account_id, "Note") == notes_before + 1
    assert [a["toolName"] for a in tool_calls(db, account.account_id)] == [
        "echo-write",
        "echo-search",
        "echo-write",
        "echo-search",
        "echo-whoami",
    ]
    assert "[persist] tool-call persisted tool=echo-write conversation=none" in caplog.text

    # public keys: only the public tools; only their scope, agent and account
    for result in (bot, shared, foreign):
        assert result["tools"] == {"echo-search", "echo-whoami", "echo-slow-search"}
        assert result["write"].is_error
        assert all(r.is_error and "is pinned for this server" in text(r) for r in result["widen"])
    assert text(bot["search"]) == "alpha public bot (scope: public)"
    assert text(shared["search"]).splitlines() == [
        "alpha public bot (scope: public)",
        "alpha shared bot (scope: shared)",
    ]
    assert text(foreign["search"]) == "alpha foreign bot (scope: public)"
    who = json.loads(text(bot["who"]))
    assert (who["accountId"], who["allowedScopes"], who["agentSlug"], who["role"]) == (
        account.account_id,
        ["public"],
        "bot",
        "public",
    )
    assert json.loads(text(foreign["who"]))["accountId"] == other.account_id
    assert modern_version and json.loads(modern_who)["accountId"] == other.account_id
    assert count(db, other.account_id, "ToolCall") == 0  # public calls are not audited

"""An HTTP MCP session belongs to the API key that opened it: the app under uvicorn, a session
opened by the SDK's streamable HTTP client, replayed with raw httpx by other keys."""

from __future__ import annotations

import json
import logging
import uuid
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from maxy.serving.keys import create_api_key
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.mcp.test_mcp_http import _serving
from tests.plugins_fixture.helpers import text

HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-06-18",
}
WHOAMI = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "echo-whoami", "arguments": {}}}


def _answer(response: httpx2.Response) -> tuple[int, str, dict[str, str]]:
    """What a caller can observe, without the date."""
    return response.status_code, response.text, {k: v for k, v in response.headers.items() if k != "date"}


async def _scenario(url: str, owner: str, others: list[str]) -> dict[str, Any]:
    opened: list[str] = []

    async def remember_session(response: httpx2.Response) -> None:
        if "mcp-session-id" in response.headers and not opened:
            opened.append(response.headers["mcp-session-id"])

    out: dict[str, Any] = {}
    async with httpx2.AsyncClient(timeout=30, headers=HEADERS) as raw:

        async def replay(key: str, session: str, method: str = "POST") -> httpx2.Response:
            headers = {"x-api-key": key, "mcp-session-id": session}
            if method == "POST":
                return await raw.post(url, content=json.dumps(WHOAMI), headers=headers)
            return await raw.request(method, url, headers=headers)

        async with (
            httpx2.AsyncClient(
                headers={"x-api-key": owner}, timeout=30, event_hooks={"response": [remember_session]}
            ) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            session_id = opened[0]
            out["unknown"] = _answer(await replay(others[0], uuid.uuid4().hex))
            out["replayed"] = [_answer(await replay(key, session_id)) for key in others]
            out["stream"] = _answer(await replay(others[0], session_id, "GET"))
            out["delete"] = _answer(await replay(others[0], session_id, "DELETE"))
            out["owner_raw"] = await replay(owner, session_id)  # the owner's key, outside its SDK client
            out["owner_sdk"] = await session.call_tool("echo-whoami", {})  # the session survived the attempts
        # the SDK client ended the session (DELETE) on leaving
        out["after_close"] = _answer(await replay(others[0], session_id))
        out["owner_after_close"] = (await replay(owner, session_id)).status_code
    return out


def test_session_is_bound_to_the_key_that_opened_it(
    db, account, make_account, data_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    other = make_account("other")
    owner, _ = create_api_key(data_root, account.account_id, role="admin")
    same_account, same_record = create_api_key(data_root, account.account_id, role="admin")
    foreign, foreign_record = create_api_key(data_root, other.account_id, role="admin")
    public, public_record = create_api_key(data_root, account.account_id, role="public", agent_slug="bot")

    with _serving(data_root) as url:
        out = anyio.run(_scenario, url, owner, [same_account, foreign, public])

    unknown = out["unknown"]
    assert unknown[0] == 404 and json.loads(unknown[1])["error"]["message"] == "Session not found"
    # another key with a live session id: exactly the unknown-session answer (status, body, headers)
    assert out["replayed"] == [unknown] * 3
    assert out["stream"][0] == 404 and out["stream"][1] == unknown[1]
    assert out["delete"][0] == 404 and out["delete"][1] == unknown[1]
    # the owner's key keeps working, raw and through its SDK session: the other keys' DELETE ended nothing
    assert out["owner_raw"].status_code == 200 and '"id":7' in out["owner_raw"].text
    assert json.loads(text(out["owner_sdk"]))["accountId"] == account.account_id
    # ended by its owner: unknown to everyone, and no longer a mismatch for anyone
    assert out["after_close"] == unknown and out["owner_after_close"] == 404

    mismatches = [r.getMessage() for r in caplog.records if "session-key-mismatch" in r.getMessage()]
    assert mismatches == [
        f"[mcp-http] session-key-mismatch keyId={same_record.key_id}",
        f"[mcp-http] session-key-mismatch keyId={foreign_record.key_id}",
        f"[mcp-http] session-key-mismatch keyId={public_record.key_id}",
        f"[mcp-http] session-key-mismatch keyId={same_record.key_id}",  # the stream
        f"[mcp-http] session-key-mismatch keyId={same_record.key_id}",  # the DELETE
    ]

"""conversation-append over stdio: ``maxy mcp serve memory`` pinned to a session as a
subprocess, driven by the MCP SDK's stdio client; the turns it stores are what
conversation-search finds."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters

from tests.mcp.inprocess import stdio_inprocess
from tests.plugins_fixture.helpers import CLI, REPO, child_env, text


def test_append_then_search_over_stdio(db, account, data_root: Path, tmp_path: Path) -> None:
    session_id = f"chat-{uuid.uuid4().hex[:8]}"
    env = child_env(data_root, ACCOUNT_ID=account.account_id, SESSION_ID=session_id)
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve", "memory"], env=env, cwd=str(REPO))
    log = tmp_path / "server.log"

    async def work() -> dict[str, Any]:
        with log.open("w") as errlog:
            async with stdio_inprocess(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                out: dict[str, Any] = {"tools": {t.name: t for t in (await s.list_tools()).tools}}
                call = s.call_tool
                out["first"] = await call(
                    "conversation-append", {"content": "My boiler makes a banging noise at night", "speaker": "Ana"}
                )
                out["second"] = await call(
                    "conversation-append",
                    {"content": "That sounds like trapped air in the pipes.", "role": "assistant", "speaker": "Bot"},
                )
                out["other"] = await call("conversation-append", {"content": "x", "sessionId": "another-session"})
                out["empty"] = await call("conversation-append", {"content": " "})
                out["search"] = await call("conversation-search", {"query": "boiler noise at night"})
                return out

    out = anyio.run(work)
    hints = out["tools"]["conversation-append"].annotations
    # the same messageId again replaces that turn: destructive; without one each call adds a turn
    assert hints.read_only_hint is False and hints.destructive_hint is True and hints.idempotent_hint is False
    first, second = json.loads(text(out["first"])), json.loads(text(out["second"]))
    assert first["sessionId"] == session_id and first["conversationId"] is None and first["seq"] == 0
    assert second["conversationId"] and second["seq"] == 1
    assert out["other"].is_error and text(out["other"]).startswith("sessionId: SESSION_ID is pinned")
    assert out["empty"].is_error and text(out["empty"]).startswith("content: ")
    found = text(out["search"])
    assert "Ana: My boiler makes a banging noise at night" in found and f"(session: {session_id})" in found
    stderr = log.read_text()
    assert stderr.count("[conversation] op=append") == 2 and "Traceback" not in stderr

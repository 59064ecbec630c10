"""The acceptance path: `maxy mcp config --role admin` output, used as is by a stock
MCP client (the SDK's stdio client), lists the tools, searches, writes a report, reads it
back, and every call is in the audit trail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.plugins_fixture.helpers import REPO, child_env, tool_calls


def test_generated_admin_config_end_to_end(db, account, data_root: Path, tmp_path: Path) -> None:
    env = child_env(data_root, ACCOUNT_ID=account.account_id)
    out = tmp_path / ".mcp.json"
    proc = subprocess.run(
        [sys.executable, "-m", "maxy", "mcp", "config", "--role", "admin", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(REPO),
    )
    assert proc.returncode == 0, proc.stderr
    server = json.loads(out.read_text())["mcpServers"]["maxy"]
    params = StdioServerParameters(
        command=server["command"], args=server["args"], env={**os.environ, **server["env"]}, cwd=str(REPO)
    )

    async def run() -> dict:
        with (tmp_path / "server.log").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                tools = {t.name: t for t in (await s.list_tools()).tools}
                second = time.time() % 60
                if second > 45:  # both writes must fall in one minute: start them in a fresh one
                    await anyio.sleep(60.5 - second)
                wrote = await s.call_tool(
                    "memory-report-write",
                    {
                        "title": "Daily briefing 2026-11-22",
                        "body": "Three boilers serviced; one invoice overdue.",
                        "keywords": ["daily-briefing", "2026-11-22"],
                        "sourceWorkflow": "daily-briefing",
                    },
                )
                again = await s.call_tool(
                    "memory-report-write",
                    {
                        "title": "Daily briefing 2026-11-22",
                        "body": "Three boilers serviced; one invoice overdue.",
                        "keywords": ["daily-briefing", "2026-11-22"],
                        "sourceWorkflow": "daily-briefing",
                    },
                )
                latest = await s.call_tool("memory-report-read-latest", {"keyword": "daily-briefing"})
                found = await s.call_tool("memory-search", {"query": "overdue invoice", "limit": 5})
                return {"tools": tools, "wrote": wrote, "again": again, "latest": latest, "found": found}

    result = anyio.run(run)
    tools = result["tools"]
    assert {"memory-search", "memory-write", "memory-report-write", "memory-report-read-latest"} <= set(tools)
    assert (tools["memory-search"].meta or {}).get("anthropic/alwaysLoad") is True
    for key in ("wrote", "again", "latest", "found"):
        assert not result[key].is_error, result[key].content
    text = lambda r: "".join(getattr(c, "text", "") for c in r.content)  # noqa: E731
    assert "Three boilers serviced" in text(result["latest"])
    assert "one invoice overdue" in text(result["found"])
    reports = db.read("MATCH (r:Report {accountId: $a}) RETURN count(r) AS c", a=account.account_id)[0]["c"]
    assert reports == 1, "a second write with the same title in the same minute returns the first"
    calls = [c["toolName"] for c in tool_calls(db, account.account_id)]
    assert calls.count("memory-report-write") == 2 and "memory-report-read-latest" in calls and "memory-search" in calls

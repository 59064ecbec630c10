"""Tool profiles, through real MCP clients: the server `maxy mcp config` writes by default lists
the daily tools within the token budget, every other tool is reachable by opting in (config,
`maxy serve` and API keys), and a call to a tool of another profile is one line naming it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from maxy.config import load_settings
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import create_api_key
from mcp import ClientSession, StdioServerParameters

from tests.local_http import serve_app
from tests.mcp.inprocess import stdio_inprocess
from tests.mcp.test_one_server_config import _generate
from tests.plugins_fixture.helpers import REPO, child_env, text

DAILY = {
    "memory-search",
    "memory-get",
    "memory-write",
    "memory-forget",
    "memory-remove-relation",
    "memory-ingest",
    "memory-report-write",
    "memory-report-read-latest",
    "memory-report-list",
    "conversation-search",
    "conversation-append",
    "session-context",
    "session-compact",
}
TOOLS_LIST_BUDGET = 8_000  # tokens (characters / 4) of the default tools/list


def _config(data_root: Path, account_id: str, out: Path, *extra: str) -> dict[str, Any]:
    """The one server entry ``maxy mcp config`` writes."""
    (entry,) = _generate(data_root, account_id, out, *extra)["mcpServers"].values()
    return entry


def _listing(entry: dict[str, Any], errlog: Path, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=entry["env"], cwd=str(REPO))

    async def work() -> dict[str, Any]:
        with errlog.open("w") as err:
            async with stdio_inprocess(params, errlog=err) as (read, write), ClientSession(read, write) as s:
                init = await s.initialize()
                listed = await s.list_tools()
                return {
                    "instructions": init.instructions or "",
                    "tools": {t.name: t for t in listed.tools},
                    "tokens": len(json.dumps(listed.model_dump(mode="json", by_alias=True, exclude_none=True))) // 4,
                    "calls": [await s.call_tool(name, arguments) for name, arguments in calls],
                }

    return anyio.run(work)


def _mentioned_tools(instructions: str, installed: set[str]) -> set[str]:
    return {name for name in installed if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", instructions)}


def test_the_default_server_lists_the_daily_tools_within_the_budget_and_names_the_profile_of_the_rest(
    db, account, data_root: Path, tmp_path: Path
) -> None:
    installed = {t.name for p in discover_plugins(None) for t in p.tools}
    entry = _config(data_root, account.account_id, tmp_path / ".mcp.json")
    assert entry["args"][-6:] == ["mcp", "serve", "--profile", "daily", "--role", "admin"]
    out = _listing(
        entry,
        tmp_path / "daily.log",
        [("task_create", {"title": "x"}), ("create_intent", {}), ("memory-delete", {"attachmentId": "a"})],
    )
    assert set(out["tools"]) == DAILY and len(out["tools"]) <= 15
    assert out["tokens"] <= TOOLS_LIST_BUDGET, out["tokens"]
    # the instructions name only tools this server serves, and stay short
    assert _mentioned_tools(out["instructions"], installed) <= DAILY
    assert len(out["instructions"]) // 4 <= 400
    task, intent, delete = out["calls"]
    for result, profile in ((task, "tasks"), (intent, "community"), (delete, "memory")):
        line = text(result)
        assert result.is_error and "\n" not in line, line
        assert f"'{profile}' profile" in line and f"--profile daily,{profile}" in line, line
    assert "[mcp] tool-not-served tool=task_create profile=tasks served=daily" in (tmp_path / "daily.log").read_text()

    # every other tool is reachable by opting in
    wider = _config(data_root, account.account_id, tmp_path / "wider.json", "--profile", "daily,tasks")
    tools = _listing(wider, tmp_path / "wider.log", [])["tools"]
    assert DAILY | {"task_create", "work-create", "work-complete"} <= set(tools)
    assert "create_intent" not in tools
    everything = _config(data_root, account.account_id, tmp_path / "all.json", "--profile", "all")
    assert set(_listing(everything, tmp_path / "all.log", [])["tools"]) == installed


def test_an_unknown_profile_is_one_line_naming_the_flag(account, data_root: Path, tmp_path: Path) -> None:
    for command in (["mcp", "config", "--out", str(tmp_path / "x.json")], ["mcp", "key", "create", "--role", "admin"]):
        proc = subprocess.run(
            [sys.executable, "-m", "maxy", *command, "--profile", "daily,taks"],
            capture_output=True,
            text=True,
            env=child_env(data_root, ACCOUNT_ID=account.account_id),
            cwd=str(REPO),
            timeout=120,
        )
        lines = [line for line in proc.stderr.splitlines() if not line.startswith("[")]
        assert proc.returncode != 0 and "Traceback" not in proc.stderr
        assert lines == [lines[0]] and "--profile: 'taks' is not a tool profile" in lines[0], proc.stderr
        assert "daily" in lines[0] and "tasks" in lines[0]
    assert not (tmp_path / "x.json").exists()


async def _listed_over_http(url: str, key: str, call: tuple[str, dict[str, Any]]) -> tuple[set[str], Any]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers={"x-api-key": key}, timeout=httpx2.Timeout(30, read=60)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        names = {t.name for t in (await session.list_tools()).tools}
        return names, await session.call_tool(*call)


def test_http_keys_are_served_their_own_profiles_else_the_servers(db, account, data_root: Path) -> None:
    settings = load_settings(DATA_ROOT=data_root)
    plain, _ = create_api_key(data_root, account.account_id, role="admin")
    tasks, record = create_api_key(data_root, account.account_id, role="admin", profiles=["tasks"])
    assert record.as_dict()["profiles"] == ["tasks"]
    app = create_app(discover_plugins(None), settings, profiles=["daily"])
    with serve_app(app) as base:
        url = base + "/mcp"
        daily_names, refused = anyio.run(_listed_over_http, url, plain, ("task_list", {}))
        task_names, searched = anyio.run(_listed_over_http, url, tasks, ("memory-search", {"query": "boiler"}))
    assert daily_names == DAILY
    assert refused.is_error and "'tasks' profile" in text(refused)
    assert "task_list" in task_names and "memory-search" not in task_names
    assert searched.is_error and "'daily' profile" in text(searched) and "--profile tasks,daily" in text(searched)

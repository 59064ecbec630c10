"""`maxy mcp config` writes one stdio server for every plugin; started exactly as the config
says by the SDK's stdio client it is one process, and session-compact / session-context work
with the session the client supplies (expanded by the client, or by the server) or, when none
is supplied, with one the server mints at start."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from maxy.config import load_settings
from maxy.mcp.active_session import CONFIG_REFERENCE, expand_reference
from maxy.mcp.clientconfig import build_client_config, write_client_config
from maxy.plugins.discovery import discover_plugins
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.plugins_fixture.helpers import ECHO, REPO, SERVERLESS, child_env, text, tool_calls

BRIEFING = {
    "asked": "Plan the spring boiler service round",
    "done": ["Listed the twelve customers due", "Drafted the route"],
    "decisions": "Mondays and Thursdays only",
    "workInProgress": "Confirm the two Thursday slots",
    "aboutUser": "Prefers morning visits",
}


def _generate(data_root: Path, account_id: str, out: Path, *extra: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "maxy", "mcp", "config", "--out", str(out), *extra],
        capture_output=True,
        text=True,
        env=child_env(data_root, ACCOUNT_ID=account_id),
        cwd=str(REPO),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def _servers_of(data_root: Path) -> list[int]:
    """Pids of the processes started with this test's DATA_ROOT (the MCP servers and any children)."""
    marker = f"DATA_ROOT={data_root}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker in environ:
            found.append(int(entry.name))
    return found


def _run(entry: dict[str, Any], env: dict[str, str], errlog: Path, data_root: Path) -> dict[str, Any]:
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env, cwd=str(REPO))

    async def work() -> dict[str, Any]:
        with errlog.open("w") as err:
            async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                out: dict[str, Any] = {"tools": {t.name for t in (await s.list_tools()).tools}}
                out["processes"] = _servers_of(data_root)
                out["before"] = await s.call_tool("session-context", {})
                out["compact"] = await s.call_tool("session-compact", BRIEFING)
                out["again"] = await s.call_tool("session-compact", dict(BRIEFING, decisions="Mondays only"))
                out["context"] = await s.call_tool("session-context", {})
                return out

    return anyio.run(work)


def _conversations(db: Any, account_id: str) -> list[dict[str, Any]]:
    return db.read(
        "MATCH (c:Conversation {accountId: $a}) RETURN c.sessionId AS sessionId, c.nodeId AS nodeId, "
        "c.compactionCount AS count, labels(c) AS labels",
        a=account_id,
    )


def test_generated_config_is_one_server_whose_session_tools_work(db, account, data_root: Path, tmp_path: Path) -> None:
    config = _generate(data_root, account.account_id, tmp_path / ".mcp.json")
    assert list(config["mcpServers"]) == ["maxy"]
    entry = config["mcpServers"]["maxy"]
    assert entry["type"] == "stdio"
    assert entry["args"][-6:] == ["mcp", "serve", "--profile", "daily", "--role", "admin"]
    assert entry["env"]["SESSION_NODE_ID"] == CONFIG_REFERENCE and "SESSION_ID" not in entry["env"]

    # A client with no session of its own (the SDK's stdio client passes the env as text):
    # the server mints one at start and creates its Conversation on the first compaction.
    log = tmp_path / "minted.log"
    out = _run(entry, entry["env"], log, data_root)
    stderr = log.read_text()
    assert len(out["processes"]) == 1, out["processes"]  # memory and session in one process
    assert {"memory-search", "session-compact", "session-context"} <= out["tools"]
    assert "work-create" not in out["tools"]  # the task tools are opt-in
    for key in ("before", "compact", "again", "context"):
        assert not out[key].is_error, text(out[key])
    minted = re.search(r"\[mcp\] active-session source=minted session=(\w+)", stderr)
    assert minted, stderr
    first, second = json.loads(text(out["compact"])), json.loads(text(out["again"]))
    assert first["created"] is True and second["created"] is False
    assert first["sessionId"].startswith(minted.group(1)) and second["conversationId"] == first["conversationId"]
    context = text(out["context"])
    assert context.startswith("<previous-context>") and "this conversation" in context
    assert "Mondays only" in context and "Confirm the two Thursday slots" in context
    (conv,) = _conversations(db, account.account_id)
    assert conv["sessionId"] == first["sessionId"] and conv["count"] == 2 and "AdminConversation" in conv["labels"]
    # the audit links every call from the first compaction on (the conversation exists by then)
    linked = [c["toolName"] for c in tool_calls(db, account.account_id) if c["conversation"] == first["sessionId"]]
    assert linked == ["session-compact", "session-compact", "session-context"]
    assert "Traceback" not in stderr

    # Claude Code: it expands ${CLAUDE_CODE_SESSION_ID:-} in env values and sets the variable in
    # the environment of the stdio servers it starts. A client that does not expand the reference
    # but has the variable set reaches the same conversation.
    claude = {k: expand_reference(v, {"CLAUDE_CODE_SESSION_ID": "cc-session-1"}) or "" for k, v in entry["env"].items()}
    unexpanded = dict(entry["env"], CLAUDE_CODE_SESSION_ID="cc-session-1")
    for name, env in (("expanded", claude), ("unexpanded", unexpanded)):
        out = _run(entry, env, tmp_path / f"{name}.log", data_root)
        assert len(out["processes"]) == 1
        assert json.loads(text(out["again"]))["sessionId"] == "cc-session-1", text(out["again"])
        assert "this conversation" in text(out["context"])
    sessions = sorted(c["sessionId"] for c in _conversations(db, account.account_id))
    assert sessions == sorted([first["sessionId"], "cc-session-1"])
    assert "[mcp] active-session source=SESSION_NODE_ID session=cc-sessi" in (tmp_path / "expanded.log").read_text()


def test_config_layouts_and_replacing_an_earlier_layout(account, data_root: Path, tmp_path: Path) -> None:
    settings = load_settings(DATA_ROOT=data_root, ACCOUNT_ID=account.account_id)
    plugins = discover_plugins([], [ECHO, SERVERLESS])
    one = build_client_config(plugins, "admin", settings=settings, command=["maxy"])
    assert one["mcpServers"]["maxy"]["args"] == ["mcp", "serve", ECHO, "--role", "admin"]  # serverless: no server
    public = build_client_config(plugins, "public", settings=settings, agent_slug="bot", command=["maxy"])
    assert "SESSION_NODE_ID" not in public["mcpServers"]["maxy"]["env"]  # public servers never compact

    installed = discover_plugins(None)
    per_plugin = build_client_config(installed, "admin", settings=settings, command=["maxy"], per_plugin=True)
    assert sorted(per_plugin["mcpServers"]) == [
        "admin",
        "community",
        "memory",
        "memory-agent",
        "session",
        "taskstore",
        "work",
    ]
    assert per_plugin["mcpServers"]["work"]["args"] == ["mcp", "serve", "work", "--role", "admin"]
    everything = build_client_config(installed, "admin", settings=settings, command=["maxy"], serve_all=True)
    assert everything["mcpServers"]["maxy"]["args"] == ["mcp", "serve", "all", "--role", "admin"]

    # an earlier per-plugin layout is replaced, other servers are kept
    out = tmp_path / ".mcp.json"
    out.write_text(json.dumps({"mcpServers": {"keep": {"command": "x", "args": ["serve"]}}}))
    write_client_config(per_plugin, out)
    path, replaced = write_client_config(everything, out)
    assert (path, replaced) == (out, ["admin", "community", "memory", "memory-agent", "session", "taskstore", "work"])
    assert sorted(json.loads(out.read_text())["mcpServers"]) == ["keep", "maxy"]
    _, replaced = write_client_config(per_plugin, out)
    assert replaced == ["maxy"] and sorted(json.loads(out.read_text())["mcpServers"]) == [
        "admin",
        "community",
        "keep",
        "memory",
        "memory-agent",
        "session",
        "taskstore",
        "work",
    ]

    # the per-plugin layout from the command line
    config = _generate(data_root, account.account_id, tmp_path / "per.json", "--per-plugin")
    assert sorted(config["mcpServers"]) == [
        "admin",
        "community",
        "memory",
        "memory-agent",
        "session",
        "taskstore",
        "work",
    ]

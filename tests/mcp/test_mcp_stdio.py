"""stdio transport: ``maxy mcp serve`` / ``maxy mcp proxy`` as subprocesses, driven by the
MCP SDK's stdio client against the real Neo4j; the boot gate; the fetchMemoryContext bridge."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import anyio
from maxy.agents.bridge import DEFAULT_TIMEOUT_S, fetch_memory_context
from maxy.agents.store import AgentConfig
from maxy.config import load_settings
from maxy.mcp.clientconfig import build_client_config
from maxy.plugins.discovery import discover_plugins
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.cli_inprocess import maxy
from tests.plugins_fixture.helpers import (
    CLI,
    ECHO,
    PLATFORM,
    REPO,
    SERVERLESS,
    child_env,
    count,
    seed_conversation,
    seed_notes,
    text,
    tool_calls,
)

EAGER = "anthropic/alwaysLoad"


async def _session(params: StdioServerParameters, errlog: Path, work) -> object:
    with errlog.open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await work(session)


def test_admin_server_over_stdio(db, account, make_account, data_root: Path, tmp_path: Path) -> None:
    other = make_account("other")
    seed_notes(db, account, other)
    _, conversation = seed_conversation(db, account)
    session_id = str(uuid.uuid4())
    env = child_env(data_root, ACCOUNT_ID=account.account_id, SESSION_ID=session_id, SESSION_NODE_ID=conversation)
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve", ECHO], env=env, cwd=str(REPO))

    async def work(s: ClientSession) -> dict:
        out: dict = {"tools": {t.name: t for t in (await s.list_tools()).tools}}
        out["write"] = await s.call_tool("echo-write", {"name": "stdio note", "scope": "public", "agents": ["bot"]})
        out["search"] = await s.call_tool("echo-search", {"query": "stdio"})
        out["bad"] = await s.call_tool("echo-write", {"name": "  "})
        out["bad_type"] = await s.call_tool("echo-search", {"query": "x", "limit": "many"})
        out["widen"] = [
            await s.call_tool("echo-search", {"query": "alpha", "account_id": other.account_id}),
            await s.call_tool("echo-search", {"query": "alpha", "session_id": "another-session"}),
            await s.call_tool("echo-whoami", {"sessionId": "another-session"}),
        ]
        out["fail"] = await s.call_tool("echo-fail", {})
        return out

    log = tmp_path / "server.log"
    notes_before = count(db, account.account_id, "Note")
    out = anyio.run(_session, params, log, work)
    stderr = log.read_text()

    tools = out["tools"]
    assert {n for n, t in tools.items() if (t.meta or {}).get(EAGER)} == {"echo-search", "echo-write"}
    assert "echo-slow-search" not in tools  # public-only tool
    assert not out["write"].is_error
    assert text(out["search"]) == "stdio note (scope: public)"
    assert out["bad"].is_error and text(out["bad"]) == "name: must not be empty"
    assert out["bad_type"].is_error and text(out["bad_type"]).startswith("invalid arguments for echo-search: limit:")
    assert all(r.is_error and "is pinned for this server" in text(r) for r in out["widen"])
    assert out["fail"].is_error and text(out["fail"]) == "message: echo-fail always fails"
    assert count(db, account.account_id, "Note") == notes_before + 1  # the failed write left nothing
    audit = tool_calls(db, account.account_id)
    assert len(audit) == 8  # write, search, 2 bad inputs, 3 widening attempts, fail
    assert all(a["conversation"] == conversation for a in audit)
    assert stderr.count(f"[persist] tool-call persisted tool=echo-search conversation={conversation[:8]}") == 4
    assert "mcp-config-allowlist-coverage admin-tools=5 admin-registered=5" in stderr
    assert "[graph-health] account-id-env present=true" in stderr
    assert "Traceback" not in stderr


def test_public_server_from_generated_client_config(db, account, make_account, data_root: Path, tmp_path: Path) -> None:
    """`maxy mcp config --role public` output, spawned as a stock client would spawn it."""
    other = make_account("other")
    seed_notes(db, account, other)
    settings = load_settings(DATA_ROOT=data_root, ACCOUNT_ID=account.account_id)
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(PLATFORM), str(REPO)])
    try:
        config = build_client_config(
            discover_plugins([], [ECHO]),
            "public",
            settings=settings,
            agent_slug="bot",
            scopes=["public", "shared"],
            command=CLI,
        )
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = old
    (entry,) = config["mcpServers"].values()
    # A stock client passes only the entry's env (plus a minimal default environment).
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=entry["env"], cwd=str(REPO))
    calls_before = count(db, account.account_id, "ToolCall")

    async def work(s: ClientSession) -> tuple:
        names = {t.name for t in (await s.list_tools()).tools}
        found = await s.call_tool("echo-search", {"query": "alpha"})
        widen = [
            await s.call_tool("echo-search", {"query": "alpha", "allowed_scopes": ["admin"]}),
            await s.call_tool("echo-search", {"query": "alpha", "agent_slug": "other"}),
            await s.call_tool("echo-search", {"query": "alpha", "account_id": other.account_id}),
        ]
        write = await s.call_tool("echo-write", {"name": "sneaky"})
        return names, found, widen, write

    names, found, widen, write = anyio.run(_session, params, tmp_path / "public.log", work)
    assert names == {"echo-search", "echo-whoami", "echo-slow-search"}
    assert text(found).splitlines() == ["alpha public bot (scope: public)", "alpha shared bot (scope: shared)"]
    assert all(r.is_error for r in widen)
    assert write.is_error
    assert count(db, account.account_id, "ToolCall") == calls_before


def test_boot_gate_exits_1(data_root: Path) -> None:
    proc = maxy(["mcp", "serve", ECHO, SERVERLESS], child_env(data_root))
    assert proc.returncode == 1
    assert "boot-failed reason=mcp-allowlist-without-server plugin=serverless tool=serverless-ping" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_public_server_without_pins_exits_1(account, data_root: Path) -> None:
    proc = maxy(
        ["mcp", "serve", ECHO, "--role", "public"],
        child_env(data_root, ACCOUNT_ID=account.account_id, ALLOWED_SCOPES="public"),
    )
    assert proc.returncode == 1 and "AGENT_SLUG" in proc.stderr and proc.stdout == ""


def _upstream() -> tuple[list[str], dict[str, str], str]:
    """PyPI's mcp-neo4j-cypher pointed at our Neo4j when installed (its own venv is fine), else a fixture."""
    cypher = os.environ.get("MAXY_TEST_CYPHER_MCP") or shutil.which("mcp-neo4j-cypher")
    if cypher:
        s = load_settings()
        env = {
            "NEO4J_URI": s.NEO4J_URI,
            "NEO4J_USERNAME": s.NEO4J_USER,
            "NEO4J_PASSWORD": s.NEO4J_PASSWORD or "",
            "NEO4J_DATABASE": s.NEO4J_DATABASE or "neo4j",
        }
        return [cypher, "--read-only"], env, "read_neo4j_cypher"
    return [sys.executable, str(REPO / "tests" / "plugins_fixture" / "upstream_server.py")], {}, "read_cypher"


def test_proxy_injects_eager_meta(data_root: Path, tmp_path: Path) -> None:
    upstream, upstream_env, read_tool = _upstream()
    env = child_env(data_root) | upstream_env
    params = StdioServerParameters(
        command=CLI[0], args=[*CLI[1:], "mcp", "proxy", "--", *upstream], env=env, cwd=str(REPO)
    )

    async def work(s: ClientSession) -> tuple:
        tools = (await s.list_tools()).tools
        result = await s.call_tool(read_tool, {"query": "RETURN 1 AS x"})
        return tools, result

    log = tmp_path / "proxy.log"
    tools, result = anyio.run(_session, params, log, work)
    assert tools and all((t.meta or {}).get(EAGER) is True for t in tools)
    assert f"[graph-mcp] tools/list eager-flagged count={len(tools)}" in log.read_text()
    assert not result.is_error and ("1" in text(result))


# ---------------------------------------------------------------------------------------
# fetchMemoryContext
BOT = AgentConfig("bot", "Bot", live_memory=True, allowed_scopes=("public", "shared"))


def test_bridge_returns_search_text(db, account, make_account, data_root: Path) -> None:
    seed_notes(db, account, make_account("other"))
    found = fetch_memory_context(  # the default command: `python -m maxy mcp serve <plugin> --role public`
        "alpha",
        account_id=account.account_id,
        agent=BOT,
        plugin=ECHO,
        tool="echo-search",
        env=child_env(data_root),
        stderr=subprocess.DEVNULL,
    )
    assert found is not None
    assert found.splitlines() == ["alpha public bot (scope: public)", "alpha shared bot (scope: shared)"]
    # a failure (no such account) is None, not an exception
    assert (
        fetch_memory_context(
            "alpha",
            account_id=str(uuid.uuid4()),
            agent=BOT,
            tool="echo-search",
            command=[*CLI, "mcp", "serve", ECHO, "--role", "public"],
            env=child_env(data_root),
            stderr=subprocess.DEVNULL,
        )
        is None
    )


def test_bridge_reads_the_agent_config(db, account, make_account, data_root: Path, caplog) -> None:
    seed_notes(db, account, make_account("other"))
    public_only = AgentConfig("bot", "Bot", live_memory=True, knowledge_keywords=("alpha",))
    found = fetch_memory_context(
        "alpha",
        account_id=account.account_id,
        agent=public_only,
        plugin=ECHO,
        tool="echo-search",
        env=child_env(data_root),
        stderr=subprocess.DEVNULL,
    )
    assert found is not None and found.splitlines() == ["alpha public bot (scope: public)"]
    # without live memory nothing is spawned: a command that would hang is never started
    started = time.monotonic()
    hung = [sys.executable, "-c", "import time; time.sleep(60)"]
    offline = AgentConfig("bot", "Bot", live_memory=False, allowed_scopes=("public", "shared"))
    with caplog.at_level("INFO"):
        assert fetch_memory_context("alpha", account_id=account.account_id, agent=offline, command=hung) is None
    assert time.monotonic() - started < 1.0
    assert "[memory-bridge] fetch outcome=skipped agent=bot reason=live-memory-off" in caplog.text


def test_bridge_times_out_to_none(account, data_root: Path) -> None:
    assert DEFAULT_TIMEOUT_S == 8.0
    # a server that starts but whose tool never answers in time
    started = time.monotonic()
    result = fetch_memory_context(
        "alpha",
        account_id=account.account_id,
        agent=BOT,
        tool="echo-slow-search",
        timeout=4.0,
        command=[*CLI, "mcp", "serve", ECHO, "--role", "public"],
        env=child_env(data_root),
        stderr=subprocess.DEVNULL,
    )
    assert result is None and time.monotonic() - started < 7.0
    # a process that never speaks at all
    started = time.monotonic()
    hung = [sys.executable, "-c", "import time; time.sleep(60)"]
    assert fetch_memory_context("alpha", account_id=account.account_id, agent=BOT, timeout=1.0, command=hung) is None
    assert time.monotonic() - started < 3.0


def test_maxy_cli_discovers_mcp_commands() -> None:
    import maxy.cli

    assert "mcp" in {g.name for g in maxy.cli.app.registered_groups}
    proc = subprocess.run(  # noqa: PLW1510 - the exit code is what is asserted
        [sys.executable, "-m", "maxy", "mcp", "--help"],
        env=child_env(Path("/nonexistent")),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and "serve" in proc.stdout and "proxy" in proc.stdout

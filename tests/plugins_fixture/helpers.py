"""Shared by the MCP test modules: the fixture plugin's module path, seeding, subprocess env."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from maxy.accounts import ValidatedAccount
from maxy.graph.write import GraphWriter, NodeSpec

ECHO = "tests.plugins_fixture.echo_plugin"
SERVERLESS = "tests.plugins_fixture.serverless_plugin"
BROKEN = "tests.plugins_fixture.broken_plugin"  # cannot be imported
REPO = Path(__file__).resolve().parents[2]
PLATFORM = REPO / "platform"
# The shipping command line (maxy.cli discovers maxy.mcp.cli); `python -m maxy.mcp.cli`
# runs the same commands on their own.
CLI = [sys.executable, "-m", "maxy"]

# (name, scope, agents, which account)  -- a public agent "bot" pinned to public scope
# must see exactly "alpha public bot".
SEED = [
    ("alpha public bot", "public", ["bot"], "a"),
    ("alpha shared bot", "shared", ["bot"], "a"),
    ("alpha admin bot", "admin", ["bot"], "a"),
    ("alpha public other", "public", ["other"], "a"),
    ("alpha public untagged", "public", None, "a"),
    ("alpha foreign bot", "public", ["bot"], "b"),
]


def seed_notes(db: Any, account: ValidatedAccount, other: ValidatedAccount) -> None:
    for acc, key in ((account, "a"), (other, "b")):
        specs = [
            NodeSpec(labels=["Note"], properties={"name": name}, scope=scope, agents=agents)
            for name, scope, agents, which in SEED
            if which == key
        ]
        GraphWriter(db, acc, None, created_by="system").write_many(specs)


def seed_conversation(db: Any, account: ValidatedAccount) -> tuple[str, str]:
    """An AdminConversation; returns (nodeId, sessionId)."""
    session_id = str(uuid.uuid4())
    result = GraphWriter(db, account, None, created_by="system").write(
        NodeSpec(labels=["Conversation", "AdminConversation"], properties={"sessionId": session_id, "name": "t"})
    )
    return result.node_id, session_id


def count(db: Any, account_id: str, label: str) -> int:
    rows = db.read(f"MATCH (n:{label}) WHERE n.accountId = $acc RETURN count(n) AS n", acc=account_id)
    return int(rows[0]["n"])


def tool_calls(db: Any, account_id: str) -> list[dict[str, Any]]:
    return db.read(
        """
        MATCH (t:ToolCall) WHERE t.accountId = $acc
        OPTIONAL MATCH (c:Conversation)-[:INVOKED]->(t)
        RETURN t.toolName AS toolName, t.pluginName AS pluginName, t.isError AS isError, t.input AS input,
               t.output AS output, t.sessionId AS sessionId, t.scope AS scope, t.startedAt AS startedAt,
               t.completedAt AS completedAt, c.sessionId AS conversation
        ORDER BY t.startedAt
        """,
        acc=account_id,
    )


# The pins a stdio server takes from its environment (an HTTP server takes them from each request's key).
PINS = frozenset(
    {"ACCOUNT_ID", "ALLOWED_SCOPES", "AGENT_SLUG", "SESSION_ID", "SESSION_NODE_ID", "KNOWLEDGE_KEYWORDS", "TASK_ROLE"}
)
# The first message of an MCP session over HTTP, and the Accept header streamable HTTP asks for.
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
ACCEPT = {"accept": "application/json, text/event-stream"}


def child_env(data_root: Path, **pins: str | None) -> dict[str, str]:
    """The environment for a server subprocess: ours, the temp DATA_ROOT, exactly these pins (and
    any other setting given the same way), and this checkout's code first on the path (a
    worktree's, not an installed copy's)."""
    env = {k: v for k, v in os.environ.items() if k not in PINS}
    env["DATA_ROOT"] = str(data_root)
    env["PYTHONPATH"] = os.pathsep.join([str(PLATFORM), str(REPO / "plugins"), str(REPO)])
    for key, value in pins.items():
        if value is not None:
            env[key] = value
    return env


def text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def run_at_once(
    script: str, args: list[str], count: int, data_root: Path, *, lead_s: float = 6
) -> list[tuple[int, str, str]]:
    """Run ``count`` Python processes of ``script`` (``python -c``) with ``args`` and the time,
    ``lead_s`` seconds from now, at which each should start its work (by then every one has
    imported and connected); returns each one's exit code, stdout and stderr."""
    start = str(time.time() + lead_s)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, *args, start],
            env=child_env(data_root),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    try:
        outs = [p.communicate(timeout=120) for p in procs]
    finally:
        for p in procs:
            p.kill()
    return [(p.returncode, out, err) for p, (out, err) in zip(procs, outs, strict=True)]

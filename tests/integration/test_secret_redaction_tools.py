"""Secrets never reach the graph, end to end: work-create's Task and the audit trail's input
and output hold no secret value, through the plugins' tools over the real Neo4j (the
redaction functions themselves are tested in ``tests/unit/test_secret_redaction.py``)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import anyio
from maxy.config import load_settings
from maxy.mcp.server import create_mcp_server, pinned_context
from maxy.plugins.discovery import discover_plugins
from maxy.secrets import REDACTED
from mcp import Client


def test_work_create_stores_no_secret_on_the_task_or_in_the_audit(db, account, embedder, data_root: Path) -> None:
    secrets = {"apiToken": "tok-123", "dbPassword": "pw-456", "github_token": "gh-789", "awsSecretAccessKey": "aws-000"}
    settings = load_settings(DATA_ROOT=data_root, ACCOUNT_ID=account.account_id)
    base = pinned_context(settings, "admin", account, db=db, embedder=embedder)
    server = create_mcp_server(
        discover_plugins(["work"]), "admin", lambda plugin, headers: replace(base, plugin=plugin)
    )

    async def run():
        async with Client(server) as client:
            return await client.call_tool(
                "work-create",
                {
                    "kind": "deploy",
                    "inputs": {**secrets, "hostname": "ok.example"},
                    "inputsProvided": {"apiToken": "tok-123", "hostname": "ok.example"},
                },
            )

    result = anyio.run(run)
    assert not result.is_error
    rows = db.read(
        "MATCH (n:Node) WHERE n.accountId = $acc AND (n:Task OR n:ToolCall) RETURN labels(n) AS labels, properties(n) AS p",
        acc=account.account_id,
    )
    stored = {label: r["p"] for r in rows for label in r["labels"] if label in ("Task", "ToolCall")}
    assert set(stored) == {"Task", "ToolCall"}
    everything = json.dumps([{k: v for k, v in r["p"].items() if k != "embedding"} for r in rows])
    assert not [v for v in secrets.values() if v in everything]
    assert stored["Task"]["inputs_hostname"] == "ok.example" and stored["Task"]["inputs_apiToken"] == REDACTED
    assert "ok.example" in stored["ToolCall"]["input"]


def test_the_audit_output_of_a_search_holds_no_secret(db, account, embedder, data_root: Path) -> None:
    """A node may hold a secret-named property (memory-write stores what it is given); the
    search output shows it to the agent, the audit trail keeps it redacted."""
    settings = load_settings(DATA_ROOT=data_root, ACCOUNT_ID=account.account_id)
    base = pinned_context(settings, "admin", account, db=db, embedder=embedder)
    server = create_mcp_server(
        discover_plugins(["memory"]), "admin", lambda plugin, headers: replace(base, plugin=plugin)
    )

    async def run():
        async with Client(server) as client:
            await client.call_tool(
                "memory-write", {"labels": ["Note"], "properties": {"name": "deploy box", "apiToken": "tok-out"}}
            )
            return await client.call_tool("memory-search", {"query": "deploy box", "expandHops": 0})

    result = anyio.run(run)
    assert "tok-out" in "".join(getattr(c, "text", "") for c in result.content)
    audit = db.read(
        "MATCH (t:ToolCall) WHERE t.accountId = $acc RETURN t.toolName AS tool, t.input AS input, t.output AS output",
        acc=account.account_id,
    )
    assert {a["tool"] for a in audit} == {"memory-write", "memory-search"}
    assert not [a for a in audit if "tok-out" in (a["input"] or "") + (a["output"] or "")]

"""A pinned admin server writes only inside its view, over both transports.

stdio: `maxy mcp serve memory work session` with the pins `maxy mcp config --role admin
--scopes public --agent ag1` writes (ALLOWED_SCOPES=public, AGENT_SLUG=ag1), driven by the SDK's
stdio client; HTTP: `maxy serve`'s app with an admin key pinned the same way, driven by the SDK's
streamable HTTP client. Each hostile call of the security review is replayed against an account
holding admin-only nodes: those nodes come out byte-identical, refusals read the same for
hidden, foreign and absent ids, and the server's own writes land in its view.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from maxy.config import config_dir, load_settings
from maxy.graph.guards import Caller
from maxy.graph.write import GraphWriter, NodeSpec
from maxy.mcp.clientconfig import build_client_config
from maxy.mcp.server import pinned_context
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import create_api_key
from maxy_plugins import memory as mem
from maxy_plugins.session import tools as ses
from mcp import ClientSession, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.graph_snapshot import assert_confined, snapshot
from tests.local_http import serve_app
from tests.mcp.inprocess import stdio_inprocess
from tests.plugins_fixture.helpers import CLI, REPO, text

ADMIN_SESSION = "sess-admin"
OCCURRED = "2026-05-07T06:00:00Z"
SECRET_WORDS = ("admin only", "Friday", "salaries", "revenue", "briefing for admins")
VIEW_SCOPES, VIEW_AGENT = ("public",), "ag1"


@dataclass
class Seeded:
    note: str  # an admin-scoped Note tagged ag1: visible to the pinned view if its scope were widened
    foreign: str  # a Note of another account
    attachment: str  # a document ingested with scope admin
    report_title: str  # a Report written by the admin at OCCURRED
    replacement: Path  # a file to ingest under the hidden document's attachmentId
    folder: Path  # a plain file, a link to the config .env, a link out of the folder


def seed(db: Any, embedder: Any, settings: Any, account: Any, other: Any, tmp: Path) -> Seeded:
    """What an unpinned admin wrote before: every piece of it is outside the pinned view."""
    s = settings.model_copy(update={"ACCOUNT_ID": account.account_id, "SESSION_NODE_ID": ADMIN_SESSION})
    admin = pinned_context(s, "admin", account, db=db, embedder=embedder)
    note = mem.memory_write(
        admin,
        labels=["Note"],
        properties={"name": "launch plan", "text": "admin only: the launch moves to Friday"},
        scope="admin",
        agents=["ag1"],
    )["nodeId"]
    foreign = GraphWriter(db, other, None).write(NodeSpec(["Note"], {"name": "theirs"})).node_id
    private = tmp / "private"
    private.mkdir()
    (private / "plan.md").write_text("# Plan\n\nAdmin only: salaries rise in March.\n")
    ingested = mem.memory_ingest(admin, paths=[str(private / "plan.md")], scope="admin")
    report = mem.memory_report_write(
        admin, title="Quarterly numbers", body="admin only: revenue 12M", keywords=["finance"], occurredAt=OCCURRED
    )
    assert not report["idempotent"]
    ses.session_compact(admin, asked="briefing for admins", done="-", decisions="-", workInProgress="-", aboutUser="-")
    replacement = tmp / "replacement.md"
    replacement.write_text("# Opening hours\n\nThe shop opens at nine.\n")
    folder = tmp / "shared-folder"
    folder.mkdir()
    (folder / "readme.md").write_text("# Readme\n\nDirections to the shop.\n")
    (folder / "notes.txt").symlink_to(config_dir().resolve() / ".env")  # the Neo4j password
    (tmp / "outside.md").write_text("# Outside\n\nNot part of the shared folder.\n")
    (folder / "escape.md").symlink_to(tmp / "outside.md")
    return Seeded(note, foreign, ingested["documents"][0]["attachmentId"], "Quarterly numbers", replacement, folder)


async def probe(s: ClientSession, seeded: Seeded) -> dict[str, Any]:
    """The review's hostile calls, each beside its twin aimed at an id that never existed."""
    call = s.call_tool
    r: dict[str, Any] = {}
    for name, target in (("widen", seeded.note), ("widen_absent", "never-1"), ("widen_foreign", seeded.foreign)):
        r[name] = await call(
            "memory-write", {"labels": ["Note"], "properties": {"text": "leak"}, "nodeId": target, "scope": "public"}
        )
    for name, target in (("edge", seeded.note), ("edge_absent", "never-2"), ("edge_foreign", seeded.foreign)):
        r[name] = await call(
            "memory-write",
            {
                "labels": ["Note"],
                "properties": {"name": "pointer"},
                "edges": [{"type": "RELATED_TO", "target": target}],
            },
        )
    r["delete"] = await call("memory-delete", {"attachmentId": seeded.attachment})
    r["delete_absent"] = await call("memory-delete", {"attachmentId": "file:000000000000000000000000"})
    r["report"] = await call(
        "memory-report-write", {"title": seeded.report_title, "body": "overwritten?", "occurredAt": OCCURRED}
    )
    r["ingest"] = await call("memory-ingest", {"paths": [str(seeded.replacement)], "attachmentId": seeded.attachment})
    r["folder"] = await call("memory-ingest", {"paths": [str(seeded.folder)]})
    r["own"] = await call(
        "memory-write", {"labels": ["Note"], "properties": {"name": "opening hours", "text": "the shop opens at nine"}}
    )
    own = json.loads(text(r["own"]))["nodeId"]
    r["own_update"] = await call(
        "memory-write", {"labels": ["Note"], "properties": {"text": "nine to five"}, "nodeId": own}
    )
    r["escape"] = await call("memory-write", {"labels": ["Note"], "properties": {}, "nodeId": own, "scope": "admin"})
    r["tag_other"] = await call("memory-write", {"labels": ["Note"], "properties": {"name": "x"}, "agents": ["ag2"]})
    r["task"] = await call("work-create", {"kind": "probe"})
    r["task_hidden"] = await call("work-update", {"taskId": seeded.note, "note": "x"})
    r["task_absent"] = await call("work-update", {"taskId": "never-3", "note": "x"})
    r["compact"] = await call(
        "session-compact", {"asked": "pinned", "done": "-", "decisions": "-", "workInProgress": "-", "aboutUser": "-"}
    )
    r["search"] = await call("memory-search", {"query": "launch plan salaries revenue quarterly briefing", "limit": 50})
    r["search_own"] = await call("memory-search", {"query": "opening hours", "limit": 20})
    return r


def same_refusal(a: Any, a_id: str, b: Any, b_id: str) -> bool:
    return a.is_error and b.is_error and text(a).replace(a_id, "<ID>") == text(b).replace(b_id, "<ID>")


def check(
    db: Any, account: Any, seeded: Seeded, r: dict[str, Any], before: Any, accounts: list[str], stdio: bool
) -> None:
    view = Caller(account.account_id, VIEW_SCOPES, VIEW_AGENT)
    # widening a hidden node through a tool argument: refused, and the refusal confirms nothing
    assert same_refusal(r["widen"], seeded.note, r["widen_absent"], "never-1"), text(r["widen"])
    assert same_refusal(r["widen_foreign"], seeded.foreign, r["widen_absent"], "never-1")
    assert text(r["widen"]).startswith(f"nodeId: no node {seeded.note!r} that you can write; nothing was written")
    assert same_refusal(r["edge"], seeded.note, r["edge_absent"], "never-2")
    assert same_refusal(r["edge_foreign"], seeded.foreign, r["edge_absent"], "never-2")
    assert same_refusal(r["delete"], seeded.attachment, r["delete_absent"], "file:000000000000000000000000")
    assert same_refusal(r["task_hidden"], seeded.note, r["task_absent"], "never-3")
    # natural keys of hidden nodes: the pinned view gets its own report and document
    assert not r["report"].is_error and json.loads(text(r["report"]))["idempotent"] is False
    assert not r["ingest"].is_error and json.loads(text(r["ingest"]))["written"] == 1
    # a folder is ingested by real path: the link to the config .env and the link out are skipped
    folder = json.loads(text(r["folder"]))
    reasons = {Path(d["path"]).name: d["reason"] for d in folder["documents"]}
    assert reasons == {"readme.md": None, "notes.txt": "protected-folder", "escape.md": "outside-folder"}, folder
    password = load_settings().NEO4J_PASSWORD
    stored = db.read("MATCH (n:Node) WHERE n.accountId = $acc RETURN properties(n) AS p", acc=account.account_id)
    assert password and not [r for r in stored if password in json.dumps(r["p"])]
    # the server's own writes: in its view, updatable, never moved out of it or into another agent's
    assert not r["own"].is_error and not r["own_update"].is_error
    assert json.loads(text(r["own_update"]))["created"] is False
    assert text(r["escape"]).startswith("scope: 'admin' is outside this server's pinned scopes ['public']")
    assert text(r["tag_other"]).startswith("agents: this server is pinned to agent 'ag1'")
    assert not r["task"].is_error
    assert not r["compact"].is_error, text(r["compact"])  # stdio: SESSION_NODE_ID; HTTP: the MCP session
    for key in ("search", "search_own"):
        assert not r[key].is_error
        assert not any(word.lower() in text(r[key]).lower() for word in SECRET_WORDS), text(r[key])
    assert "opening hours" in text(r["search_own"])
    assert_confined(before, snapshot(db, accounts), view)
    hidden = db.read(
        "MATCH (n:Node) WHERE n.accountId = $acc AND n.scope = 'admin' AND NOT n:ToolCall RETURN count(n) AS c",
        acc=account.account_id,
    )[0]["c"]
    assert hidden >= 7  # note, document, section, chunk, report, AdminUser, conversation: all still there


@pytest.fixture()
def scene(db, embedder, settings, account, make_account, tmp_path):
    other = make_account("other")
    seeded = seed(db, embedder, settings, account, other, tmp_path)
    accounts = [account.account_id, other.account_id]
    return seeded, accounts, snapshot(db, accounts)


def test_pinned_stdio_server_from_the_generated_config(db, account, data_root: Path, tmp_path: Path, scene) -> None:
    seeded, accounts, before = scene
    config = build_client_config(
        discover_plugins(None),
        "admin",
        settings=load_settings(DATA_ROOT=data_root, ACCOUNT_ID=account.account_id),
        agent_slug="ag1",
        scopes=["public"],
        command=CLI,
    )
    env = dict(config["mcpServers"]["maxy"]["env"], SESSION_NODE_ID=ADMIN_SESSION)
    assert (env["ALLOWED_SCOPES"], env["AGENT_SLUG"]) == ("public", "ag1")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "platform"), str(REPO)])
    params = StdioServerParameters(
        command=CLI[0],
        args=[*CLI[1:], "mcp", "serve", "memory", "work", "session", "--role", "admin"],
        env=env,
        cwd=str(REPO),
    )

    async def run() -> dict[str, Any]:
        with (tmp_path / "server.log").open("w") as errlog:
            async with stdio_inprocess(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                return await probe(s, seeded)

    results = anyio.run(run)
    log = (tmp_path / "server.log").read_text()
    assert "Traceback" not in log and "[graph-write] reject reason=not-writable" in log
    check(db, account, seeded, results, before, accounts, stdio=True)


def test_pinned_http_key(db, account, data_root: Path, scene) -> None:
    seeded, accounts, before = scene
    key, _ = create_api_key(data_root, account.account_id, role="admin", agent_slug="ag1", scopes=["public"])

    async def run(url: str) -> dict[str, Any]:
        async with (
            httpx2.AsyncClient(headers={"x-api-key": key}, timeout=httpx2.Timeout(60, read=120)) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            return await probe(s, seeded)

    with serve_app(create_app(discover_plugins(None), load_settings(DATA_ROOT=data_root))) as base:
        results = anyio.run(run, base + "/mcp")
    check(db, account, seeded, results, before, accounts, stdio=False)

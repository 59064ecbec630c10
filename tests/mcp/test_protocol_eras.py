"""Every tool of the memory, work, session, admin, taskstore, memory-agent and community plugins, called by the SDK's client in both
protocol eras it speaks (``mode="legacy"``: the 2025-11-25 initialize handshake; ``mode="auto"``:
``server/discover``, then the stateless 2026-07-28 revision) over stdio (``maxy mcp serve``) and
streamable HTTP (``maxy serve``'s app), against the real Neo4j: each answer carries a text block
and structuredContent that validates against the tool's outputSchema. The task tools are called
by the role each needs: the main server acts as the orchestrator, and one more server (stdio) or
key (HTTP) per other task role serves the taskstore plugin beside it; the community's tools are
called by the admin naming members, and a negotiation turn by one more server (stdio) or key (HTTP)
pinned to the member whose turn it is."""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from jsonschema import Draft202012Validator
from maxy.community import community_writer
from maxy.community.negotiation import Negotiations
from maxy.community.opportunities import create_opportunity
from maxy.config import load_settings
from maxy.graph.guards import Caller
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import create_api_key
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.local_http import serve_app
from tests.mcp.inprocess import stdio_inprocess
from tests.plugins_fixture.helpers import CLI, REPO, child_env, text

PLUGINS = ["memory", "work", "session", "admin", "taskstore", "memory-agent", "community"]
TASK_ROLES = ("executor", "spec_reviewer", "quality_reviewer", "approver")  # beside the main server's orchestrator
SPEC = {
    "goal": "Check every task tool",
    "scope_in": ["the taskstore plugin's tools"],
    "scope_out": [],
    "inputs": [],
    "outputs": ["a completed task"],
    "acceptance_criteria": ["every task tool returns its outputSchema"],
    "risks": [],
}
ERAS = {"legacy": "2025-11-25", "auto": "2026-07-28"}
SEARCHES = {"memory-search", "conversation-search", "session-context"}  # text stays rendered, not JSON


Call = Callable[..., Awaitable[dict[str, Any]]]
Seeder = Callable[[], dict[str, str]]
MEMBER = "bob"  # the member the extra server or key is pinned to


def _seeder(db: Any, account: Any, embedder: Any) -> Seeder:
    """Opportunities the admin's tools move (one to accept, one to reject) and a negotiation
    waiting for bob's agent, written the way discovery and the system write them."""

    def seed() -> dict[str, str]:
        writer = community_writer(db, account, embedder, Caller(account.account_id), created_by="test")

        def opportunity(source: str, candidate: str) -> str:
            return create_opportunity(
                writer,
                source_member_id=source,
                candidate_member_id=candidate,
                network_id="seeded",
                score=84,
                reasoning=f"{source} needs what {candidate} builds",
                source_role="patient",
                candidate_role="agent",
            )["opportunityId"]

        accept, reject, talk = opportunity("ada", MEMBER), opportunity(MEMBER, "ada"), opportunity("cy", MEMBER)
        negotiations = Negotiations(db, account, load_settings(ANTHROPIC_API_KEY=""), embedder=embedder)
        seed = {"score": 84, "reasoning": "cy needs a React engineer", "valencyRole": "agent"}
        started = negotiations.start(talk, seed=seed, candidate_kind="personal")
        return {"accept": accept, "reject": reject, "negotiation": started["negotiationId"]}

    return seed


async def _community_tools(call: Call, seed: Seeder) -> None:
    """Profiles, networks and intents named by the admin, a discovery, the opportunities' moves,
    and the member's own server answering its negotiation turn."""
    profile = {"memberId": "ada", "name": "Ada", "bio": "Founder of a gardening app"}
    await call("create_user_profile", profile)
    await call("create_user_profile", {"memberId": MEMBER, "name": "Bob", "bio": "React engineer"})
    await call("create_user_profile", {"memberId": "cy", "name": "Cy", "bio": "Product designer"})
    await call("update_user_profile", {"memberId": MEMBER, "name": "Bob", "negotiationMode": "personal"})
    network = (await call("create_network", {"memberId": "ada", "name": "Builders"}))["networkId"]
    await call("join_network", {"networkId": network, "memberId": MEMBER})
    await call("add_network_member", {"networkId": network, "newMemberId": "cy"})
    await call("leave_network", {"networkId": network, "memberId": "cy"})
    await call("list_networks", {})
    await call("read_user_profiles", {})
    offer = {"description": "I offer React engineering as a co-founder", "type": "offering"}
    await call("create_intent", {"memberId": MEMBER, "intents": [offer], "discover": False})
    seek = {"description": "Looking for a React engineer as a co-founder", "type": "seeking"}
    (intent,) = (await call("create_intent", {"memberId": "ada", "intents": [seek], "discover": False}))["created"]
    await call("read_intents", {"ownerMemberId": "ada"})
    await call("assign_intent_network", {"intentId": intent["intentId"], "networkId": network, "direct": True})
    await call("discover_opportunities", {"memberId": "ada", "intentId": intent["intentId"], "negotiate": False})
    await call("update_intent", {"intentId": intent["intentId"], "type": "seeking"})
    await call("delete_intent", {"intentId": intent["intentId"]})
    seeded = seed()
    await call("list_opportunities", {"status": "latent"})
    await call("get_opportunity", {"opportunityId": seeded["accept"]})
    await call("send_opportunity", {"opportunityId": seeded["accept"]})
    await call("accept_opportunity", {"opportunityId": seeded["accept"]})
    await call("send_opportunity", {"opportunityId": seeded["reject"]})
    await call("reject_opportunity", {"opportunityId": seeded["reject"]})
    await call("get_negotiation", {"negotiationId": seeded["negotiation"]})
    await call("list_negotiations", {"status": "waiting_for_agent"}, role="member")
    turn = {"action": "accept", "reasoning": "cy's app needs this", "ownUser": "agent", "otherUser": "patient"}
    await call("respond_to_negotiation", {"negotiationId": seeded["negotiation"]} | turn, role="member")


async def _task_tools(call: Call, project: str) -> None:
    """A protocol task from creation to completion, each step by the role it needs."""
    task = await call("task_create", {"spec": SPEC, "title": "Contract check"})
    tid, version = task["taskId"], 1
    await call("task_update_spec", {"taskId": tid, "spec": SPEC, "expectedVersion": 1})
    version += 1
    phase = "spec_draft"

    async def move(to: str, **extra: Any) -> dict[str, Any]:
        nonlocal phase, version
        moved = await call(
            "task_transition",
            {"taskId": tid, "to": to, "expectedPhase": phase, "expectedVersion": version} | extra,
        )
        phase, version = moved["phase"], moved["version"]
        return moved

    review = {"taskId": tid, "verdict": "approved"}
    await move("spec_review")
    await call("task_append_review", review | {"gate": "spec_review"}, role="spec_reviewer")
    await move("execution_ready")
    attempt = {"taskId": tid, "attemptId": (await move("executing"))["attemptId"]}
    await call("task_heartbeat", attempt | {"checkpoint": {"step": 1}}, role="executor")
    await call("task_set_external_ref", attempt | {"system": "acp", "ref": "session-1"}, role="executor")
    await call("task_add_artifact", attempt | {"name": "report", "ref": "out/report.md"}, role="executor")
    effect = await call("task_plan_side_effect", {"taskId": tid, "step": "notify", "payload": {}}, role="executor")
    await call("task_finish_attempt", attempt | {"outcome": "succeeded"}, role="executor")
    await move("spec_gate")
    await call("task_append_review", review | {"gate": "spec_gate"}, role="spec_reviewer")
    await move("quality_gate")
    await call("task_append_review", review | {"gate": "quality_gate"}, role="quality_reviewer")
    approval = (await move("awaiting_approval"))["approvalId"]
    decision = {"taskId": tid, "approvalId": approval, "decision": "approved"}
    await call("task_decide_approval", decision, role="approver")
    await move("ready_to_resume")
    await call("task_resume", {"taskId": tid, "idempotencyKey": effect["idempotencyKey"]}, role="approver")
    await move("completed")
    await call("task_link_produced", {"taskId": tid, "nodeIds": [project]})
    await call("task_get", {"taskId": tid})
    await call("task_list", {"phase": "completed"})
    await call("task_events", {"taskId": tid})


async def _every_tool(client: Client, doc: Path, tag: str, roles: dict[str, Client], seed: Seeder) -> dict[str, Any]:
    """Call each tool once with good arguments (a task tool by the ``roles`` client its role needs,
    else by ``client``); returns what the checks need."""
    listed = {t.name: t for t in (await client.list_tools()).tools}
    results: list[tuple[str, Any]] = []

    async def call(name: str, args: dict[str, Any], role: str | None = None) -> dict[str, Any]:
        result = await (roles[role] if role else client).call_tool(name, args)
        assert not result.is_error, f"{name}: {text(result)}"
        results.append((name, result))
        if listed[name].output_schema is None:  # a tool that declares no output model answers JSON text
            return dict(json.loads(text(result)))
        return result.structured_content or {}

    task = await call("work-create", {"kind": "contract-check", "title": f"Contract check {tag}", "priority": "high"})
    made = {"producedByTaskId": task["taskId"]}
    project = await call("memory-write", {"labels": "Project", "properties": {"name": f"Apollo rollout {tag}"}} | made)
    note = await call(
        "memory-write",
        {
            "labels": ["Note"],
            "properties": {"name": f"Apollo kickoff notes {tag}", "text": "The rollout starts in March."},
            "edges": [{"type": "ABOUT", "target": project["nodeId"]}],
            "scope": "admin",
        }
        | made,
    )
    await call("memory-get", {"nodeIds": project["nodeId"], "hops": 1})
    await call("memory-search", {"query": f"Apollo rollout {tag}", "limit": 5})
    await call("memory-search", {"query": "zebra quantum marmalade", "expandHops": 0})
    await call("work-update", {"taskId": task["taskId"], "step": "written the project", "status": "running"})
    await call("work-complete", {"taskId": task["taskId"], "producedNodeIds": [project["nodeId"], note["nodeId"]]})
    await call("memory-remove-relation", {"source": note["nodeId"], "type": "ABOUT", "target": project["nodeId"]})
    await call("memory-forget", {"nodeId": note["nodeId"]})
    ingested = await call("memory-ingest", {"paths": [str(doc)]})
    await call("memory-delete", {"attachmentId": ingested["documents"][0]["attachmentId"]})
    await call("memory-reindex", {"labels": ["Project"]})
    session = f"chat-{tag}"
    await call("conversation-append", {"content": "Where is the Apollo kickoff?", "sessionId": session})
    await call("conversation-append", {"content": "In room 4.", "role": "assistant", "sessionId": session})
    await call("conversation-search", {"query": "Apollo kickoff room", "sessionId": session})
    memory = f"contract-{tag}"
    entry = {"memoryId": memory, "summary": "The Apollo kickoff is in room 4", "rawEntry": "In room 4."}
    await call("add_entry", entry | {"role": "assistant", "sessionId": session, "tags": ["apollo"]})
    await call("list_entries", {"memoryId": memory, "limit": 5})
    await call("put_context", {"memoryId": memory, "content": "The Apollo kickoff is in room 4."})
    await call("get_context", {"memoryId": memory})
    await call("await_consistency", {"memoryId": memory})
    keyword = f"contract-{tag}"
    await call("memory-report-write", {"title": "Contract run", "body": "All tools answered.", "keywords": [keyword]})
    await call("memory-report-read-latest", {"keyword": keyword})
    await call("memory-report-list", {"keyword": keyword, "limit": 5})
    await call(
        "session-compact",
        {"asked": "check the tools", "done": ["called each"], "decisions": "", "workInProgress": "", "aboutUser": ""},
    )
    await call("session-context", {})
    await call("public-hostname", {})
    await _task_tools(call, project["nodeId"])
    await _community_tools(call, seed)
    return {
        "version": client.protocol_version,
        "instructions": client.session.instructions,
        "listed": listed,
        "results": results,
    }


def _check(out: dict[str, Any], mode: str) -> None:
    assert out["version"] == ERAS[mode]
    assert out["instructions"] and "relevance" in out["instructions"]
    listed, results = out["listed"], out["results"]
    assert {name for name, _ in results} == set(listed), "every tool was called"
    for name, result in results:
        schema = listed[name].output_schema
        if schema is None:  # no output model declared (the contract test lists these): JSON text only
            assert result.structured_content is None and json.loads(text(result)), name
            continue
        errors = sorted(Draft202012Validator(schema).iter_errors(result.structured_content), key=str)
        assert not errors, f"{name}: {errors[0].message}"
        [block] = result.content
        assert block.type == "text" and block.text
        if name not in SEARCHES:
            assert json.loads(block.text) == result.structured_content, name
    searched = [r for name, r in results if name == "memory-search"]
    assert searched[0].structured_content["hits"], "the project is found"
    assert text(searched[0]).startswith("[")  # the rendered blocks, as before
    nonsense = searched[1].structured_content
    if text(searched[1]).startswith("No relevant results"):  # nothing cleared the cut: the nearest miss, as data too
        assert nonsense["hits"] == [] and nonsense["nearestMiss"]["nodeId"]
    found = [r for name, r in results if name == "conversation-search"][0].structured_content["hits"]
    assert {h["content"] for h in found} >= {"Where is the Apollo kickoff?"}


@pytest.fixture()
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "docs" / "apollo.md"
    path.parent.mkdir()
    path.write_text("# Apollo\n\n## Kickoff\n\nThe Apollo rollout kickoff is in room 4 on Monday.\n")
    return path


@pytest.mark.parametrize("mode", list(ERAS))
def test_every_tool_over_stdio(mode: str, db, account, embedder, data_root: Path, tmp_path: Path, doc: Path) -> None:
    env = child_env(data_root, ACCOUNT_ID=account.account_id, SESSION_NODE_ID=f"session-{uuid.uuid4().hex[:8]}")

    def params(plugins: list[str], role: str) -> StdioServerParameters:
        args = [*CLI[1:], "mcp", "serve", *plugins]
        return StdioServerParameters(command=CLI[0], args=args, env=dict(env, TASK_ROLE=role), cwd=str(REPO))

    async def run() -> dict[str, Any]:
        async with AsyncExitStack() as stack:
            roles = {}
            for role in TASK_ROLES:
                errlog = stack.enter_context((tmp_path / f"{role}.log").open("w"))
                served = Client(stdio_inprocess(params(["taskstore"], role), errlog=errlog), mode=mode)
                roles[role] = await stack.enter_async_context(served)
            member = StdioServerParameters(
                command=CLI[0],
                args=[*CLI[1:], "mcp", "serve", "community"],
                env=dict(env, MEMBER_ID=MEMBER),
                cwd=str(REPO),
            )
            errlog = stack.enter_context((tmp_path / "member.log").open("w"))
            roles["member"] = await stack.enter_async_context(Client(stdio_inprocess(member, errlog=errlog), mode=mode))
            errlog = stack.enter_context((tmp_path / "server.log").open("w"))
            client = await stack.enter_async_context(
                Client(stdio_inprocess(params(PLUGINS, "orchestrator"), errlog=errlog), mode=mode)
            )
            return await _every_tool(client, doc, uuid.uuid4().hex[:8], roles, _seeder(db, account, embedder))

    _check(anyio.run(run), mode)
    for log in tmp_path.glob("*.log"):
        assert "Traceback" not in log.read_text(), log.name


@contextmanager
def _http(data_root: Path) -> Iterator[str]:
    with serve_app(create_app(discover_plugins(PLUGINS), load_settings(DATA_ROOT=data_root))) as base:
        yield base + "/mcp"


@pytest.mark.parametrize("mode", list(ERAS))
def test_every_tool_over_http(mode: str, db, account, embedder, data_root: Path, doc: Path) -> None:
    keys = {
        role: create_api_key(data_root, account.account_id, role="admin", task_role=role)[0]
        for role in ("orchestrator", *TASK_ROLES)
    }
    keys["member"] = create_api_key(data_root, account.account_id, role="admin", member_id=MEMBER)[0]
    session = {"x-maxy-session-id": f"session-{uuid.uuid4().hex[:8]}"}

    async def run(url: str) -> dict[str, Any]:
        async with AsyncExitStack() as stack:
            clients = {}
            for role, key in keys.items():
                headers = {"x-api-key": key} | session
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120))
                )
                served = Client(streamable_http_client(url, http_client=http), mode=mode)
                clients[role] = await stack.enter_async_context(served)
            return await _every_tool(
                clients.pop("orchestrator"), doc, uuid.uuid4().hex[:8], clients, _seeder(db, account, embedder)
            )

    with _http(data_root) as url:
        _check(anyio.run(run, url), mode)

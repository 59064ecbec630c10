"""A protocol task's whole life over stdio MCP: five ``maxy mcp serve`` processes, one per task
role (TASK_ROLE in each one's environment), driven by the SDK's client against the real Neo4j.

A weak spec keeps the task in spec_draft; the fixed spec goes through spec_review; attempt 1
fails and is retried after the backoff (0 s here: MAXY_TASK_BACKOFF_BASE_S); attempt 2 succeeds
but the spec gate asks for changes, so the task is reworked; attempt 3 plans a side effect and
passes both gates; the approver approves, the side effect is replayed once (the second resume
writes nothing) and the task completes. Every answer validates against its tool's outputSchema;
roles that may not move the task are refused with their role and the rule; the event log
rebuilds what task_get shows; the work plugin's tasks and ``maxy audit tasks`` keep working on
the same account. Over HTTP, a key made with ``--task-role executor`` cannot move a task.
"""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx2
from jsonschema import Draft202012Validator
from maxy.config import load_settings
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import create_api_key
from maxy.taskstore import replay
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.cli_inprocess import maxy
from tests.local_http import serve_app
from tests.mcp.inprocess import stdio_inprocess
from tests.plugins_fixture.helpers import CLI, REPO, child_env, text

ROLES = ("orchestrator", "executor", "spec_reviewer", "quality_reviewer", "approver")
PATH = [  # the phases the task moves through, in order
    "spec_review",
    "execution_ready",
    "executing",
    "retrying",
    "executing",
    "spec_gate",
    "execution_ready",
    "executing",
    "spec_gate",
    "quality_gate",
    "awaiting_approval",
    "ready_to_resume",
    "completed",
]
WEAK_SPEC = {"goal": "Publish the release notes", "acceptance_criteria": ["It works properly"]}
SPEC = {
    "goal": "Publish the 2.4 release notes on the docs site",
    "scope_in": ["release-notes.md for 2.4"],
    "scope_out": ["the changelog of older releases"],
    "inputs": ["the merged pull requests since 2.3"],
    "outputs": ["release-notes.md"],
    "acceptance_criteria": ["release-notes.md lists every merged pull request since 2.3"],
    "risks": ["a pull request merged after the cut is missed"],
}


class Lifecycle:
    """The five role clients, a call helper that checks each answer, and what was called."""

    def __init__(self, clients: dict[str, Client], schemas: dict[str, dict[str, Any]]):
        self.clients = clients
        self.schemas = schemas
        self.calls: list[dict[str, Any]] = []

    async def ok(self, role: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await self.clients[role].call_tool(tool, args)
        assert not result.is_error, f"{role} {tool}: {text(result)}"
        answer = result.structured_content or {}
        errors = sorted(Draft202012Validator(self.schemas[tool]).iter_errors(answer), key=str)
        assert not errors, f"{tool}: {errors[0].message}"
        assert json.loads(text(result)) == answer
        self.calls.append({"role": role, "tool": tool, "arguments": args, "answer": answer})
        return answer

    async def refused(self, role: str, tool: str, args: dict[str, Any]) -> str:
        result = await self.clients[role].call_tool(tool, args)
        assert result.is_error, f"{role} {tool} was not refused"
        self.calls.append({"role": role, "tool": tool, "arguments": args, "refused": text(result)})
        return text(result)

    async def move(self, task: dict[str, Any], to: str, **extra: Any) -> dict[str, Any]:
        """The orchestrator moves the task from where it last was; ``task`` follows it."""
        moved = await self.ok(
            "orchestrator",
            "task_transition",
            {"taskId": task["taskId"], "to": to, "expectedPhase": task["phase"], "expectedVersion": task["version"]}
            | extra,
        )
        assert moved["phase"] == to and moved["version"] == task["version"] + 1
        task.update(phase=moved["phase"], version=moved["version"])
        return moved


async def _run_lifecycle(life: Lifecycle) -> dict[str, Any]:
    ok, refused, move = life.ok, life.refused, life.move

    # a weak spec: stored with its problems, and the task cannot leave spec_draft
    created = await ok("orchestrator", "task_create", {"spec": WEAK_SPEC, "title": "Release notes 2.4"})
    assert (created["phase"], created["version"], created["specComplete"]) == ("spec_draft", 1, False)
    problems = {p["field"] for p in created["specProblems"]}
    assert {"scope_in", "outputs", "risks", "acceptance_criteria[0]"} <= problems
    task = {"taskId": created["taskId"], "phase": "spec_draft", "version": 1}
    tid = task["taskId"]
    weak = await refused(
        "orchestrator",
        "task_transition",
        {"taskId": tid, "to": "spec_review", "expectedPhase": "spec_draft", "expectedVersion": 1},
    )
    assert "spec_draft -> spec_review needs a complete spec" in weak and "task_update_spec" in weak

    fixed = await ok("orchestrator", "task_update_spec", {"taskId": tid, "spec": SPEC, "expectedVersion": 1})
    assert fixed["specComplete"] and fixed["specProblems"] == [] and fixed["version"] == 2
    task["version"] = 2
    await move(task, "spec_review")
    await ok("spec_reviewer", "task_append_review", {"taskId": tid, "gate": "spec_review", "verdict": "approved"})
    await move(task, "execution_ready")

    # attempt 1 fails; the policy retries it on the same runtime
    first = await move(task, "executing", runtime="local")
    a1 = first["attemptId"]
    await ok("executor", "task_heartbeat", {"taskId": tid, "attemptId": a1, "checkpoint": {"pullRequests": 12}})
    failed = await ok(
        "executor",
        "task_finish_attempt",
        {"taskId": tid, "attemptId": a1, "outcome": "failed", "reason": "the docs build timed out"},
    )
    assert failed["decision"] == {"action": "retry", "backoffS": 0.0, "escalate": False}
    assert failed["phase"] == "executing" and failed["failedSinceReset"] == 1  # the executor never moves the task
    executor_moves = await refused(
        "executor",
        "task_transition",
        {"taskId": tid, "to": "retrying", "expectedPhase": "executing", "expectedVersion": task["version"]},
    )
    assert executor_moves.startswith("taskRole: executor may not task_transition: only orchestrator, operator may")
    retried = await move(task, "retrying", reason="the docs build timed out")
    assert retried["decision"]["action"] == "retry" and retried["backoffUntil"]

    # attempt 2 succeeds with an artifact, but the spec gate asks for changes: rework
    second = await move(task, "executing")
    a2 = second["attemptId"]
    assert a2 != a1 and second["runtime"] == "local"
    draft = await ok(
        "executor",
        "task_add_artifact",
        {"taskId": tid, "attemptId": a2, "name": "release notes draft", "ref": "docs/release-notes.md"},
    )
    await ok("executor", "task_set_external_ref", {"taskId": tid, "attemptId": a2, "system": "acp", "ref": "run-42"})
    await ok("executor", "task_finish_attempt", {"taskId": tid, "attemptId": a2, "outcome": "succeeded"})
    await move(task, "spec_gate")
    await ok(
        "spec_reviewer",
        "task_append_review",
        {
            "taskId": tid,
            "gate": "spec_gate",
            "verdict": "changes_requested",
            "findings": [
                {"text": "Two merged pull requests are missing", "ref": draft["artifactId"], "severity": "high"}
            ],
            "refs": [draft["artifactId"]],
        },
    )
    reviewer_moves = await refused(
        "spec_reviewer",
        "task_transition",
        {"taskId": tid, "to": "execution_ready", "expectedPhase": "spec_gate", "expectedVersion": task["version"]},
    )
    assert reviewer_moves.startswith("taskRole: spec_reviewer may not task_transition: only orchestrator, operator may")
    assert "only the orchestrator moves a task between phases" in reviewer_moves
    wrong_gate = await refused(
        "spec_reviewer", "task_append_review", {"taskId": tid, "gate": "quality_gate", "verdict": "approved"}
    )
    assert wrong_gate.startswith("taskRole: spec_reviewer may not task_append_review with gate quality_gate")
    await move(task, "execution_ready", reason="the spec gate found missing pull requests")

    # attempt 3 plans the publication as a side effect and passes both gates
    third = await move(task, "executing")
    a3 = third["attemptId"]
    final = await ok(
        "executor",
        "task_add_artifact",
        {
            "taskId": tid,
            "attemptId": a3,
            "name": "release notes",
            "ref": "docs/release-notes.md",
            "digest": "sha256:ab12",
        },
    )
    publish = {"site": "docs", "path": "release-notes/2.4"}
    planned = await ok("executor", "task_plan_side_effect", {"taskId": tid, "step": "publish", "payload": publish})
    again = await ok("executor", "task_plan_side_effect", {"taskId": tid, "step": "publish", "payload": publish})
    assert planned["planned"] and not again["planned"] and again["idempotencyKey"] == planned["idempotencyKey"]
    await ok("executor", "task_finish_attempt", {"taskId": tid, "attemptId": a3, "outcome": "succeeded"})
    await move(task, "spec_gate")
    approved = {"taskId": tid, "verdict": "approved", "refs": [final["artifactId"]]}
    await ok("spec_reviewer", "task_append_review", approved | {"gate": "spec_gate"})
    await move(task, "quality_gate")
    await ok("quality_reviewer", "task_append_review", approved | {"gate": "quality_gate"})
    early = await refused(
        "orchestrator",
        "task_transition",
        {"taskId": tid, "to": "completed", "expectedPhase": "quality_gate", "expectedVersion": task["version"]},
    )
    assert "needs every planned side effect done; still planned: publish" in early
    waiting = await move(task, "awaiting_approval", approvalContext={"channel": "#docs"})
    approval = waiting["approvalId"]

    # the approver approves; the side effect is replayed once, then completed
    approver_moves = await refused(
        "approver",
        "task_transition",
        {
            "taskId": tid,
            "to": "ready_to_resume",
            "expectedPhase": "awaiting_approval",
            "expectedVersion": task["version"],
        },
    )
    assert approver_moves.startswith("taskRole: approver may not task_transition")
    decided = await ok(
        "approver",
        "task_decide_approval",
        {"taskId": tid, "approvalId": approval, "decision": "approved", "note": "ship it"},
    )
    assert decided["state"] == "approved"
    await move(task, "ready_to_resume")
    key = planned["idempotencyKey"]
    result = {"url": "https://docs.example.com/release-notes/2.4"}
    first_resume = await ok("approver", "task_resume", {"taskId": tid, "idempotencyKey": key, "result": result})
    second_resume = await ok("approver", "task_resume", {"taskId": tid, "idempotencyKey": key, "result": result})
    assert first_resume["replayed"] is True and second_resume["replayed"] is False
    assert {k: v for k, v in second_resume.items() if k != "replayed"} == {
        k: v for k, v in first_resume.items() if k != "replayed"
    }
    await move(task, "completed")

    # what the task produced; the work plugin's tasks on the same account
    note = await ok("orchestrator", "memory-write", {"labels": ["Note"], "properties": {"name": "Release notes 2.4"}})
    linked = await ok("orchestrator", "task_link_produced", {"taskId": tid, "nodeIds": [note["nodeId"]]})
    relinked = await ok("orchestrator", "task_link_produced", {"taskId": tid, "nodeIds": [note["nodeId"]]})
    assert linked["linked"] == [note["nodeId"]] and relinked["linked"] == [] and relinked["producedCount"] == 1
    work = await ok("orchestrator", "work-create", {"kind": "release-announcement", "title": "Announce 2.4"})
    await ok("orchestrator", "work-update", {"taskId": work["taskId"], "step": "drafted"})
    await ok("orchestrator", "work-complete", {"taskId": work["taskId"], "producedNodeIds": [note["nodeId"]]})

    listed = await ok("executor", "task_list", {"phase": "completed"})
    shown = await ok("quality_reviewer", "task_get", {"taskId": tid})
    events = await ok("approver", "task_events", {"taskId": tid})
    return {"taskId": tid, "attempts": [a1, a2, a3], "listed": listed, "task": shown, "events": events["events"]}


async def _drive(envs: dict[str, dict[str, str]], logs: Path) -> tuple[dict[str, Any], Lifecycle]:
    async with AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        schemas: dict[str, dict[str, Any]] = {}
        for role in ROLES:
            plugins = ["taskstore", "work", "memory"] if role == "orchestrator" else ["taskstore"]
            params = StdioServerParameters(
                command=CLI[0], args=[*CLI[1:], "mcp", "serve", *plugins], env=envs[role], cwd=str(REPO)
            )
            errlog = stack.enter_context((logs / f"{role}.log").open("w"))
            client = await stack.enter_async_context(Client(stdio_inprocess(params, errlog=errlog)))
            clients[role] = client
            schemas |= {t.name: t.output_schema for t in (await client.list_tools()).tools}
        life = Lifecycle(clients, schemas)
        return await _run_lifecycle(life), life


def _projection(task: dict[str, Any]) -> dict[str, Any]:
    """What task_get shows that the event log must rebuild."""
    return {
        "phase": task["phase"],
        "version": task["version"],
        "status": task["status"],
        "spec": task["spec"],
        "failedAttempts": task["failedAttempts"],
        "attempts": [(a["attemptId"], a["number"], a["runtime"], a["status"]) for a in task["attempts"]],
        "artifacts": [(a["artifactId"], a["good"]) for a in task["artifacts"]],
        "reviews": [(r["gate"], r["role"], r["verdict"]) for r in task["reviews"]],
        "approvals": [(a["approvalId"], a["state"], a["decidedBy"]) for a in task["approvals"]],
        "sideEffects": [(e["step"], e["idempotencyKey"], e["state"], e["result"]) for e in task["sideEffects"]],
        "produced": task["produced"],
    }


def _replayed(events: list[dict[str, Any]]) -> dict[str, Any]:
    s = replay(events)
    return {
        "phase": s.phase,
        "version": s.version,
        "status": s.status,
        "spec": s.spec,
        "failedAttempts": s.failed_attempts,
        "attempts": [(a.attempt_id, a.number, a.runtime, a.status) for a in s.attempts.values()],
        "artifacts": [(a.artifact_id, a.good) for a in s.artifacts.values()],
        "reviews": [(r.gate, r.role, r.verdict) for r in s.reviews.values()],
        "approvals": [(a.approval_id, a.state, a.decided_by) for a in s.approvals.values()],
        "sideEffects": [(e.step, e.idempotency_key, e.state, e.result) for e in s.side_effects.values()],
        "produced": s.produced,
    }


def _cli(data_root: Path, account_id: str, *args: str) -> Any:
    proc = maxy(["--quiet", *args, "--json"], child_env(data_root, ACCOUNT_ID=account_id))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout)


def test_a_protocol_task_from_spec_to_completion_over_stdio(account, data_root: Path, tmp_path: Path) -> None:
    base = child_env(data_root, ACCOUNT_ID=account.account_id, MAXY_TASK_BACKOFF_BASE_S="0")
    envs = {role: dict(base, TASK_ROLE=role) for role in ROLES}
    out, life = anyio.run(_drive, envs, tmp_path)
    tid, task, events = out["taskId"], out["task"], out["events"]

    assert task["phase"] == "completed" and task["status"] == "completed" and task["nextPhases"] == []
    assert [(a["number"], a["status"]) for a in task["attempts"]] == [(1, "failed"), (2, "succeeded"), (3, "succeeded")]
    assert [a["attemptId"] for a in task["attempts"]] == out["attempts"]
    assert task["attempts"][1]["externalRefs"] == {"acp": "run-42"}
    assert task["attempts"][0]["checkpoint"] == {"pullRequests": 12}
    assert task["attempts"][0]["failureReason"] == "the docs build timed out"
    assert [(r["gate"], r["verdict"]) for r in task["reviews"]] == [
        ("spec_review", "approved"),
        ("spec_gate", "changes_requested"),
        ("spec_gate", "approved"),
        ("quality_gate", "approved"),
    ]
    assert task["specReworks"] == 1 and task["failedAttempts"] == 1
    [approval] = task["approvals"]
    assert approval["state"] == "approved" and approval["context"]["details"] == {"channel": "#docs"}
    assert [(e["step"], e["state"]) for e in task["sideEffects"]] == [("publish", "done")]
    assert [t["taskId"] for t in out["listed"]["tasks"]] == [tid]

    # the event log: every change once, in order, by the role that made it, and it rebuilds the task
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert all(e["taskId"] == tid for e in events)
    moves = [(e["toPhase"], e["actorRole"]) for e in events if e["type"] == "transition"]
    assert moves == [(phase, "orchestrator") for phase in PATH]
    assert {e["actorRole"] for e in events if e["type"] == "review_appended"} == {"spec_reviewer", "quality_reviewer"}
    assert [e["type"] for e in events if e["actorRole"] == "approver"] == ["approval_decided", "side_effect_done"]
    assert sum(e["type"] == "side_effect_done" for e in events) == 1  # the second resume wrote nothing
    assert _replayed(events) == _projection(task)
    assert events[-1]["version"] == task["version"] and len(events) == task["seq"]

    # every tool was called over stdio and answered its schema; refusals wrote nothing
    called = {c["tool"] for c in life.calls if "answer" in c}
    assert {t for t in life.schemas if t.startswith("task_")} <= called
    for role in ROLES:
        log = (tmp_path / f"{role}.log").read_text()
        assert "Traceback" not in log and f"taskRole={role}" in log
    assert "[task-store] transition refused" in (tmp_path / "executor.log").read_text()

    # the operator's commands and the provenance audit read the same account
    protocol = _cli(data_root, account.account_id, "audit", "tasks", "--kind", "protocol")
    assert [(t["taskId"], t["status"]) for t in protocol] == [(tid, "completed")]
    assert [e["nodeId"] for e in protocol[0]["produced"]] == task["produced"]
    announcement = _cli(data_root, account.account_id, "audit", "tasks", "--kind", "release-announcement")
    assert [t["status"] for t in announcement] == ["completed"]
    assert _cli(data_root, account.account_id, "tasks", "events", tid) == events
    assert _cli(data_root, account.account_id, "tasks", "show", tid)["phase"] == "completed"


async def _http_calls(url: str, orchestrator_key: str, executor_key: str, plain_key: str) -> dict[str, Any]:
    async def session(key: str) -> Any:
        http = httpx2.AsyncClient(headers={"x-api-key": key}, timeout=httpx2.Timeout(30, read=60))
        return http, Client(streamable_http_client(url, http_client=http))

    out: dict[str, Any] = {}
    http, client = await session(orchestrator_key)
    async with http, client:
        created = await client.call_tool("task_create", {"spec": SPEC})
        out["created"] = created.structured_content
    tid = out["created"]["taskId"]
    http, client = await session(executor_key)
    async with http, client:
        move = {"taskId": tid, "to": "spec_review", "expectedPhase": "spec_draft", "expectedVersion": 1}
        out["executor_move"] = await client.call_tool("task_transition", move)
        out["executor_widen"] = await client.call_tool("task_transition", move | {"taskRole": "orchestrator"})
        out["executor_get"] = await client.call_tool("task_get", {"taskId": tid})
    http, client = await session(plain_key)
    async with http, client:
        out["plain_create"] = await client.call_tool("task_create", {"spec": SPEC})
        out["plain_list"] = await client.call_tool("task_list", {})
    return out


def test_an_executor_key_cannot_move_a_task_over_http(account, data_root: Path) -> None:
    keys = {
        role: create_api_key(data_root, account.account_id, role="admin", task_role=role)[0]
        for role in ("orchestrator", "executor")
    }
    plain, _ = create_api_key(data_root, account.account_id, role="admin")
    app = create_app(discover_plugins(["taskstore"]), load_settings(DATA_ROOT=data_root, TASK_ROLE="orchestrator"))
    with serve_app(app) as base:
        out = anyio.run(_http_calls, base + "/mcp", keys["orchestrator"], keys["executor"], plain)

    assert out["created"]["phase"] == "spec_draft"
    assert out["executor_move"].is_error
    assert text(out["executor_move"]).startswith("taskRole: executor may not task_transition: only orchestrator")
    assert out["executor_widen"].is_error and "TASK_ROLE is pinned for this server" in text(out["executor_widen"])
    seen = out["executor_get"].structured_content
    assert (seen["phase"], seen["version"]) == ("spec_draft", 1)  # the refusals wrote nothing
    # a key without a task role reads, and the server's own TASK_ROLE gives it none
    assert out["plain_create"].is_error and "no task role" in text(out["plain_create"])
    assert [t["taskId"] for t in out["plain_list"].structured_content["tasks"]] == [out["created"]["taskId"]]

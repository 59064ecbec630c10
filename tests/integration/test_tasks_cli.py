"""``maxy tasks list|show|events|transition``: the operator's commands, run as a user runs them
against the real Neo4j, on tasks the store made in-process: the operator role moves a task only
from where it still is, every refusal is one line naming the flag, a task outside the
environment's pinned view reads exactly like one that does not exist, and an open circuit shows
why and the way out."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

from maxy.config import TASK_ROLE_VALUES
from maxy.graph.guards import Caller
from maxy.taskstore import TASK_ROLES, RetryPolicy, TaskStore

from tests.cli_inprocess import maxy
from tests.plugins_fixture.helpers import child_env

SPEC = {
    "goal": "Rotate the signing key",
    "scope_in": ["the release signing key"],
    "scope_out": [],
    "inputs": ["the current key's fingerprint"],
    "outputs": ["a new key"],
    "acceptance_criteria": ["the release job signs with the new key and refuses the old one"],
    "risks": ["a build signed in between fails to verify"],
}


def _cli(data_root: Path, account_id: str, *args: str, **pins: str) -> subprocess.CompletedProcess[str]:
    return maxy(["--quiet", "tasks", *args], child_env(data_root, ACCOUNT_ID=account_id, **pins))


def _error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr and len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert proc.returncode == 2, proc.stderr
    return lines[0]


def test_the_pinnable_task_roles_are_the_stores() -> None:
    assert TASK_ROLE_VALUES == TASK_ROLES


def test_operator_lists_shows_and_moves_a_task(db, account, data_root: Path) -> None:
    store = TaskStore(db, Caller(account.account_id), account, "orchestrator", actor="test")
    tid = store.create(SPEC, title="Rotate key")["taskId"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return _cli(data_root, account.account_id, *args)

    def move(to: str, phase: str, version: int, *more: str) -> subprocess.CompletedProcess[str]:
        return run("transition", tid, "--to", to, "--expected-phase", phase, "--expected-version", str(version), *more)

    listed = run("list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [(t["taskId"], t["phase"], t["version"]) for t in json.loads(listed.stdout)] == [(tid, "spec_draft", 1)]
    assert "(no protocol tasks in spec_review)" in run("list", "--phase", "spec_review").stdout
    assert f"{tid}  spec_draft" in run("list").stdout

    moved = move("spec_review", "spec_draft", 1, "--reason", "ready for review", "--json")
    assert moved.returncode == 0, moved.stderr
    assert json.loads(moved.stdout) == {"taskId": tid, "phase": "spec_review", "version": 2, "account": account.ref()}

    # the same move again: the task is no longer where the operator read it
    stale = move("spec_review", "spec_draft", 1)
    assert "--expected-version: the task is in spec_review at version 2, not spec_draft at version 1" in _error(stale)
    # a move the table has not, one whose rule fails, a phase that does not exist: named, nothing written
    assert "--to: spec_review -> completed is not in the phase table" in _error(move("completed", "spec_review", 2))
    assert "needs an approved spec_review review" in _error(move("execution_ready", "spec_review", 2))
    assert "--to: 'done' is not a phase" in _error(move("done", "spec_review", 2))

    events = json.loads(run("events", tid, "--json").stdout)
    assert [(e["seq"], e["type"], e["actorRole"], e["actor"]) for e in events] == [
        (1, "created", "orchestrator", "test"),
        (2, "transition", "operator", "cli"),
    ]
    assert events[1]["data"] == {"reason": "ready for review"}
    text_events = run("events", tid).stdout.splitlines()
    assert len(text_events) == 2 and "spec_draft -> spec_review" in text_events[1] and "operator/cli" in text_events[1]

    shown = run("show", tid)
    assert shown.returncode == 0, shown.stderr
    assert "phase spec_review (version 2)" in shown.stdout and "next: spec_draft, execution_ready" in shown.stdout
    assert json.loads(run("show", tid, "--json").stdout)["version"] == 2


def test_a_task_outside_the_pinned_view_reads_as_absent(db, account, data_root: Path) -> None:
    store = TaskStore(db, Caller(account.account_id), account, "orchestrator", actor="test")
    tid = store.create(SPEC)["taskId"]  # the whole account's view: the admin scope
    absent = str(uuid.uuid4())
    pins = {"ALLOWED_SCOPES": "public", "AGENT_SLUG": "bot"}

    hidden = _error(_cli(data_root, account.account_id, "show", tid, **pins))
    missing = _error(_cli(data_root, account.account_id, "show", absent, **pins))
    assert hidden == missing.replace(absent, tid) and f"TASK_ID: no task '{tid}'" in hidden
    assert hidden.endswith("maxy tasks list shows the tasks you can see")  # the command, not the tool
    move = ["transition", tid, "--to", "spec_review", "--expected-phase", "spec_draft", "--expected-version", "1"]
    moved = _cli(data_root, account.account_id, *move, **pins)
    assert f"no task '{tid}'" in _error(moved)
    assert json.loads(_cli(data_root, account.account_id, "list", "--json", **pins).stdout) == []
    assert store.get(tid)["version"] == 1  # nothing was written


def test_show_explains_an_open_circuit(db, account, data_root: Path) -> None:
    caller, policy = Caller(account.account_id), RetryPolicy(base_s=0)
    orchestrator = TaskStore(db, caller, account, "orchestrator", actor="test", policy=policy)
    executor = TaskStore(db, caller, account, "executor", actor="test", policy=policy)
    reviewer = TaskStore(db, caller, account, "spec_reviewer", actor="test", policy=policy)
    tid = orchestrator.create(SPEC)["taskId"]
    state = {"phase": "spec_draft", "version": 1}

    def move(to: str) -> dict:
        moved = orchestrator.transition(
            tid, to, expected_phase=state["phase"], expected_version=state["version"], reason=None
        )
        state.update(phase=moved["phase"], version=moved["version"])
        return moved

    move("spec_review")
    reviewer.append_review(tid, "spec_review", "approved", [], [])
    move("execution_ready")
    for n in range(3):
        attempt = move("executing")["attemptId"]
        if n == 0:
            executor.add_artifact(tid, attempt, "notes", "notes.md")
        executor.finish_attempt(tid, attempt, "failed", f"the signer was unreachable ({n + 1})")
        move("retrying" if n < 2 else "circuit_open")

    shown = _cli(data_root, account.account_id, "show", tid)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "phase circuit_open" in out and "status blocked" in out
    assert "3 failed attempts since the last reset" in out and "the signer was unreachable (3)" in out
    assert "last good artifact: (none)" in out  # the failed attempt's artifact is not a good one
    assert "unblock: -> spec_draft" in out and "unblock: -> failed" in out
    circuit = json.loads(_cli(data_root, account.account_id, "show", tid, "--json").stdout)["circuit"]
    assert [o["to"] for o in circuit["unblockOptions"]] == ["spec_draft", "failed"]

"""The task store against the real Neo4j: every operation, the refusals (naming the role and
the rule), hidden tasks answered like missing ones, compare-and-set, racing transitions,
side effects replayed once, the open circuit's summary, and no other writer forging a record."""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from maxy.errors import MaxyError, ValidationError
from maxy.graph.guards import Caller
from maxy.graph.write import Edge, GraphWriter, NodeSpec
from maxy.memory.forget import forget_node, remove_relation
from maxy.provenance import produced_ids
from maxy.provenance.tasks import list_tasks
from maxy.taskstore import NO_ROLE, STATUS_OF_PHASE, RetryPolicy, TaskConflict, TaskStore, replay

SPEC = {
    "goal": "Publish the monthly report",
    "scope_in": ["the report"],
    "scope_out": ["the dashboards"],
    "inputs": ["the ledger"],
    "outputs": ["report.pdf"],
    "acceptance_criteria": ["report.pdf lists every account with its balance"],
    "risks": ["the ledger closes late"],
}
ROLES = ("orchestrator", "executor", "spec_reviewer", "quality_reviewer", "approver", "operator")


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture()
def clock() -> Clock:
    return Clock()


@pytest.fixture()
def store(db, account, clock):
    """store(role, caller=None, policy=None): a TaskStore of the test's account acting as ``role``."""

    def make(role: str | None, caller: Caller | None = None, policy: RetryPolicy | None = None) -> TaskStore:
        return TaskStore(
            db,
            caller or Caller(account.account_id),
            account,
            role,
            actor=f"{role or 'reader'}-1",
            policy=policy or RetryPolicy(base_s=0),
            clock=clock,
        )

    return make


class Flow:
    """Drives one task through the table as the roles would."""

    def __init__(self, store: Any, spec: dict[str, Any] = SPEC):
        self.o, self.x = store("orchestrator"), store("executor")
        self.sr, self.qr, self.ap = store("spec_reviewer"), store("quality_reviewer"), store("approver")
        self.task_id = self.o.create(spec, title="Monthly report")["taskId"]

    def get(self) -> dict[str, Any]:
        return self.o.get(self.task_id)

    def move(self, to: str, **kw: Any) -> dict[str, Any]:
        t = self.get()
        return self.o.transition(self.task_id, to, expected_phase=t["phase"], expected_version=t["version"], **kw)

    def review(self, gate: str, verdict: str) -> None:
        who = self.qr if gate == "quality_gate" else self.sr
        findings = [] if verdict == "approved" else [{"text": "the totals row is missing", "ref": "report.pdf"}]
        who.append_review(self.task_id, gate, verdict, findings, [])

    def to_executing(self) -> str:
        self.move("spec_review")
        self.review("spec_review", "approved")
        self.move("execution_ready")
        return self.move("executing")["attemptId"]

    def attempt(self, outcome: str, artifact: bool = False) -> str:
        attempt = self.get()["currentAttemptId"]
        if artifact:
            self.x.add_artifact(self.task_id, attempt, "report", f"/out/{attempt}.pdf", digest="sha256:ab")
        self.x.finish_attempt(self.task_id, attempt, outcome, "the ledger was locked" if outcome == "failed" else None)
        return attempt


def stored(store: TaskStore, task_id: str) -> Any:
    return store._load(task_id).state


def node_count(db, account, label: str, task_id: str) -> int:
    rows = db.read(
        f"MATCH (n:{label} {{taskId: $id}}) WHERE n.accountId = $acc RETURN count(n) AS n",
        id=task_id,
        acc=account.account_id,
    )
    return int(rows[0]["n"])


def refusal(call: Any, *args: Any, **kwargs: Any) -> ValidationError:
    with pytest.raises(ValidationError) as err:
        call(*args, **kwargs)
    return err.value


# ---- the whole lifecycle ---------------------------------------------------------------------
def test_a_task_runs_from_spec_to_completion_with_a_rework_and_an_approved_side_effect(db, account, store, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    f = Flow(store)
    created = f.get()
    assert (created["phase"], created["version"], created["status"], created["specComplete"]) == (
        "spec_draft",
        1,
        "running",
        True,
    )
    first = f.to_executing()
    f.x.heartbeat(f.task_id, first, {"page": 3})
    f.x.set_external_ref(f.task_id, first, "acp", "codex-session-17")
    f.attempt("succeeded", artifact=True)
    f.move("spec_gate")
    f.review("spec_gate", "changes_requested")
    f.move("execution_ready")  # the rework loop
    second = f.move("executing")["attemptId"]
    effect = f.x.plan_side_effect(f.task_id, "email-report", {"to": "finance@example.com"})
    assert effect["planned"] is True and len(effect["idempotencyKey"]) == 32
    again = f.x.plan_side_effect(f.task_id, "email-report", {"to": "finance@example.com"})
    assert (again["planned"], again["effectId"]) == (False, effect["effectId"])
    f.attempt("succeeded", artifact=True)
    f.move("spec_gate")
    f.review("spec_gate", "approved")
    f.move("quality_gate")
    f.review("quality_gate", "approved")
    waiting = f.move("awaiting_approval", reason="mail leaves the company", approval_context={"ticket": "FIN-7"})
    assert f.get()["status"] == "waiting"
    decided = f.ap.decide_approval(f.task_id, waiting["approvalId"], "approved", "ok to send")
    assert (decided["state"], decided["decidedBy"]) == ("approved", "approver-1")
    f.move("ready_to_resume")
    done = f.ap.resume(f.task_id, effect["idempotencyKey"], {"messageId": "m-1"})
    assert done["replayed"] is True and done["payload"] == {"to": "finance@example.com"}
    f.move("completed")

    task = f.get()
    assert (task["phase"], task["status"], task["version"]) == ("completed", "completed", 12)
    assert [a["status"] for a in task["attempts"]] == ["succeeded", "succeeded"]
    assert task["attempts"][0]["checkpoint"] == {"page": 3}
    assert task["attempts"][0]["externalRefs"] == {"acp": "codex-session-17"}
    assert (
        task["lastGoodArtifactId"] == task["artifacts"][1]["artifactId"] and task["artifacts"][1]["attemptId"] == second
    )
    assert task["specReworks"] == 1 and task["nextPhases"] == []
    approval = task["approvals"][0]
    assert approval["context"]["sideEffects"][0]["step"] == "email-report"
    assert approval["context"]["details"] == {"ticket": "FIN-7"} and approval["note"] == "ok to send"
    assert [r["verdict"] for r in task["reviews"]] == ["approved", "changes_requested", "approved", "approved"]

    events = f.o.events(f.task_id)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert replay(events) == stored(f.o, f.task_id)
    moves = [(e["fromPhase"], e["toPhase"]) for e in events if e["type"] == "transition"]
    assert ("spec_gate", "execution_ready") in moves and moves[-1] == ("ready_to_resume", "completed")
    assert {e["actorRole"] for e in events if e["type"] == "transition"} == {"orchestrator"}

    # the provenance Task it is: the console's task list shows it with the status the phase gives
    total, rows = list_tasks(db, Caller(account.account_id), status="completed")
    assert total == 1 and rows[0]["taskId"] == f.task_id and rows[0]["title"] == "Monthly report"
    assert f.o.list(phase="completed")[0]["taskId"] == f.task_id and f.o.list(phase="executing") == []
    assert (
        "[task-store] transition taskId=" + f.task_id[:8] + " phase=completed version=12 role=orchestrator"
        in caplog.text
    )
    assert "[task-store] resume taskId=" + f.task_id[:8] in caplog.text


def test_the_task_status_follows_every_phase(db, account, store):
    f = Flow(store)
    f.to_executing()
    for _ in range(3):
        f.attempt("failed")
        phase = "retrying" if f.get()["failedSinceReset"] < 3 else "circuit_open"
        f.move(phase)
        row = db.read("MATCH (t:Task {nodeId: $id}) RETURN t.status AS s, t.phase AS p", id=f.task_id)[0]
        assert row["s"] == STATUS_OF_PHASE[row["p"]]
        if phase == "retrying":
            f.move("executing")
    assert f.get()["status"] == "blocked"


# ---- the spec ----------------------------------------------------------------------------------
def test_an_incomplete_spec_is_stored_with_its_problems_and_keeps_the_task_in_spec_draft(store):
    o = store("orchestrator")
    vague = {**SPEC, "acceptance_criteria": ["It works properly"], "risks": None}
    created = o.create(vague)
    assert created["specComplete"] is False
    assert {p["field"] for p in created["specProblems"]} == {"acceptance_criteria[0]", "risks"}
    task_id = created["taskId"]
    err = refusal(o.transition, task_id, "spec_review", expected_phase="spec_draft", expected_version=1)
    assert err.field == "to" and "needs a complete spec; 2 problem(s) remain" in err.reason
    conflict = refusal(o.update_spec, task_id, SPEC, expected_version=7)
    assert isinstance(conflict, TaskConflict) and "the task is in spec_draft at version 1, not version 7" in str(
        conflict
    )
    fixed = o.update_spec(task_id, SPEC, expected_version=1)
    assert (fixed["version"], fixed["specComplete"], fixed["specProblems"]) == (2, True, [])
    assert o.get(task_id)["spec"]["risks"] == SPEC["risks"]
    o.transition(task_id, "spec_review", expected_phase="spec_draft", expected_version=2)
    assert [e["type"] for e in o.events(task_id)] == ["created", "spec_updated", "transition"]
    bad = refusal(o.update_spec, task_id, {**SPEC, "acceptance": ["x"]}, expected_version=3)
    assert bad.field == "spec.acceptance"


def test_the_spec_is_frozen_once_execution_begins_and_reopened_by_a_reset(store):
    f = Flow(store)
    f.to_executing()
    t = f.get()
    err = refusal(f.o.update_spec, f.task_id, SPEC, expected_version=t["version"])
    assert err.field == "spec" and "only in spec_draft or spec_review (the task is in executing)" in err.reason


# ---- roles -------------------------------------------------------------------------------------
def test_every_write_is_refused_to_the_roles_without_the_right_and_nothing_is_written(db, account, store):
    f = Flow(store)
    attempt = f.to_executing()
    t = f.get()
    calls = {
        "task_create": lambda s: s.create(SPEC),
        "task_update_spec": lambda s: s.update_spec(f.task_id, SPEC, expected_version=t["version"]),
        "task_transition": lambda s: s.transition(
            f.task_id, "spec_gate", expected_phase="executing", expected_version=t["version"]
        ),
        "task_link_produced": lambda s: s.link_produced(f.task_id, [f.task_id]),
        "task_heartbeat": lambda s: s.heartbeat(f.task_id, attempt),
        "task_finish_attempt": lambda s: s.finish_attempt(f.task_id, attempt, "succeeded"),
        "task_add_artifact": lambda s: s.add_artifact(f.task_id, attempt, "r", "/r"),
        "task_plan_side_effect": lambda s: s.plan_side_effect(f.task_id, "deploy", {}),
        "task_set_external_ref": lambda s: s.set_external_ref(f.task_id, attempt, "acp", "s-1"),
        "task_append_review with gate spec_gate": lambda s: s.append_review(f.task_id, "spec_gate", "approved", [], []),
        "task_append_review with gate quality_gate": lambda s: s.append_review(
            f.task_id, "quality_gate", "approved", [], []
        ),
        "task_decide_approval": lambda s: s.decide_approval(f.task_id, "a-1", "approved"),
        "task_resume": lambda s: s.resume(f.task_id, "k-1"),
    }
    allowed = {
        "task_create": {"orchestrator", "operator"},
        "task_update_spec": {"orchestrator", "operator"},
        "task_transition": {"orchestrator", "operator"},
        "task_link_produced": {"orchestrator", "operator"},
        "task_append_review with gate spec_gate": {"spec_reviewer"},
        "task_append_review with gate quality_gate": {"quality_reviewer"},
        "task_decide_approval": {"approver", "operator"},
        "task_resume": {"approver", "orchestrator", "operator"},
    }
    before = len(f.o.events(f.task_id))
    for what, call in calls.items():
        for role in ROLES:
            if role in allowed.get(what, {"executor"}):
                continue
            err = refusal(call, store(role))
            assert err.field == "taskRole"
            assert err.reason.startswith(f"{role} may not {what}: only "), (role, what, err.reason)
            assert len(err.reason.split(" may; ", 1)[1]) > 10  # the rule follows
        err = refusal(call, store(None))
        assert (err.field, err.reason) == ("taskRole", NO_ROLE)
    assert len(f.o.events(f.task_id)) == before
    assert store(None).get(f.task_id)["phase"] == "executing"  # no role still reads


def test_the_operator_moves_and_approves_and_is_recorded_as_operator(store):
    f = Flow(store)
    op = store("operator")
    t = op.create(SPEC)
    op.transition(t["taskId"], "spec_review", expected_phase="spec_draft", expected_version=1)
    assert op.events(t["taskId"])[-1]["actorRole"] == "operator"
    assert refusal(op.heartbeat, f.task_id, "a-1").field == "taskRole"


# ---- hidden tasks ------------------------------------------------------------------------------
def test_a_task_outside_the_view_is_answered_exactly_like_a_missing_one(db, account, make_account, store, clock):
    other = make_account("other")
    foreign = TaskStore(db, Caller(other.account_id), other, "orchestrator", clock=clock).create(SPEC)["taskId"]
    admin_task = store("orchestrator").create(SPEC)["taskId"]  # scope admin: hidden from a shared-only view
    plain = GraphWriter(db, account, None).write(NodeSpec(["Task"], {"kind": "x", "title": "not a protocol task"}))
    gone = store("orchestrator").create(SPEC)["taskId"]
    db.write("MATCH (t:Task {nodeId: $id}) SET t.deletedAt = '2026-01-01'", id=gone)
    shared = Caller(account.account_id, allowed_scopes=("shared",))
    hidden = {
        "another account": (store("orchestrator"), foreign),
        "another scope": (store("orchestrator", shared), admin_task),
        "not a protocol task": (store("orchestrator"), plain.node_id),
        "deleted": (store("orchestrator"), gone),
    }
    missing = "0b6c9a8e-0000-4000-8000-000000000000"

    def answers(s: TaskStore, task_id: str) -> list[str]:
        exec_ = TaskStore(s.db, s.caller, account, "executor", clock=clock)
        calls = [
            lambda: s.get(task_id),
            lambda: s.events(task_id),
            lambda: s.transition(task_id, "spec_review", expected_phase="spec_draft", expected_version=1),
            lambda: s.update_spec(task_id, SPEC, expected_version=1),
            lambda: exec_.heartbeat(task_id, "a-1"),
        ]
        out = []
        for call in calls:
            with pytest.raises(ValidationError) as err:
                call()
            out.append(str(err.value).replace(task_id, "<id>"))
        return out

    expected = answers(store("orchestrator"), missing)
    assert expected[0] == "taskId: no task '<id>'; task_list shows the tasks you can see"
    for why, (s, task_id) in hidden.items():
        assert answers(s, task_id) == expected, why
    assert store("orchestrator", shared).list() == []


def test_a_pinned_view_keeps_its_task_and_records_in_its_view(db, account, store):
    shared = Caller(account.account_id, allowed_scopes=("shared",))
    f = Flow(lambda role: store(role, shared))
    attempt = f.to_executing()
    wider = Caller(account.account_id, allowed_scopes=("admin", "shared"))
    store("executor", wider).heartbeat(f.task_id, attempt, {"by": "a wider view"})  # its records stay shared
    scopes = db.read(
        "MATCH (t:Task {nodeId: $id})-[]->(c) RETURN collect(DISTINCT c.scope) AS s, t.scope AS t", id=f.task_id
    )[0]
    assert scopes["t"] == "shared" and scopes["s"] == ["shared"]
    assert store("orchestrator").get(f.task_id)["phase"] == "executing"  # the unpinned admin sees it too
    public = Caller(account.account_id, allowed_scopes=("public",))
    assert refusal(store("orchestrator", public).get, f.task_id).field == "taskId"


# ---- compare-and-set ------------------------------------------------------------------------------
def test_a_stale_expectation_is_a_conflict_naming_the_current_phase_and_writes_nothing(store):
    f = Flow(store)
    f.move("spec_review")
    before = f.o.events(f.task_id)
    err = refusal(f.o.transition, f.task_id, "spec_draft", expected_phase="spec_draft", expected_version=1)
    assert isinstance(err, TaskConflict)
    assert str(err) == (
        "expectedVersion: the task is in spec_review at version 2, not spec_draft at version 1; nothing was written: "
        "read it again (task_get) and decide from there"
    )
    assert f.o.events(f.task_id) == before


@pytest.mark.parametrize("threads", [2, 6])
def test_threads_racing_one_transition_exactly_one_wins(db, account, store, threads):
    f = Flow(store)
    f.move("spec_review")
    f.review("spec_review", "approved")
    f.move("execution_ready")
    t = f.get()
    gate = threading.Barrier(threads)
    outcomes: list[Any] = []

    def race() -> None:
        s = store("orchestrator")
        gate.wait()
        try:
            outcomes.append(
                s.transition(f.task_id, "executing", expected_phase=t["phase"], expected_version=t["version"])
            )
        except MaxyError as err:
            outcomes.append(err)

    workers = [threading.Thread(target=race) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    wins = [o for o in outcomes if isinstance(o, dict)]
    assert len(wins) == 1 and all(isinstance(o, TaskConflict) for o in outcomes if not isinstance(o, dict))
    assert node_count(db, account, "TaskAttempt", f.task_id) == 1  # one attempt, the winner's
    after = f.get()
    assert (after["version"], after["currentAttemptId"]) == (t["version"] + 1, wins[0]["attemptId"])
    assert replay(f.o.events(f.task_id)) == stored(f.o, f.task_id)


def test_changes_racing_on_one_task_all_land_in_order(db, account, store):
    f = Flow(store)
    attempt = f.to_executing()
    gate = threading.Barrier(6)

    def beat(i: int) -> None:
        gate.wait()
        f.x.heartbeat(f.task_id, attempt, {"beat": i})

    workers = [threading.Thread(target=beat, args=(i,)) for i in range(6)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    events = f.o.events(f.task_id)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert sum(e["type"] == "heartbeat" for e in events) == 6
    assert replay(events) == stored(f.o, f.task_id)


# ---- attempts, retries and the circuit ----------------------------------------------------------
def test_the_open_circuit_shows_why_the_attempts_the_last_good_artifact_and_the_way_out(store):
    f = Flow(store)
    f.to_executing()
    good = f.attempt("succeeded", artifact=True)
    f.move("spec_gate")
    f.review("spec_gate", "changes_requested")
    f.move("execution_ready")
    f.move("executing")
    for n in range(3):
        f.attempt("failed", artifact=True)
        if n < 2:
            f.move("retrying")
            f.move("executing")
    err = refusal(f.move, "retrying")
    assert "3 failed attempts since the last reset; the policy allows no more than 3: move to circuit_open" in str(err)
    f.move("circuit_open")
    task = f.get()
    circuit = task["circuit"]
    assert task["status"] == "blocked" and circuit["reason"] == "attempts"
    assert circuit["failureSummary"].startswith(
        "3 failed attempts since the last reset (the policy allows 3): attempt 2"
    )
    assert "the ledger was locked" in circuit["failureSummary"]
    assert [a["status"] for a in circuit["attempts"]] == ["succeeded", "failed", "failed", "failed"]
    assert circuit["lastGoodArtifact"]["attemptId"] == good and circuit["lastGoodArtifact"]["good"] is True
    assert [o["to"] for o in circuit["unblockOptions"]] == ["spec_draft", "failed"]

    f.move("spec_draft")  # the reset: counters kept, the circuit closed
    reset = f.get()
    assert (reset["failedAttempts"], reset["failedSinceReset"], reset["attemptCount"]) == (3, 0, 4)
    assert "circuit" not in reset and reset["circuitOpenedAt"] is None
    f.o.update_spec(
        f.task_id, {**SPEC, "risks": ["the ledger is locked at month end"]}, expected_version=reset["version"]
    )
    assert f.to_executing()
    assert replay(f.o.events(f.task_id)) == stored(f.o, f.task_id)


def test_the_backoff_holds_the_next_attempt_and_a_silent_attempt_is_superseded(store, clock):
    policy = RetryPolicy(base_s=30, stale_after_s=120)
    f = Flow(lambda role: store(role, policy=policy))
    f.to_executing()
    f.attempt("failed")
    retry = f.move("retrying")
    assert retry["decision"] == {"action": "retry", "backoffS": 30.0, "escalate": False}
    assert "backs off until" in refusal(f.move, "executing").reason
    clock.advance(30)
    second = f.move("executing")["attemptId"]
    clock.advance(119)
    assert "still running (last heard of 119 s ago)" in refusal(f.move, "retrying").reason
    clock.advance(1)
    f.move("retrying")
    task = f.get()
    superseded = next(a for a in task["attempts"] if a["attemptId"] == second)
    assert (superseded["status"], superseded["failureReason"]) == ("superseded", "no heartbeat for 120 s")
    assert task["failedAttempts"] == 2
    late = refusal(f.x.heartbeat, f.task_id, second)
    assert late.field == "attemptId" and "attempt 2 is superseded" in late.reason


def test_executor_records_belong_to_the_running_attempt(store):
    f = Flow(store)
    attempt = f.to_executing()
    assert "no attempt 'nope' of this task (the current one is" in refusal(f.x.heartbeat, f.task_id, "nope").reason
    f.x.finish_attempt(f.task_id, attempt, "failed", "disk full")
    for call in (
        lambda: f.x.heartbeat(f.task_id, attempt),
        lambda: f.x.add_artifact(f.task_id, attempt, "late", "/late"),
        lambda: f.x.finish_attempt(f.task_id, attempt, "succeeded"),
        lambda: f.x.plan_side_effect(f.task_id, "deploy", {}),
    ):
        err = refusal(call)
        assert err.field == "attemptId" and "attempt 1 is failed" in err.reason
    assert refusal(f.x.finish_attempt, f.task_id, attempt, "failed").field == "reason"  # a failure says why
    f.x.set_external_ref(f.task_id, attempt, "acp", "s-9")  # a reference may be recorded afterwards
    assert f.get()["attempts"][0]["externalRefs"] == {"acp": "s-9"}


def test_reviews_are_recorded_only_at_their_gate_and_a_rejection_says_why(store):
    f = Flow(store)
    err = refusal(f.sr.append_review, f.task_id, "spec_review", "approved", [], [])
    assert err.field == "gate" and "(it is in spec_draft)" in err.reason
    f.move("spec_review")
    assert refusal(f.sr.append_review, f.task_id, "spec_review", "blocked", [], []).field == "findings"
    assert refusal(f.sr.append_review, f.task_id, "spec_review", "fine", [], []).field == "verdict"
    bad = refusal(f.sr.append_review, f.task_id, "spec_review", "blocked", [{"text": "x", "severity": "huge"}], [])
    assert bad.field == "findings[0].severity"


# ---- approvals and side effects ------------------------------------------------------------------
def _to_approval(f: Flow) -> tuple[dict[str, Any], dict[str, Any]]:
    f.to_executing()
    effect = f.x.plan_side_effect(f.task_id, "deploy", {"env": "prod"})
    f.attempt("succeeded")
    f.move("spec_gate")
    f.review("spec_gate", "approved")
    f.move("quality_gate")
    f.review("quality_gate", "approved")
    return effect, f.move("awaiting_approval")


def test_resuming_twice_replays_the_side_effect_once(db, account, store):
    f = Flow(store)
    effect, waiting = _to_approval(f)
    assert (
        "side effects are replayed in ready_to_resume"
        in refusal(f.ap.resume, f.task_id, effect["idempotencyKey"]).reason
    )
    f.ap.decide_approval(f.task_id, waiting["approvalId"], "approved")
    assert f.ap.decide_approval(f.task_id, waiting["approvalId"], "approved")["state"] == "approved"  # no-op
    assert "already approved" in refusal(f.ap.decide_approval, f.task_id, waiting["approvalId"], "rejected").reason
    f.move("ready_to_resume")
    events = len(f.o.events(f.task_id))
    first = f.ap.resume(f.task_id, effect["idempotencyKey"], {"deployId": "d-1"})
    second = f.o.resume(f.task_id, effect["idempotencyKey"], {"deployId": "d-2"})  # the orchestrator may resume too
    assert first["replayed"] is True and second["replayed"] is False
    assert {k: v for k, v in second.items() if k != "replayed"} == {k: v for k, v in first.items() if k != "replayed"}
    assert second["result"] == {"deployId": "d-1"}
    assert len(f.o.events(f.task_id)) == events + 1
    assert refusal(f.ap.resume, f.task_id, "not-a-key").field == "idempotencyKey"
    f.move("completed")


def test_a_rejected_approval_fails_the_task(store):
    f = Flow(store)
    effect, waiting = _to_approval(f)
    assert "needs the approval rejected (it is requested)" in refusal(f.move, "failed").reason
    f.ap.decide_approval(f.task_id, waiting["approvalId"], "rejected", "not this week")
    assert "needs the approval approved (it is rejected)" in refusal(f.move, "ready_to_resume").reason
    f.move("failed")
    assert f.get()["status"] == "failed" and f.get()["sideEffects"][0]["state"] == "planned"
    assert "the task is in failed" in refusal(f.ap.resume, f.task_id, effect["idempotencyKey"]).reason


# ---- produced nodes --------------------------------------------------------------------------------
def test_linking_produced_nodes_adds_each_once_and_refuses_unreadable_ones(db, account, make_account, store):
    f = Flow(store)
    w = GraphWriter(db, account, None)
    a, b = (w.write(NodeSpec(["Note"], {"title": f"note {i}"})).node_id for i in range(2))
    other = make_account("other")
    foreign = GraphWriter(db, other, None).write(NodeSpec(["Note"], {"title": "theirs"})).node_id
    assert f.o.link_produced(f.task_id, [a, b, a]) == {"taskId": f.task_id, "linked": [a, b], "producedCount": 2}
    assert f.o.link_produced(f.task_id, [b])["linked"] == []
    with pytest.raises(MaxyError) as hidden:
        f.o.link_produced(f.task_id, [foreign])
    with pytest.raises(MaxyError) as missing:
        f.o.link_produced(f.task_id, ["no-such-node"])
    assert str(hidden.value).replace(foreign, "X") == str(missing.value).replace("no-such-node", "X")
    assert produced_ids(db, Caller(account.account_id), f.task_id) >= {a, b}
    assert f.get()["produced"] == sorted([a, b])
    assert [e["type"] for e in f.o.events(f.task_id)].count("produced_linked") == 1


# ---- nothing else writes protocol records -------------------------------------------------------------
def test_other_writers_cannot_forge_events_or_move_a_protocol_task(db, account, store):
    f = Flow(store)
    f.move("spec_review")
    event = f.o.events(f.task_id)[-1]["eventId"]
    w = GraphWriter(db, account, None)
    forged = [
        NodeSpec(
            ["TaskEvent"], {"type": "transition", "toPhase": "completed"}, edges=[Edge("HAS_EVENT", f.task_id, "in")]
        ),
        NodeSpec(["Task"], {"phase": "completed", "status": "completed"}, node_id=f.task_id),
        NodeSpec(["Note"], {"title": "rewritten"}, node_id=event),
        NodeSpec(["Task"], {"title": "fake", "protocol": True}),
    ]
    for spec in forged:
        with pytest.raises(ValidationError, match="written only by the task store"):
            w.write(spec)
    assert f.get()["phase"] == "spec_review"
    assert replay(f.o.events(f.task_id)) == stored(f.o, f.task_id)
    # nor forget or unlink them (memory-forget, memory-remove-relation)
    for node_id in (f.task_id, event):
        with pytest.raises(ValidationError, match="kept by the task store") as caught:
            forget_node(w, node_id)
        assert caught.value.code == "owned"
    with pytest.raises(ValidationError, match="kept by the task store"):
        remove_relation(w, f.task_id, "HAS_EVENT", event)
    assert f.o.events(f.task_id)[-1]["eventId"] == event
    assert replay(f.o.events(f.task_id)) == stored(f.o, f.task_id)


# ---- bad arguments ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda o, t: o.create(SPEC, kind="Bad Kind"), "kind"),
        (lambda o, t: o.create(SPEC, priority=9), "priority"),
        (lambda o, t: o.create(SPEC, title="x" * 501), "title"),
        (lambda o, t: o.create(SPEC, external_ref={"acp": 5}), "externalRef.acp"),
        (lambda o, t: o.create(["goal"]), "spec"),
        (lambda o, t: o.transition(t, "done", expected_phase="spec_draft", expected_version=1), "to"),
        (lambda o, t: o.transition(t, "spec_review", expected_phase="draft", expected_version=1), "expectedPhase"),
        (
            lambda o, t: o.transition(t, "spec_review", expected_phase="spec_draft", expected_version=0),
            "expectedVersion",
        ),
        (
            lambda o, t: o.transition(t, "spec_review", expected_phase="spec_draft", expected_version=True),
            "expectedVersion",
        ),
        (
            lambda o, t: o.transition(t, "spec_review", expected_phase="spec_draft", expected_version=1, runtime="gpu"),
            "runtime",
        ),
        (
            lambda o, t: o.transition(
                t, "spec_review", expected_phase="spec_draft", expected_version=1, approval_context=[]
            ),
            "approvalContext",
        ),
        (lambda o, t: o.get(""), "taskId"),
        (lambda o, t: o.get(5), "taskId"),
        (lambda o, t: o.list(limit=0), "limit"),
        (lambda o, t: o.list(phase="done"), "phase"),
        (lambda o, t: o.link_produced(t, []), "nodeIds"),
        (lambda o, t: o.link_produced(t, "n-1"), "nodeIds"),
    ],
)
def test_bad_arguments_are_refused_naming_the_field(store, call, field):
    o = store("orchestrator")
    task_id = o.create(SPEC)["taskId"]
    assert refusal(call, o, task_id).field == field
    assert o.get(task_id)["version"] == 1


def test_executor_arguments_are_checked_before_anything_is_read(store):
    x = store("executor")
    assert refusal(x.heartbeat, "t-1", "a-1", checkpoint={"x": float("nan")}).field == "checkpoint"
    assert refusal(x.heartbeat, "t-1", "a-1", checkpoint={"x": "y" * 20_001}).field == "checkpoint"
    assert refusal(x.finish_attempt, "t-1", "a-1", "done").field == "outcome"
    assert refusal(x.add_artifact, "t-1", "a-1", "", "/r").field == "name"
    assert refusal(x.plan_side_effect, "t-1", "Deploy Now", {}).field == "step"
    assert refusal(x.plan_side_effect, "t-1", "deploy", None).field == "payload"
    assert refusal(x.set_external_ref, "t-1", "a-1", "ACP", "s").field == "system"
    with pytest.raises(ValidationError, match="actor"):
        TaskStore(x.db, x.caller, x._writer.account, "executor", actor="")
    with pytest.raises(ValidationError, match="taskRole: one of orchestrator"):
        TaskStore(x.db, x.caller, x._writer.account, "admin")


def test_a_refused_call_logs_one_line(store, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    x = store("executor")
    refusal(x.transition, "t-1", "spec_review", expected_phase="spec_draft", expected_version=1)
    assert "[task-store] transition refused taskId=t-1 role=executor field=taskRole" in caplog.text

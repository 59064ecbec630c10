"""The task store under random operations by random roles, against the real Neo4j, with
racing transitions from threads. After every step, for every task:

- the event log is gap-free and replays to exactly the stored state (and status follows phase);
- every phase change is an allowed move of the table made by the orchestrator (or operator), and
  every other event by a role the role table allows;
- the attempt counters equal the TaskAttempt nodes;
- no execution phase is ever reached with an incomplete spec;
- the circuit opens exactly as the policy says: never before three failures since the last reset
  (or two spec-gate rework loops and another mismatch), and no attempt starts after three;
- a refused call wrote nothing, and a call is refused for its role exactly when the table says so.
"""

from __future__ import annotations

import re
import threading
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck
from hypothesis import event as note_event
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from maxy.errors import MaxyError, ValidationError
from maxy.graph.guards import Caller
from maxy.taskstore import PHASES, STATUS_OF_PHASE, TRANSITIONS, RetryPolicy, TaskConflict, TaskStore, apply, replay
from maxy.taskstore.phases import EXECUTION_PHASES

from tests.hypothesis_profile import examples

SPEC = {
    "goal": "Archive last year's invoices",
    "scope_in": ["invoices of 2025"],
    "scope_out": ["receipts"],
    "inputs": ["the invoice share"],
    "outputs": ["archive.zip"],
    "acceptance_criteria": ["archive.zip contains every invoice of 2025"],
    "risks": [],
}
VAGUE_SPEC = {**SPEC, "acceptance_criteria": ["It works properly"]}
ROLES = (None, "orchestrator", "executor", "spec_reviewer", "quality_reviewer", "approver", "operator")
ORCHESTRATING = {"orchestrator", "operator"}
# The role table, stated again for the oracle: who may perform each operation.
MAY: dict[str, set[str]] = {
    "create": ORCHESTRATING,
    "update_spec": ORCHESTRATING,
    "transition": ORCHESTRATING,
    "link": ORCHESTRATING,
    "heartbeat": {"executor"},
    "finish": {"executor"},
    "artifact": {"executor"},
    "plan": {"executor"},
    "external_ref": {"executor"},
    "review:spec_review": {"spec_reviewer"},
    "review:spec_gate": {"spec_reviewer"},
    "review:quality_gate": {"quality_reviewer"},
    "decide": {"approver", "operator"},
    "resume": {"approver", "orchestrator", "operator"},
}
EVENT_OPERATION = {
    "created": "create",
    "spec_updated": "update_spec",
    "transition": "transition",
    "produced_linked": "link",
    "heartbeat": "heartbeat",
    "attempt_finished": "finish",
    "artifact_added": "artifact",
    "side_effect_planned": "plan",
    "external_ref_set": "external_ref",
    "approval_decided": "decide",
    "side_effect_done": "resume",
}
role_st = st.sampled_from(ROLES)
# The order a busy orchestrator tries moves in: onward before back.
FORWARD = (
    "spec_review",
    "execution_ready",
    "executing",
    "spec_gate",
    "quality_gate",
    "awaiting_approval",
    "ready_to_resume",
    "completed",
    "retrying",
    "circuit_open",
    "spec_draft",
    "failed",
)


class TaskMachine(RuleBasedStateMachine):
    def __init__(self, db: Any, account: Any) -> None:
        super().__init__()
        self.db, self.account = db, account
        caller = Caller(account.account_id)
        clock = lambda: datetime.now(UTC)  # noqa: E731 - backoff 0: the policy never waits
        policy = RetryPolicy(base_s=0)
        self.stores = {r: TaskStore(db, caller, account, r, f"{r}-agent", policy=policy, clock=clock) for r in ROLES}
        self.tasks: list[str] = []

    # ---- helpers ------------------------------------------------------------------------------
    def reader(self) -> TaskStore:
        return self.stores[None]

    def task(self, data: st.DataObject) -> dict[str, Any]:
        return self.reader().get(data.draw(st.sampled_from(self.tasks), label="task"))

    def attempt(self, data: st.DataObject, task: dict[str, Any]) -> str:
        ids = [a["attemptId"] for a in task["attempts"]] + ["no-such-attempt"]
        current = task["currentAttemptId"]
        return (
            current
            if current and data.draw(st.booleans(), label="current attempt")
            else data.draw(st.sampled_from(ids))
        )

    def call(self, operation: str, role: str | None, task_id: str | None, fn: Any) -> Any:
        """Run ``fn`` as ``role``; check the role oracle, and that a refusal wrote nothing."""
        before = self.reader().events(task_id) if task_id else None
        try:
            result = fn(self.stores[role])
        except ValidationError as err:
            if role not in MAY[operation]:
                assert err.field == "taskRole", (operation, role, str(err))
            else:
                assert err.field != "taskRole", (operation, role, str(err))
            if task_id:
                assert self.reader().events(task_id) == before, f"a refused {operation} wrote something"
            return err
        except MaxyError as err:  # link: a node that is not writable
            assert operation == "link", (operation, str(err))
            return err
        assert role in MAY[operation], f"{role} performed {operation}"
        return result

    # ---- rules ---------------------------------------------------------------------------------
    @initialize()
    def first_task(self) -> None:
        self.tasks.append(self.stores["orchestrator"].create(SPEC)["taskId"])

    @precondition(lambda self: len(self.tasks) < 2)
    @rule(role=role_st, complete=st.booleans())
    def create(self, role: str | None, complete: bool) -> None:
        out = self.call("create", role, None, lambda s: s.create(SPEC if complete else VAGUE_SPEC))
        if isinstance(out, dict):
            assert out["phase"] == "spec_draft" and out["specComplete"] == complete
            self.tasks.append(out["taskId"])

    def update_spec(self, data: st.DataObject, t: dict[str, Any], role: str | None) -> None:
        complete = data.draw(st.booleans(), label="complete spec")
        self.call(
            "update_spec",
            role,
            t["taskId"],
            lambda s: s.update_spec(t["taskId"], SPEC if complete else VAGUE_SPEC, expected_version=t["version"]),
        )

    def transition(self, data: st.DataObject, t: dict[str, Any], role: str | None) -> None:
        nxt = t["nextPhases"]
        to = data.draw(st.sampled_from(nxt) if nxt and data.draw(st.integers(0, 4)) else st.sampled_from(PHASES))
        stale = data.draw(st.integers(0, 9)) == 0
        version = (t["version"] - 1 or 2) if stale else t["version"]  # stale: behind (or, at 1, ahead)
        out = self.call(
            "transition",
            role,
            t["taskId"],
            lambda s: s.transition(t["taskId"], to, expected_phase=t["phase"], expected_version=version),
        )
        if stale and role in ORCHESTRATING:
            assert isinstance(out, TaskConflict), out
        if isinstance(out, dict):
            assert (out["phase"], out["version"]) == (to, t["version"] + 1)

    @rule(data=st.data(), role=role_st)
    def any_operation(self, data: st.DataObject, role: str | None) -> None:
        """One operation of any kind, by any role (or none), with arguments right or wrong."""
        kinds = ("update_spec", "transition", "executor_record", "review", "decide", "resume")
        getattr(self, data.draw(st.sampled_from(kinds), label="operation"))(data, self.task(data), role)

    @rule(data=st.data(), steps=st.integers(1, 6))
    def play_the_protocol(self, data: st.DataObject, steps: int) -> None:
        """What each role would do next in the task's phase (outcomes and verdicts drawn at random)."""
        for _ in range(steps):
            t = self.task(data)
            phase, lead = t["phase"], data.draw(st.sampled_from(("orchestrator", "orchestrator", "operator")))
            attempt = t["attempts"][-1] if t["attempts"] else None
            if phase == "spec_draft" and not t["specComplete"]:
                self.update_spec(data, t, lead)
            elif phase == "executing" and attempt and attempt["status"] == "running":
                kind = data.draw(
                    st.sampled_from(("heartbeat", "artifact", "plan", "plan", "finish", "finish", "finish"))
                )
                self.executor_record(data, t, "executor", kind)
            elif phase in ("spec_review", "spec_gate", "quality_gate") and data.draw(st.booleans(), label="review"):
                self.review(data, t, "quality_reviewer" if phase == "quality_gate" else "spec_reviewer")
            elif phase == "awaiting_approval" and data.draw(st.booleans(), label="decide"):
                self.decide(data, t, "approver")
            elif phase == "ready_to_resume" and any(e["state"] != "done" for e in t["sideEffects"]):
                self.resume(data, t, data.draw(st.sampled_from(("approver", lead))))
            else:
                self.some_move(data, t, lead)

    def some_move(self, data: st.DataObject, t: dict[str, Any], role: str) -> None:
        """Try the table's moves from the task's phase until one is allowed: mostly forward first."""
        forward = sorted(t["nextPhases"], key=lambda p: FORWARD.index(p))
        moves = forward if data.draw(st.integers(0, 3), label="forward") else data.draw(st.permutations(forward))
        for to in moves:
            out = self.call(
                "transition",
                role,
                t["taskId"],
                lambda s, to=to: s.transition(
                    t["taskId"], to, expected_phase=t["phase"], expected_version=t["version"]
                ),
            )
            if isinstance(out, dict):
                return

    @rule(data=st.data())
    def race(self, data: st.DataObject) -> None:
        """Threads race one transition with the same expectation (and an executor heartbeat)."""
        t = self.task(data)
        if not t["nextPhases"]:
            return
        to = data.draw(st.sampled_from(t["nextPhases"]), label="race to")
        threads = data.draw(st.integers(2, 4), label="threads")
        outcomes: list[Any] = []
        gate = threading.Barrier(threads + 1)

        def move() -> None:
            gate.wait()
            try:
                s = self.stores["orchestrator"]
                outcomes.append(s.transition(t["taskId"], to, expected_phase=t["phase"], expected_version=t["version"]))
            except ValidationError as err:
                outcomes.append(err)

        def beat() -> None:
            gate.wait()
            if t["currentAttemptId"]:
                try:
                    self.stores["executor"].heartbeat(t["taskId"], t["currentAttemptId"], {"racing": True})
                except ValidationError:
                    pass

        workers = [threading.Thread(target=move) for _ in range(threads)] + [threading.Thread(target=beat)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        wins = [o for o in outcomes if isinstance(o, dict)]
        losses = [o for o in outcomes if not isinstance(o, dict)]
        assert len(outcomes) == threads and len(wins) <= 1
        if wins:
            assert all(isinstance(o, TaskConflict) for o in losses), [str(o) for o in losses]
            assert self.reader().get(t["taskId"])["version"] == t["version"] + 1
        else:  # the move's rule refused it: every thread got the same answer (how long ago the
            # attempt was last heard of is read by each thread, on either side of a second)
            reasons = {re.sub(r"last heard of \d+ s ago", "last heard of N s ago", str(o)) for o in losses}
            assert len(reasons) == 1 or any(isinstance(o, TaskConflict) for o in losses), reasons

    def executor_record(
        self, data: st.DataObject, t: dict[str, Any], role: str | None, kind: str | None = None
    ) -> None:
        attempt = self.attempt(data, t)
        kind = kind or data.draw(st.sampled_from(("heartbeat", "finish", "artifact", "plan", "external_ref")))
        task_id = t["taskId"]
        if kind == "heartbeat":
            self.call(kind, role, task_id, lambda s: s.heartbeat(task_id, attempt, {"n": 1}))
        elif kind == "finish":
            outcome = data.draw(st.sampled_from(("succeeded", "failed")), label="outcome")
            self.call(kind, role, task_id, lambda s: s.finish_attempt(task_id, attempt, outcome, "flaky network"))
        elif kind == "artifact":
            self.call(kind, role, task_id, lambda s: s.add_artifact(task_id, attempt, "archive", "/out/archive.zip"))
        elif kind == "plan":
            step = data.draw(st.sampled_from(("upload", "notify")))
            self.call(kind, role, task_id, lambda s: s.plan_side_effect(task_id, step, {"bucket": "cold"}))
        else:
            self.call(kind, role, task_id, lambda s: s.set_external_ref(task_id, attempt, "acp", "session-1"))

    def review(self, data: st.DataObject, t: dict[str, Any], role: str | None) -> None:
        verdict = data.draw(st.sampled_from(("approved", "approved", "changes_requested", "blocked")), label="verdict")
        gates = ("spec_review", "spec_gate", "quality_gate")
        gate = t["phase"] if t["phase"] in gates and data.draw(st.booleans()) else data.draw(st.sampled_from(gates))
        findings = [] if verdict == "approved" else [{"text": "two invoices are missing"}]
        self.call(
            f"review:{gate}", role, t["taskId"], lambda s: s.append_review(t["taskId"], gate, verdict, findings, [])
        )

    def decide(self, data: st.DataObject, t: dict[str, Any], role: str | None) -> None:
        decision = data.draw(st.sampled_from(("approved", "approved", "rejected")), label="decision")
        approval = t["currentApprovalId"] or "no-such-approval"
        self.call("decide", role, t["taskId"], lambda s: s.decide_approval(t["taskId"], approval, decision))

    def resume(self, data: st.DataObject, t: dict[str, Any], role: str | None) -> None:
        keys = [e["idempotencyKey"] for e in t["sideEffects"]] + ["no-such-key"]
        key = data.draw(st.sampled_from(keys))
        out = self.call("resume", role, t["taskId"], lambda s: s.resume(t["taskId"], key, {"ok": True}))
        if isinstance(out, dict):
            again = self.stores["approver"].resume(t["taskId"], key)
            assert again["replayed"] is False and again["doneAt"] == out["doneAt"]

    @precondition(lambda self: len(self.tasks) > 1)
    @rule(data=st.data(), role=role_st)
    def link(self, data: st.DataObject, role: str | None) -> None:
        t = self.task(data)
        other = data.draw(st.sampled_from([*self.tasks, "no-such-node"]))
        self.call("link", role, t["taskId"], lambda s: s.link_produced(t["taskId"], [other]))

    # ---- invariants -------------------------------------------------------------------------------
    @invariant()
    def every_task_keeps_the_invariants(self) -> None:
        for task_id in self.tasks:
            self.check(task_id)

    def check(self, task_id: str) -> None:
        events = self.reader().events(task_id)
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        stored = self.reader()._load(task_id).state
        assert replay(events) == stored
        note_event(f"a task reached {stored.phase}")
        row = self.db.read(
            """
            MATCH (t:Task {nodeId: $id})
            RETURN t.status AS status, t.attempts AS attempts, t.failedAttempts AS failed,
                   COLLECT { MATCH (t)-[:HAS_ATTEMPT]->(a:TaskAttempt) RETURN a.status } AS statuses
            """,
            id=task_id,
        )[0]
        assert row["status"] == STATUS_OF_PHASE[stored.phase]
        assert row["attempts"] == len(row["statuses"])
        assert row["failed"] == sum(s in ("failed", "superseded") for s in row["statuses"])
        assert sum(s == "running" for s in row["statuses"]) <= 1
        state = None
        for event in events:
            operation = EVENT_OPERATION.get(event["type"]) or f"review:{event['data']['gate']}"
            assert event["actorRole"] in MAY[operation], (event["type"], event["actorRole"])
            after = apply(state, event)
            if event["type"] == "transition":
                assert state is not None and event["toPhase"] in TRANSITIONS[event["fromPhase"]]
                check_move(state, event)
            if after.phase in EXECUTION_PHASES:
                assert after.spec_complete, f"{after.phase} reached with spec problems {after.spec_problems}"
            state = after


def check_move(before: Any, event: dict[str, Any]) -> None:
    """The circuit and the attempts follow the policy."""
    data, frm, to = event["data"], event["fromPhase"], event["toPhase"]
    failed = before.failed_since_reset + (1 if data.get("superseded") else 0)
    if to == "executing":
        assert before.failed_since_reset < 3 and data["attempt"]["number"] == before.attempt_count + 1
    if frm == "executing" and to == "retrying":
        assert failed < 3
    if to == "circuit_open":
        if frm == "executing":
            assert failed >= 3 and data["circuitReason"] == "attempts"
        else:
            assert frm == "spec_gate" and before.reworks_since_reset >= 2 and data["circuitReason"] == "spec-mismatch"
    if frm == "spec_gate" and to == "execution_ready":
        assert before.reworks_since_reset < 2


def test_random_operations_by_random_roles_keep_every_invariant(db, account):
    run_state_machine_as_test(
        lambda: TaskMachine(db, account),
        settings=hsettings(
            max_examples=examples(25),
            stateful_step_count=30,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        ),
    )

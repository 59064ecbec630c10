"""The task store's pure parts, without a database: the phase table, the retry policy, the
spec rule, the role table, the transition rules and the replay of hand-built event logs."""

from __future__ import annotations

import itertools
from collections import deque
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maxy.errors import ValidationError
from maxy.taskstore import (
    ALL_ROLES,
    NO_ROLE,
    PHASES,
    STATUS_OF_PHASE,
    TRANSITIONS,
    ReplayError,
    RetryPolicy,
    TaskState,
    apply,
    check_role,
    check_spec,
    decide,
    replay,
)
from maxy.taskstore.phases import EXECUTION_PHASES, FINISHED
from maxy.taskstore.policy import BACKOFF_BASE_S, BACKOFF_CAP_S, spec_mismatch
from maxy.taskstore.roles import PERMISSIONS, may
from maxy.taskstore.spec import criterion_problem, normalize_spec
from maxy.taskstore.transitions import plan_transition

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
SPEC = {
    "goal": "Publish the monthly report",
    "scope_in": ["the report"],
    "scope_out": [],
    "inputs": ["the ledger"],
    "outputs": ["report.pdf"],
    "acceptance_criteria": ["report.pdf lists every account with its balance"],
    "risks": [],
}


# ---- the phase table ---------------------------------------------------------------------
def reachable(edges: dict[str, tuple[str, ...]], start: str = "spec_draft") -> set[str]:
    seen, todo = {start}, deque([start])
    while todo:
        for nxt in edges[todo.popleft()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_the_table_covers_every_phase_and_only_phases():
    assert set(TRANSITIONS) == set(PHASES) == set(STATUS_OF_PHASE)
    assert all(set(targets) <= set(PHASES) for targets in TRANSITIONS.values())
    assert FINISHED == {"completed", "failed"}
    assert reachable(TRANSITIONS) == set(PHASES)


def test_the_status_follows_the_phase():
    assert STATUS_OF_PHASE["awaiting_approval"] == "waiting"
    assert STATUS_OF_PHASE["circuit_open"] == "blocked"
    assert STATUS_OF_PHASE["completed"] == "completed" and STATUS_OF_PHASE["failed"] == "failed"
    running = {p for p, s in STATUS_OF_PHASE.items() if s == "running"}
    assert running == set(PHASES) - {"awaiting_approval", "circuit_open", "completed", "failed"}


def test_execution_is_reached_only_through_the_reviewed_spec():
    cut = {p: tuple(t for t in ts if (p, t) != ("spec_review", "execution_ready")) for p, ts in TRANSITIONS.items()}
    assert not reachable(cut) & EXECUTION_PHASES


def test_the_circuit_is_entered_only_from_executing_and_spec_gate():
    assert {p for p, ts in TRANSITIONS.items() if "circuit_open" in ts} == {"executing", "spec_gate"}


# ---- the policy ----------------------------------------------------------------------------
def test_the_policy_retries_twice_escalates_the_third_and_opens_after_three():
    assert decide(1).action == "retry" and not decide(1).escalate
    assert decide(2).action == "retry" and decide(2).escalate
    assert decide(1).backoff_s == BACKOFF_BASE_S and decide(2).backoff_s == 2 * BACKOFF_BASE_S
    for n in (3, 4, 10):
        assert decide(n).action == "open_circuit"
    assert spec_mismatch(0) == spec_mismatch(1) == "rework" and spec_mismatch(2) == "open_circuit"


@given(
    st.integers(min_value=0, max_value=50),
    st.floats(min_value=0, max_value=1e4, allow_nan=False),
    st.floats(min_value=0, max_value=1e5, allow_nan=False),
)
def test_backoff_is_bounded_and_never_shrinks(n: int, base: float, cap: float):
    policy = RetryPolicy(base_s=base, cap_s=cap)
    now, nxt = policy.decide(n), policy.decide(n + 1)
    assert 0 <= now.backoff_s <= max(cap, 0)
    if now.action == nxt.action == "retry":
        assert nxt.backoff_s >= now.backoff_s
    assert (now.action == "open_circuit") == (n >= 3)


def test_a_negative_policy_setting_is_refused():
    with pytest.raises(ValueError, match="seconds >= 0"):
        RetryPolicy(base_s=-1)
    assert RetryPolicy().decide(9).backoff_s == 0 and RetryPolicy(cap_s=40).decide(2).backoff_s == 40
    assert BACKOFF_CAP_S == 600


# ---- the spec ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "criterion",
    [
        "report.pdf lists every account with its balance",
        "The command exits with status 0 on a clean run",
        "A search answers within 200 ms at p95",
        "An unknown id is refused with one line",
        "The page shows the task's phase and version",
        "the nightly export writes report.pdf to the share",
    ],
)
def test_checkable_criteria(criterion: str):
    assert criterion_problem(criterion, ["report.pdf"]) is None


@pytest.mark.parametrize(
    ("criterion", "why"),
    [
        ("It works", "too short"),
        ("Everything works properly and is fast", "no observable outcome"),
        ("The code is nice and clean", "no observable outcome"),
        ("Output matches as expected", "placeholder"),
        ("Handle errors, retries, etc", "placeholder"),
        ("Performance target TBD for now", "placeholder"),
    ],
)
def test_vague_criteria_are_problems(criterion: str, why: str):
    problem = criterion_problem(criterion, ["report.pdf"])
    assert problem is not None and why in problem


VAGUE = ["works", "good", "fast", "nice", "properly", "well", "clean", "robust", "it", "is", "and", "the", "should"]


@given(st.lists(st.sampled_from(VAGUE), min_size=1, max_size=12))
def test_only_vague_words_are_never_checkable(words: list[str]):
    assert criterion_problem(" ".join(words), []) is not None


@given(st.lists(st.sampled_from(VAGUE), min_size=3, max_size=8), st.integers(0, 10_000))
def test_a_number_makes_a_criterion_observable(words: list[str], n: int):
    assert criterion_problem(" ".join([*words, str(n)]), []) is None


def test_a_complete_spec_has_no_problems_and_each_missing_part_is_named():
    assert check_spec(SPEC) == []
    problems = {str(p) for p in check_spec({"goal": " ", "acceptance_criteria": ["It works"]})}
    fields = {p.split(":")[0] for p in problems}
    assert fields == {"goal", "scope_in", "scope_out", "inputs", "outputs", "risks", "acceptance_criteria[0]"}
    assert "risks: missing; may be empty ([]) but must be given" in problems
    assert {str(p) for p in check_spec({**SPEC, "acceptance_criteria": []})} == {
        "acceptance_criteria: empty; give at least one item"
    }


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ("a goal", "spec"),
        ({"goal": 5}, "spec.goal"),
        ({"scope_in": "all of it"}, "spec.scope_in"),
        ({"outputs": ["a", 3]}, "spec.outputs[1]"),
        ({"acceptance": ["x"]}, "spec.acceptance"),
        ({"goal": "g" * 2001}, "spec.goal"),
    ],
)
def test_a_malformed_spec_is_refused_naming_the_field(payload: Any, field: str):
    with pytest.raises(ValidationError) as err:
        normalize_spec(payload)
    assert err.value.field == field


# ---- roles -----------------------------------------------------------------------------------
ORACLE = {  # the role table, stated again: who may change what
    "task_create": {"orchestrator", "operator"},
    "task_update_spec": {"orchestrator", "operator"},
    "task_transition": {"orchestrator", "operator"},
    "task_link_produced": {"orchestrator", "operator"},
    "task_heartbeat": {"executor"},
    "task_finish_attempt": {"executor"},
    "task_add_artifact": {"executor"},
    "task_plan_side_effect": {"executor"},
    "task_set_external_ref": {"executor"},
    "task_append_review:spec_review": {"spec_reviewer"},
    "task_append_review:spec_gate": {"spec_reviewer"},
    "task_append_review:quality_gate": {"quality_reviewer"},
    "task_decide_approval": {"approver", "operator"},
    "task_resume": {"approver", "orchestrator", "operator"},
}


def test_the_role_table_is_least_privilege():
    assert set(PERMISSIONS) == set(ORACLE)
    for operation, role in itertools.product(ORACLE, ALL_ROLES):
        assert may(role, operation) == (role in ORACLE[operation]), (operation, role)


def test_a_refusal_names_the_role_and_the_rule():
    with pytest.raises(ValidationError) as err:
        check_role("executor", "task_transition")
    assert str(err.value) == (
        "taskRole: executor may not task_transition: only orchestrator, operator may; only the orchestrator "
        "moves a task between phases; executors and reviewers record evidence"
    )
    with pytest.raises(ValidationError, match="quality_reviewer may not task_append_review with gate spec_gate"):
        check_role("quality_reviewer", "task_append_review:spec_gate")
    with pytest.raises(ValidationError) as err:
        check_role(None, "task_heartbeat")
    assert err.value.reason == NO_ROLE and "TASK_ROLE=" in NO_ROLE and "--task-role" in NO_ROLE


# ---- transitions and replay on hand-built logs -----------------------------------------------
class Log:
    """Builds an event log by hand, the way the store would, and keeps the state it replays to."""

    def __init__(self, spec: dict[str, Any] = SPEC):
        self.events: list[dict[str, Any]] = []
        self.state: TaskState | None = None
        self.ids = (f"id-{n}" for n in itertools.count(1))
        problems = [str(p) for p in check_spec(spec)]
        data = {"taskId": "t-1", "kind": "protocol", "title": "Report", "priority": 3, "spec": spec}
        self.add("created", "orchestrator", {**data, "specProblems": problems}, to="spec_draft")

    def add(self, kind: str, role: str, data: dict[str, Any], *, to: str | None = None, at: datetime = T0) -> None:
        s = self.state
        version = 1 if s is None else s.version + (kind in ("spec_updated", "transition"))
        event = {
            "seq": len(self.events) + 1,
            "type": kind,
            "actorRole": role,
            "actor": role,
            "fromPhase": s.phase if s else None,
            "toPhase": to or (s.phase if s else None),
            "version": version,
            "at": at.isoformat(),
            "data": data,
        }
        self.state = apply(self.state, event)
        self.events.append(event)

    def move(self, to: str, *, at: datetime = T0, policy: RetryPolicy | None = None, **kw: Any) -> dict[str, Any]:
        assert self.state is not None
        data = plan_transition(
            self.state, to, now=at, policy=policy or RetryPolicy(base_s=0), new_id=lambda: next(self.ids), **kw
        )
        self.add("transition", "orchestrator", data, to=to, at=at)
        return data

    def review(self, gate: str, verdict: str) -> None:
        role = "quality_reviewer" if gate == "quality_gate" else "spec_reviewer"
        data = {"reviewId": next(self.ids), "gate": gate, "verdict": verdict, "findings": [{"text": "x"}], "refs": []}
        self.add("review_appended", role, data)

    def finish(self, outcome: str) -> None:
        assert self.state is not None and self.state.current_attempt_id
        data = {"attemptId": self.state.current_attempt_id, "outcome": outcome, "reason": "boom"}
        self.add("attempt_finished", "executor", data)

    def to_executing(self) -> None:
        self.move("spec_review")
        self.review("spec_review", "approved")
        self.move("execution_ready")
        self.move("executing")


def refused(log: Log, to: str, match: str, **kw: Any) -> None:
    with pytest.raises(ValidationError, match=match):
        log.move(to, **kw)


def test_a_move_outside_the_table_is_refused_naming_the_allowed_ones():
    log = Log()
    refused(
        log,
        "executing",
        "spec_draft -> executing is not in the phase table; from spec_draft a task may move to spec_review",
    )
    log.move("spec_review")
    refused(log, "execution_ready", "needs an approved spec_review review recorded in this phase \\(none yet\\)")
    log.review("spec_review", "changes_requested")
    refused(log, "execution_ready", "the latest is changes_requested")


def test_an_incomplete_spec_keeps_the_task_in_spec_draft():
    log = Log({**SPEC, "acceptance_criteria": ["It works properly"]})
    refused(log, "spec_review", "needs a complete spec; 1 problem\\(s\\) remain")


def test_retries_follow_the_policy_then_the_circuit_opens():
    log = Log()
    log.to_executing()
    refused(log, "spec_gate", "attempt 1 is still running")
    log.finish("failed")
    refused(log, "circuit_open", "the policy retries after failure 1 of 3")
    first = log.move("retrying", policy=RetryPolicy())
    assert first["decision"] == {"action": "retry", "backoffS": 30.0, "escalate": False}
    refused(log, "executing", "backs off until", at=T0 + timedelta(seconds=29))
    refused(
        log,
        "executing",
        "the policy retries on the same runtime \\(local\\)",
        runtime="gpu",
        at=T0 + timedelta(seconds=30),
    )
    log.move("executing", at=T0 + timedelta(seconds=30))
    log.finish("failed")
    assert log.move("retrying")["decision"]["escalate"] is True
    third = log.move("executing", runtime="gpu")  # the third attempt may run on a stronger runtime
    assert third["attempt"] == {"attemptId": third["attempt"]["attemptId"], "number": 3, "runtime": "gpu"}
    log.finish("failed")
    refused(log, "retrying", "3 failed attempts since the last reset; the policy allows no more than 3")
    log.move("circuit_open")
    s = log.state
    assert s is not None and s.circuit_reason == "attempts" and s.failed_attempts == 3 and s.attempt_count == 3
    log.move("spec_draft")  # a reset keeps the counters and clears the circuit
    assert s.failed_attempts == 3 and log.state.failed_since_reset == 0 and log.state.circuit_opened_at is None
    log.to_executing()
    assert log.state.attempt_count == 4


def test_a_silent_attempt_is_superseded_and_counts_as_a_failure():
    log = Log()
    log.to_executing()
    policy = RetryPolicy(base_s=0, stale_after_s=60)
    refused(log, "retrying", "still running \\(last heard of 59 s ago\\)", at=T0 + timedelta(seconds=59), policy=policy)
    data = log.move("retrying", at=T0 + timedelta(seconds=60), policy=policy)
    assert data["superseded"]["reason"] == "no heartbeat for 60 s"
    s = log.state
    assert (
        s is not None and s.failed_attempts == 1 and s.attempts[data["superseded"]["attemptId"]].status == "superseded"
    )


def test_the_spec_gate_reworks_twice_then_opens_the_circuit():
    log = Log()
    log.to_executing()
    for loop in range(3):
        log.finish("succeeded")
        log.move("spec_gate")
        refused(log, "quality_gate", "needs an approved spec_gate review")
        log.review("spec_gate", "changes_requested")
        if loop < 2:
            refused(log, "circuit_open", f"only after 2 rework loops \\({loop} so far\\)")
            log.move("execution_ready")
            log.move("executing")
    refused(log, "execution_ready", "2 rework loops from spec_gate since the last reset")
    log.move("circuit_open")
    assert log.state is not None and log.state.circuit_reason == "spec-mismatch" and log.state.spec_reworks == 2


def test_side_effects_need_an_approval_and_a_replay_before_completion():
    log = Log()
    log.to_executing()
    attempt = log.state.current_attempt_id if log.state else None
    effect = {
        "effectId": "e-1",
        "attemptId": attempt,
        "step": "deploy",
        "payload": {"env": "prod"},
        "idempotencyKey": "k-1",
    }
    log.add("side_effect_planned", "executor", effect)
    log.finish("succeeded")
    log.move("spec_gate")
    log.review("spec_gate", "approved")
    log.move("quality_gate")
    log.review("quality_gate", "approved")
    refused(log, "completed", "still planned: deploy; request an approval")
    approval = log.move("awaiting_approval", reason="prod deploy", approval_context={"ticket": "OPS-1"})["approval"]
    assert approval["context"]["sideEffects"][0]["idempotencyKey"] == "k-1"
    assert approval["context"]["details"] == {"ticket": "OPS-1"} and approval["context"]["reason"] == "prod deploy"
    refused(log, "ready_to_resume", "needs the approval approved \\(it is requested\\)")
    log.add("approval_decided", "approver", {"approvalId": approval["approvalId"], "decision": "approved"})
    refused(log, "failed", "needs the approval rejected")
    log.move("ready_to_resume")
    refused(log, "completed", "replay them with task_resume")
    log.add("side_effect_done", "approver", {"effectId": "e-1", "result": {"ok": True}})
    log.move("completed")
    assert log.state is not None and log.state.status == "completed" and log.state.completed_at == T0.isoformat()


def test_replay_rebuilds_the_state_and_the_stored_projection_round_trips():
    log = Log()
    log.to_executing()
    attempt = log.state.current_attempt_id if log.state else ""
    log.add("heartbeat", "executor", {"attemptId": attempt, "checkpoint": {"step": 2}})
    log.add(
        "artifact_added",
        "executor",
        {"artifactId": "a-1", "attemptId": attempt, "name": "r", "ref": "/r", "kind": "file"},
    )
    log.add("external_ref_set", "executor", {"attemptId": attempt, "system": "acp", "ref": "session-9"})
    log.finish("succeeded")
    log.add("produced_linked", "orchestrator", {"nodeIds": ["n-2", "n-1"]})
    state = replay(log.events)
    assert state == log.state
    assert state.artifacts["a-1"].good and state.last_good_artifact_id == "a-1" and state.produced == ["n-1", "n-2"]
    assert state.attempts[attempt].checkpoint == {"step": 2} and state.attempts[attempt].external_refs == {
        "acp": "session-9"
    }
    stored = TaskState.from_node(
        {k: v for k, v in state.task_properties().items() if v is not None},
        attempts=[a.properties("t-1") for a in state.attempts.values()],
        artifacts=[a.properties("t-1") for a in state.artifacts.values()],
        reviews=[r.properties("t-1") for r in state.reviews.values()],
        approvals=[a.properties("t-1") for a in state.approvals.values()],
        side_effects=[e.properties("t-1") for e in state.side_effects.values()],
    )
    assert stored == state


def test_replay_refuses_a_log_no_store_could_have_written():
    log = Log()
    log.move("spec_review")
    gap = [log.events[0], {**log.events[1], "seq": 3}]
    with pytest.raises(ReplayError, match="seq 3 where 2 was next"):
        replay(gap)
    with pytest.raises(ReplayError, match="starts from 'executing'"):
        replay([log.events[0], {**log.events[1], "fromPhase": "executing"}])
    with pytest.raises(ReplayError, match="version/phase"):
        replay([log.events[0], {**log.events[1], "version": 5}])
    with pytest.raises(ReplayError, match="starts with one created event"):
        replay([{**log.events[1], "seq": 1}])
    with pytest.raises(ReplayError, match="empty"):
        replay([])

"""What each move of the phase table requires, and what it records.

:func:`plan_transition` checks a move against the stored state (the spec, the reviews recorded
since the phase began, the current attempt, the policy, the approval, the side effects) and
returns the event data the move writes: a new attempt, the policy's decision and backoff, the
approval it requests, the attempt it supersedes. A refused move raises one ValidationError
naming the rule. Pure: the store runs it on the state it read and locks.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from ..errors import ValidationError
from .events import TaskState
from .phases import TRANSITIONS, allowed
from .policy import MAX_FAILED_ATTEMPTS, MAX_SPEC_REWORKS, RetryPolicy, may_start_attempt, spec_mismatch

DEFAULT_RUNTIME = "local"


def _refuse(reason: str, field: str = "to") -> ValidationError:
    return ValidationError(field, reason)


def _at(iso: str) -> datetime:
    return datetime.fromisoformat(iso)


def plan_transition(
    state: TaskState,
    to: str,
    *,
    now: datetime,
    policy: RetryPolicy,
    new_id: Callable[[], str],
    runtime: str | None = None,
    reason: str | None = None,
    approval_context: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The event data of the move ``state.phase -> to``, or a ValidationError naming the rule it breaks."""
    frm = state.phase
    if not allowed(frm, to):
        targets = TRANSITIONS[frm]
        where = f"from {frm} a task may move to {' or '.join(targets)}" if targets else f"{frm} is final"
        raise _refuse(f"{frm} -> {to} is not in the phase table; {where}")
    if runtime is not None and to != "executing":
        raise _refuse("only a move to executing starts an attempt on a runtime; omit runtime", "runtime")
    if approval_context is not None and to != "awaiting_approval":
        raise _refuse("only a move to awaiting_approval requests an approval; omit approvalContext", "approvalContext")
    move = f"{frm} -> {to}"
    _check_evidence(state, move)
    data: dict[str, Any] = {"reason": reason} if reason else {}
    if to == "executing":
        data.update(_start_attempt(state, now=now, policy=policy, new_id=new_id, runtime=runtime, move=move))
    if frm == "executing":
        data.update(_after_attempt(state, to, now=now, policy=policy, move=move))
    if frm == "spec_gate" and to != "quality_gate":
        data.update(_after_mismatch(state, to, move))
    if to == "completed":
        _check_side_effects_done(state, move)
    if to == "awaiting_approval":
        data["approval"] = _request_approval(state, move, reason, approval_context, new_id)
    if frm == "awaiting_approval":
        _check_approval(state, to, move)
    return data


# The review verdict a move out of a gate needs: approved (True), or changes_requested/blocked (False).
VERDICT_NEEDED: dict[tuple[str, str], bool] = {
    ("spec_review", "execution_ready"): True,
    ("spec_gate", "quality_gate"): True,
    ("spec_gate", "execution_ready"): False,
    ("spec_gate", "circuit_open"): False,
    ("quality_gate", "completed"): True,
    ("quality_gate", "awaiting_approval"): True,
    ("quality_gate", "execution_ready"): False,
}


def _check_evidence(state: TaskState, move: str) -> None:
    """A complete spec to leave spec_draft or enter execution; the verdict a move out of a gate needs."""
    frm, _, to = move.partition(" -> ")
    if (frm == "spec_draft" or to == "execution_ready" and frm == "spec_review") and state.spec_problems:
        raise _refuse(
            f"{move} needs a complete spec; {len(state.spec_problems)} problem(s) remain "
            f"({'; '.join(state.spec_problems[:3])}): fix them with task_update_spec"
        )
    if (frm, to) in VERDICT_NEEDED:
        _needs_verdict(state, frm, move, approved=VERDICT_NEEDED[(frm, to)])


def _check_side_effects_done(state: TaskState, move: str) -> None:
    left = state.open_side_effects()
    if left:
        steps = ", ".join(e.step for e in left)
        fix = (
            "request an approval (awaiting_approval)"
            if state.phase == "quality_gate"
            else "replay them with task_resume"
        )
        raise _refuse(f"{move} needs every planned side effect done; still planned: {steps}; {fix}")


def _check_approval(state: TaskState, to: str, move: str) -> None:
    approval = state.approvals.get(state.current_approval_id or "")
    wanted = "approved" if to == "ready_to_resume" else "rejected"
    if approval is None or approval.state != wanted:
        got = approval.state if approval else "none"
        raise _refuse(f"{move} needs the approval {wanted} (it is {got}); the approver decides it")


def _needs_verdict(state: TaskState, gate: str, move: str, *, approved: bool) -> None:
    review = state.latest_review(gate)
    ok = review is not None and ((review.verdict == "approved") == approved)
    if ok:
        return
    wanted = "an approved" if approved else "a changes_requested or blocked"
    got = f"the latest is {review.verdict}" if review else "none yet"
    raise _refuse(
        f"{move} needs {wanted} {gate} review recorded in this phase ({got}); reviewers use task_append_review"
    )


def _start_attempt(
    state: TaskState, *, now: datetime, policy: RetryPolicy, new_id: Callable[[], str], runtime: str | None, move: str
) -> dict[str, Any]:
    failed = state.failed_since_reset
    if not may_start_attempt(failed):
        raise _refuse(f"{move}: {failed} failed attempts since the last reset; no further attempt starts")
    if state.backoff_until is not None and now < _at(state.backoff_until):
        raise _refuse(f"{move}: the policy backs off until {state.backoff_until}; move then")
    previous = state.current_attempt
    if state.phase == "retrying" and previous is not None:
        escalate = policy.decide(failed).escalate
        if runtime is not None and runtime != previous.runtime and not escalate:
            raise _refuse(
                f"the policy retries on the same runtime ({previous.runtime}) until the third attempt; "
                "omit runtime or give that one",
                "runtime",
            )
        runtime = runtime or previous.runtime
    number = state.attempt_count + 1
    return {"attempt": {"attemptId": new_id(), "number": number, "runtime": runtime or DEFAULT_RUNTIME}}


def _after_attempt(state: TaskState, to: str, *, now: datetime, policy: RetryPolicy, move: str) -> dict[str, Any]:
    attempt = state.current_attempt
    if attempt is None:
        raise _refuse(f"{move} needs an attempt; none has started")
    data: dict[str, Any] = {}
    failed = state.failed_since_reset
    if attempt.status == "running":
        silent = (now - _at(attempt.heartbeat_at or attempt.started_at)).total_seconds()
        if to == "spec_gate" or silent < policy.stale_after_s:
            raise _refuse(
                f"{move}: attempt {attempt.number} is still running (last heard of {round(silent)} s ago); "
                f"the executor reports with task_finish_attempt (a silent attempt may be superseded after "
                f"{policy.stale_after_s:g} s)"
            )
        data["superseded"] = {"attemptId": attempt.attempt_id, "reason": f"no heartbeat for {round(silent)} s"}
        failed += 1
    elif to == "spec_gate" and attempt.status != "succeeded":
        raise _refuse(f"{move} needs attempt {attempt.number} to have succeeded (it {attempt.status})")
    elif to != "spec_gate" and attempt.status != "failed":
        raise _refuse(f"{move} needs attempt {attempt.number} to have failed (it {attempt.status})")
    if to == "spec_gate":
        return data
    decision = policy.decide(failed)
    data["decision"] = decision.as_dict()
    if to == "retrying" and decision.action != "retry":
        raise _refuse(
            f"{move}: {failed} failed attempts since the last reset; the policy allows no more "
            f"than {MAX_FAILED_ATTEMPTS}: move to circuit_open"
        )
    if to == "circuit_open" and decision.action != "open_circuit":
        raise _refuse(
            f"{move}: the policy retries after failure {failed} of {MAX_FAILED_ATTEMPTS}: move to retrying; "
            "the circuit opens only when retries are exhausted"
        )
    if to == "retrying":
        data["backoffUntil"] = (now + timedelta(seconds=decision.backoff_s)).isoformat()
    else:
        data["circuitReason"] = "attempts"
    return data


def _after_mismatch(state: TaskState, to: str, move: str) -> dict[str, Any]:
    reworks = state.reworks_since_reset
    verdict = spec_mismatch(reworks)
    if to == "execution_ready" and verdict != "rework":
        raise _refuse(
            f"{move}: {reworks} rework loops from spec_gate since the last reset; "
            "another mismatch opens the circuit: move to circuit_open"
        )
    if to == "circuit_open" and verdict != "open_circuit":
        raise _refuse(
            f"{move}: the circuit opens on a mismatch only after {MAX_SPEC_REWORKS} rework loops "
            f"({reworks} so far): move to execution_ready to rework"
        )
    return {"circuitReason": "spec-mismatch"} if to == "circuit_open" else {}


def _request_approval(
    state: TaskState, move: str, reason: str | None, details: dict[str, Any] | None, new_id: Callable[[], str]
) -> dict[str, Any]:
    left = state.open_side_effects()
    if not left:
        raise _refuse(f"{move} needs a planned side effect to approve (none is planned); move to completed")
    context = {
        "taskId": state.task_id,
        "title": state.title,
        "goal": state.spec.get("goal"),
        "reason": reason,
        "sideEffects": [
            {"effectId": e.effect_id, "step": e.step, "idempotencyKey": e.idempotency_key, "payload": e.payload}
            for e in left
        ],
        "details": details or {},
    }
    return {"approvalId": new_id(), "context": context}

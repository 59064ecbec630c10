"""A task's state, and the event log that rebuilds it.

Every change to a protocol task appends one TaskEvent (seq 1, 2, ... without gaps) in the
transaction that makes the change; its ``data`` holds what the change decided (ids, the
policy's decision, the spec and its problems ...). :func:`apply` is the one function that turns
a state and an event into the next state: the store computes each change with it, and
:func:`replay` folds a whole log with it. What the store keeps on the nodes,
:meth:`TaskState.from_node`, must equal ``replay(events)``.

``version`` counts the orchestrator's decisions (creation, spec updates, transitions): a
heartbeat or a review does not make an orchestrator's expected version stale. ``seq`` counts
every event.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .phases import STATUS_OF_PHASE

EVENT_TYPES: tuple[str, ...] = (
    "created",
    "spec_updated",
    "transition",
    "heartbeat",
    "attempt_finished",
    "artifact_added",
    "review_appended",
    "approval_decided",
    "side_effect_planned",
    "side_effect_done",
    "external_ref_set",
    "produced_linked",
)


def dumps(value: Any) -> str:
    """JSON text as the store keeps it (keys sorted, so equal values store equal text)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _loads(text: object, default: Any) -> Any:
    return json.loads(text) if isinstance(text, str) else copy.deepcopy(default)


@dataclass
class Attempt:
    attempt_id: str
    number: int
    runtime: str
    status: str  # running | succeeded | failed | superseded
    started_at: str
    heartbeat_at: str | None = None
    checkpoint: dict[str, Any] | None = None
    ended_at: str | None = None
    failure_reason: str | None = None
    external_refs: dict[str, str] = field(default_factory=dict)  # non-authoritative: where the attempt ran

    def properties(self, task_id: str) -> dict[str, Any]:
        return {
            "attemptId": self.attempt_id,
            "taskId": task_id,
            "number": self.number,
            "runtime": self.runtime,
            "status": self.status,
            "startedAt": self.started_at,
            "heartbeatAt": self.heartbeat_at,
            "checkpoint": dumps(self.checkpoint) if self.checkpoint is not None else None,
            "endedAt": self.ended_at,
            "failureReason": self.failure_reason,
            "externalRefs": dumps(self.external_refs),
        }

    @classmethod
    def from_properties(cls, p: Mapping[str, Any]) -> Attempt:
        return cls(
            p["attemptId"],
            int(p["number"]),
            p["runtime"],
            p["status"],
            p["startedAt"],
            p.get("heartbeatAt"),
            _loads(p.get("checkpoint"), None),
            p.get("endedAt"),
            p.get("failureReason"),
            _loads(p.get("externalRefs"), {}),
        )


@dataclass
class Artifact:
    artifact_id: str
    attempt_id: str
    name: str
    ref: str
    kind: str
    digest: str | None
    seq: int
    good: bool = False  # its attempt succeeded

    def properties(self, task_id: str) -> dict[str, Any]:
        return {
            "artifactId": self.artifact_id,
            "taskId": task_id,
            "attemptId": self.attempt_id,
            "name": self.name,
            "ref": self.ref,
            "kind": self.kind,
            "digest": self.digest,
            "seq": self.seq,
            "good": self.good,
        }

    @classmethod
    def from_properties(cls, p: Mapping[str, Any]) -> Artifact:
        return cls(
            p["artifactId"], p["attemptId"], p["name"], p["ref"], p["kind"], p.get("digest"), int(p["seq"]), p["good"]
        )


@dataclass
class Review:
    review_id: str
    gate: str  # spec_review | spec_gate | quality_gate
    role: str
    actor: str
    verdict: str  # approved | changes_requested | blocked
    findings: list[dict[str, Any]]
    refs: list[str]
    attempt_id: str | None
    seq: int
    at: str

    def properties(self, task_id: str) -> dict[str, Any]:
        return {
            "reviewId": self.review_id,
            "taskId": task_id,
            "gate": self.gate,
            "role": self.role,
            "actor": self.actor,
            "verdict": self.verdict,
            "findings": dumps(self.findings),
            "refs": list(self.refs),
            "attemptId": self.attempt_id,
            "seq": self.seq,
            "at": self.at,
        }

    @classmethod
    def from_properties(cls, p: Mapping[str, Any]) -> Review:
        return cls(
            p["reviewId"],
            p["gate"],
            p["role"],
            p["actor"],
            p["verdict"],
            _loads(p.get("findings"), []),
            list(p.get("refs") or []),
            p.get("attemptId"),
            int(p["seq"]),
            p["at"],
        )


@dataclass
class Approval:
    approval_id: str
    state: str  # requested | approved | rejected
    context: dict[str, Any]
    requested_at: str
    decided_by: str | None = None
    decided_at: str | None = None
    note: str | None = None

    def properties(self, task_id: str) -> dict[str, Any]:
        return {
            "approvalId": self.approval_id,
            "taskId": task_id,
            "state": self.state,
            "context": dumps(self.context),
            "requestedAt": self.requested_at,
            "decidedBy": self.decided_by,
            "decidedAt": self.decided_at,
            "note": self.note,
        }

    @classmethod
    def from_properties(cls, p: Mapping[str, Any]) -> Approval:
        return cls(
            p["approvalId"],
            p["state"],
            _loads(p.get("context"), {}),
            p["requestedAt"],
            p.get("decidedBy"),
            p.get("decidedAt"),
            p.get("note"),
        )


@dataclass
class SideEffect:
    effect_id: str
    attempt_id: str
    step: str
    payload: dict[str, Any]
    idempotency_key: str
    planned_at: str
    state: str = "planned"  # planned | done
    done_at: str | None = None
    result: dict[str, Any] | None = None

    def properties(self, task_id: str) -> dict[str, Any]:
        return {
            "effectId": self.effect_id,
            "taskId": task_id,
            "attemptId": self.attempt_id,
            "step": self.step,
            "payload": dumps(self.payload),
            "idempotencyKey": self.idempotency_key,
            "plannedAt": self.planned_at,
            "state": self.state,
            "doneAt": self.done_at,
            "result": dumps(self.result) if self.result is not None else None,
        }

    @classmethod
    def from_properties(cls, p: Mapping[str, Any]) -> SideEffect:
        return cls(
            p["effectId"],
            p["attemptId"],
            p["step"],
            _loads(p.get("payload"), {}),
            p["idempotencyKey"],
            p["plannedAt"],
            p["state"],
            p.get("doneAt"),
            _loads(p.get("result"), None),
        )


_SPEC_PROPS = {
    "goal": "spec_goal",
    "scope_in": "spec_scopeIn",
    "scope_out": "spec_scopeOut",
    "inputs": "spec_inputs",
    "outputs": "spec_outputs",
    "acceptance_criteria": "spec_acceptanceCriteria",
    "risks": "spec_risks",
}


@dataclass
class TaskState:
    """Everything the store knows about one protocol task (what the events rebuild)."""

    task_id: str
    kind: str
    title: str
    priority: int
    phase: str
    version: int
    seq: int
    started_at: str
    spec: dict[str, Any]
    spec_problems: list[str]  # "field: reason"; none: the spec is complete
    external_ref: dict[str, str] = field(default_factory=dict)
    attempt_count: int = 0
    failed_attempts: int = 0  # failed or superseded attempts, ever
    failed_at_reset: int = 0  # failed_attempts when the circuit was last reset
    spec_reworks: int = 0  # spec_gate -> execution_ready loops, ever
    reworks_at_reset: int = 0
    current_attempt_id: str | None = None
    current_approval_id: str | None = None
    backoff_until: str | None = None
    circuit_opened_at: str | None = None
    circuit_reason: str | None = None  # attempts | spec-mismatch
    last_good_artifact_id: str | None = None
    review_from_seq: int = 0  # reviews after this event count for the current phase
    completed_at: str | None = None
    attempts: dict[str, Attempt] = field(default_factory=dict)
    artifacts: dict[str, Artifact] = field(default_factory=dict)
    reviews: dict[str, Review] = field(default_factory=dict)
    approvals: dict[str, Approval] = field(default_factory=dict)
    side_effects: dict[str, SideEffect] = field(default_factory=dict)
    produced: list[str] = field(default_factory=list)  # what task_link_produced linked (PRODUCED edges)

    # -- derived -----------------------------------------------------------------------
    @property
    def status(self) -> str:
        return STATUS_OF_PHASE[self.phase]

    @property
    def spec_complete(self) -> bool:
        return not self.spec_problems

    @property
    def failed_since_reset(self) -> int:
        return self.failed_attempts - self.failed_at_reset

    @property
    def reworks_since_reset(self) -> int:
        return self.spec_reworks - self.reworks_at_reset

    @property
    def current_attempt(self) -> Attempt | None:
        return self.attempts.get(self.current_attempt_id) if self.current_attempt_id else None

    def latest_review(self, gate: str) -> Review | None:
        """The newest review of ``gate`` recorded since the current phase began (or the spec last changed)."""
        fresh = [r for r in self.reviews.values() if r.gate == gate and r.seq > self.review_from_seq]
        return max(fresh, key=lambda r: r.seq) if fresh else None

    def open_side_effects(self) -> list[SideEffect]:
        return sorted((e for e in self.side_effects.values() if e.state != "done"), key=lambda e: e.planned_at)

    # -- the Task node -----------------------------------------------------------------
    def task_properties(self) -> dict[str, Any]:
        """The Task node's properties (None: the property is absent)."""
        props: dict[str, Any] = {
            "taskId": self.task_id,
            "kind": self.kind,
            "title": self.title,
            "priority": self.priority,
            "status": self.status,
            "protocol": True,
            "phase": self.phase,
            "version": self.version,
            "seq": self.seq,
            "startedAt": self.started_at,
            "completedAt": self.completed_at,
            "specJson": dumps(self.spec),
            "specComplete": self.spec_complete,
            "specProblems": list(self.spec_problems),
            "externalRef": dumps(self.external_ref),
            "attempts": self.attempt_count,
            "failedAttempts": self.failed_attempts,
            "failedAtReset": self.failed_at_reset,
            "specReworks": self.spec_reworks,
            "specReworksAtReset": self.reworks_at_reset,
            "currentAttemptId": self.current_attempt_id,
            "currentApprovalId": self.current_approval_id,
            "backoffUntil": self.backoff_until,
            "circuitOpenedAt": self.circuit_opened_at,
            "circuitReason": self.circuit_reason,
            "lastGoodArtifactId": self.last_good_artifact_id,
            "reviewFromSeq": self.review_from_seq,
            "producedIds": list(self.produced),
            "producedCount": len(self.produced),
        }
        for name, prop in _SPEC_PROPS.items():
            props[prop] = self.spec.get(name)
        return props

    @classmethod
    def from_node(
        cls,
        task: Mapping[str, Any],
        *,
        attempts: Iterable[Mapping[str, Any]] = (),
        artifacts: Iterable[Mapping[str, Any]] = (),
        reviews: Iterable[Mapping[str, Any]] = (),
        approvals: Iterable[Mapping[str, Any]] = (),
        side_effects: Iterable[Mapping[str, Any]] = (),
    ) -> TaskState:
        """The state as stored: the Task node's properties and its related nodes'."""
        a = [Attempt.from_properties(p) for p in attempts]
        art = [Artifact.from_properties(p) for p in artifacts]
        rev = [Review.from_properties(p) for p in reviews]
        app = [Approval.from_properties(p) for p in approvals]
        eff = [SideEffect.from_properties(p) for p in side_effects]
        return cls(
            task_id=task["taskId"],
            kind=task["kind"],
            title=task["title"],
            priority=int(task["priority"]),
            phase=task["phase"],
            version=int(task["version"]),
            seq=int(task["seq"]),
            started_at=task["startedAt"],
            spec=_loads(task.get("specJson"), {}),
            spec_problems=list(task.get("specProblems") or []),
            external_ref=_loads(task.get("externalRef"), {}),
            attempt_count=int(task.get("attempts") or 0),
            failed_attempts=int(task.get("failedAttempts") or 0),
            failed_at_reset=int(task.get("failedAtReset") or 0),
            spec_reworks=int(task.get("specReworks") or 0),
            reworks_at_reset=int(task.get("specReworksAtReset") or 0),
            current_attempt_id=task.get("currentAttemptId"),
            current_approval_id=task.get("currentApprovalId"),
            backoff_until=task.get("backoffUntil"),
            circuit_opened_at=task.get("circuitOpenedAt"),
            circuit_reason=task.get("circuitReason"),
            last_good_artifact_id=task.get("lastGoodArtifactId"),
            review_from_seq=int(task.get("reviewFromSeq") or 0),
            completed_at=task.get("completedAt"),
            attempts={x.attempt_id: x for x in sorted(a, key=lambda x: x.number)},
            artifacts={x.artifact_id: x for x in sorted(art, key=lambda x: x.seq)},
            reviews={x.review_id: x for x in sorted(rev, key=lambda x: x.seq)},
            approvals={x.approval_id: x for x in sorted(app, key=lambda x: x.requested_at)},
            side_effects={x.effect_id: x for x in sorted(eff, key=lambda x: x.planned_at)},
            produced=list(task.get("producedIds") or []),
        )


# -- events -------------------------------------------------------------------------------
def event_data(event: Mapping[str, Any]) -> dict[str, Any]:
    data = event.get("data")
    return json.loads(data) if isinstance(data, str) else dict(data or {})


def _created(_: TaskState | None, e: Mapping[str, Any], d: dict[str, Any]) -> TaskState:
    return TaskState(
        task_id=d["taskId"],
        kind=d["kind"],
        title=d["title"],
        priority=int(d["priority"]),
        phase="spec_draft",
        version=1,
        seq=1,
        started_at=e["at"],
        spec=dict(d["spec"]),
        spec_problems=list(d["specProblems"]),
        external_ref=dict(d.get("externalRef") or {}),
    )


def _spec_updated(s: TaskState, e: Mapping[str, Any], d: dict[str, Any]) -> TaskState:
    s.spec, s.spec_problems = dict(d["spec"]), list(d["specProblems"])
    s.version += 1
    s.review_from_seq = int(e["seq"])  # reviews of the old spec no longer count
    return s


def _transition(s: TaskState, e: Mapping[str, Any], d: dict[str, Any]) -> TaskState:
    at, frm, to = e["at"], e["fromPhase"], e["toPhase"]
    superseded = d.get("superseded")
    if superseded:
        old = s.attempts[superseded["attemptId"]]
        old.status, old.ended_at, old.failure_reason = "superseded", at, superseded["reason"]
        s.failed_attempts += 1
    started = d.get("attempt")
    if started:
        s.attempts[started["attemptId"]] = Attempt(
            started["attemptId"], int(started["number"]), started["runtime"], "running", at, heartbeat_at=at
        )
        s.attempt_count += 1
        s.current_attempt_id = started["attemptId"]
        s.backoff_until = None
    if "backoffUntil" in d:
        s.backoff_until = d["backoffUntil"]
    if frm == "spec_gate" and to == "execution_ready":
        s.spec_reworks += 1
    if to == "circuit_open":
        s.circuit_opened_at, s.circuit_reason = at, d["circuitReason"]
    if frm == "circuit_open":
        s.circuit_opened_at, s.circuit_reason = None, None
        if to == "spec_draft":  # a reset: the counters stay, the policy counts from here
            s.failed_at_reset, s.reworks_at_reset = s.failed_attempts, s.spec_reworks
    approval = d.get("approval")
    if approval:
        s.approvals[approval["approvalId"]] = Approval(approval["approvalId"], "requested", approval["context"], at)
        s.current_approval_id = approval["approvalId"]
    if to in ("completed", "failed"):
        s.completed_at = at
    s.phase = to
    s.version += 1
    s.review_from_seq = int(e["seq"])
    return s


def _heartbeat(s: TaskState, e: Mapping[str, Any], d: dict[str, Any]) -> TaskState:
    attempt = s.attempts[d["attemptId"]]
    attempt.heartbeat_at = e["at"]
    if d.get("checkpoint") is not None:
        attempt.checkpoint = d["checkpoint"]
    return s


def _attempt_finished(s: TaskState, e: Mapping[str, Any], d: dict[str, Any]) -> TaskState:
    attempt = s.attempts[d["attemptId"]]
    attempt.status, attempt.ended_at = d["outcome"], e["at"]
    attempt.failure_reason = d.get("reason") if d["outcome"] == "failed" else None
    if d["outcome"] == "failed":
        s.failed_attempts += 1
    else:
        own = [a for a in s.artifacts.values() if a.attempt_id == attempt.attempt_id]
        for artifact in own:
            artifact.good = True
        if own:
            s.last_good_artifact_id = max(own, key=lambda a: a.seq).artifact_id
    return s


def _artifact_added(s: TaskState, e: Mapping[str, Any], d: dict[str, Any]) -> TaskState:
    s.artifacts[d["artifactId"]] = Artifact(
        d["artifactId"], d["attemptId"], d["name"], d["ref"], d["kind"], d.get("digest"), int(e["seq"])
    )
    return s


def _review_appended(s: TaskState, e: Mapping[str, Any], d: dict[str, Any]) -> TaskState:
    s.reviews[d["reviewId"]] = Review(
        d["reviewId"],
        d["gate"],
        e["actorRole"],
        e["actor"],
        d["verdict"],
        list(d["findings"]),
        list(d["refs"]),
        d.get("attemptId"),
        int(e["seq"]),
        e["at"],
    )
    return s


def _approval_decided(s: TaskState, e: Mapping[str, Any], d: dict[str, Any]) -> TaskState:
    approval = s.approvals[d["approvalId"]]
    approval.state, approval.decided_by, approval.decided_at = d["decision"], e["actor"], e["at"]
    approval.note = d.get("note")
    return s


def _side_effect_planned(s: TaskState, e: Mapping[str, Any], d: dict[str, Any]) -> TaskState:
    s.side_effects[d["effectId"]] = SideEffect(
        d["effectId"], d["attemptId"], d["step"], dict(d["payload"]), d["idempotencyKey"], e["at"]
    )
    return s


def _side_effect_done(s: TaskState, e: Mapping[str, Any], d: dict[str, Any]) -> TaskState:
    effect = s.side_effects[d["effectId"]]
    effect.state, effect.done_at, effect.result = "done", e["at"], d.get("result")
    return s


def _external_ref_set(s: TaskState, _: Mapping[str, Any], d: dict[str, Any]) -> TaskState:
    s.attempts[d["attemptId"]].external_refs[d["system"]] = d["ref"]
    return s


def _produced_linked(s: TaskState, _: Mapping[str, Any], d: dict[str, Any]) -> TaskState:
    s.produced = sorted(set(s.produced) | set(d["nodeIds"]))
    return s


_APPLY: dict[str, Callable[[Any, Mapping[str, Any], dict[str, Any]], TaskState]] = {
    "created": _created,
    "spec_updated": _spec_updated,
    "transition": _transition,
    "heartbeat": _heartbeat,
    "attempt_finished": _attempt_finished,
    "artifact_added": _artifact_added,
    "review_appended": _review_appended,
    "approval_decided": _approval_decided,
    "side_effect_planned": _side_effect_planned,
    "side_effect_done": _side_effect_done,
    "external_ref_set": _external_ref_set,
    "produced_linked": _produced_linked,
}


class ReplayError(ValueError):
    """An event log that no sequence of store changes could have written."""


def apply(state: TaskState | None, event: Mapping[str, Any]) -> TaskState:
    """The state after ``event`` (``state`` is left as it was)."""
    kind = event.get("type")
    if kind not in _APPLY:
        raise ReplayError(f"unknown event type {kind!r}")
    expected = 1 if state is None else state.seq + 1
    if event.get("seq") != expected:
        raise ReplayError(f"event seq {event.get('seq')!r} where {expected} was next")
    if (state is None) != (kind == "created"):
        raise ReplayError("a log starts with one created event and has no other")
    if state is not None and event.get("fromPhase") != state.phase:
        raise ReplayError(f"event {expected} starts from {event.get('fromPhase')!r}, the task was in {state.phase!r}")
    after = _APPLY[kind](copy.deepcopy(state), event, event_data(event))
    after.seq = expected
    if event.get("version") != after.version or event.get("toPhase") != after.phase:
        raise ReplayError(f"event {expected} records version/phase other than the change makes")
    return after


def replay(events: Iterable[Mapping[str, Any]]) -> TaskState:
    """The state a task's whole event log (in seq order) rebuilds."""
    state: TaskState | None = None
    for event in events:
        state = apply(state, event)
    if state is None:
        raise ReplayError("an empty event log rebuilds no task")
    return state

"""The task store: the one write path for protocol tasks.

Each change runs the same way: read the task through the caller's guards, check the role
(:mod:`.roles`) and the rule (:mod:`.transitions`, the checks below), compute the next state
with :func:`.events.apply`, then commit in one transaction through the write primitive:
its ``before_write`` hook takes the task's write lock first, compares what it read (phase,
version and the event seq) with what is stored now, and sets the Task's fields; the primitive
then writes the event and the records the change touches (attempts, reviews, ...), each
confined to the caller's view. A transition whose expected phase or version is no longer
current is a :class:`TaskConflict` and writes nothing; any other change that lost a race reads
the task again and re-checks (a few times).

The Task's own fields are set in the locked transaction rather than rewritten through the
primitive: its embedded text (the title) never changes after creation, so its vector stays.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import re
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ParamSpec, TypeVar

import neo4j

from ..accounts import ValidatedAccount
from ..db import Database
from ..embeddings.base import Embedder
from ..errors import GraphWriteError, MaxyError, ValidationError
from ..graph.allowlist import TASK_STORE
from ..graph.confine import not_writable, record_scope
from ..graph.guards import Caller
from ..graph.nodes import readable_node_ids
from ..graph.write import Edge, GraphWriter, NodeSpec
from ..logs import log_line, short
from ..provenance.tasks import DEFAULT_PRIORITY, KIND_RE, PRIORITY_NAMES
from . import queries
from .events import TaskState, apply, dumps, event_data
from .phases import SPEC_EDIT_PHASES, TRANSITIONS, check_phase
from .policy import MAX_FAILED_ATTEMPTS, RetryPolicy
from .roles import check_role, check_role_name
from .spec import check_spec, normalize_spec
from .transitions import plan_transition

MAX_TITLE = 500
MAX_TEXT = 2_000
MAX_JSON = 20_000  # characters of a checkpoint, payload, result, approval context
MAX_ITEMS = 100  # findings, refs
MAX_PRODUCED = 500
MAX_PRODUCED_TOTAL = 5_000
MAX_LIST = 500
MAX_TRIES = 12  # reads and re-checks of a change that lost a race to another change of the task
RETRY_PAUSE_S = 0.02  # doubled after each lost race (jittered, at most half a second)
OUTCOMES = ("succeeded", "failed")
GATES = ("spec_review", "spec_gate", "quality_gate")
VERDICTS = ("approved", "changes_requested", "blocked")
DECISIONS = ("approved", "rejected")
SEVERITIES = ("info", "low", "medium", "high", "critical")
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9:._-]{0,127}$")
_ACTOR_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._@:/-]{0,127}$")
_SLUG_RE = KIND_RE  # runtimes, steps, systems, artifact kinds: lower-case slugs

P = ParamSpec("P")
R = TypeVar("R")


class TaskConflict(ValidationError):
    """The task moved on since the caller read it: nothing was written."""

    def __init__(self, expected: str, phase: str, version: int):
        super().__init__(
            "expectedVersion",
            f"the task is in {phase} at version {version}, not {expected}; nothing was written: "
            "read it again (task_get) and decide from there",
        )
        self.phase, self.version = phase, version


class _Stale(Exception):
    """Another change of the task committed between the read and the lock: read again."""


@dataclass
class _Loaded:
    state: TaskState
    scope: str | None
    agents: list[str] | None
    created_at: str | None
    updated_at: str | None


@dataclass
class _Change:
    type: str
    data: dict[str, Any]
    to: str | None = None  # the phase a transition moves to
    touches: list[tuple[str, str]] = field(default_factory=list)  # (entity kind, id) records to write
    produced: list[str] = field(default_factory=list)  # PRODUCED edges to add


def _refusals(op: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Log one ``[task-store] <op> refused`` line for a refused call (its successes log their own)."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return fn(*args, **kwargs)
            except MaxyError as err:
                store = args[0]
                assert isinstance(store, TaskStore)
                task = args[1] if len(args) > 1 and isinstance(args[1], str) else kwargs.get("task_id")
                log_line(
                    "task-store",
                    op,
                    "refused" if isinstance(err, (ValidationError, GraphWriteError)) else "failed",
                    taskId=short(task) if isinstance(task, str) else "none",
                    role=store.role or "none",
                    field=getattr(err, "field", None) or type(err).__name__,
                )
                raise

        return run

    return wrap


def _text(value: object, name: str, *, limit: int = MAX_TEXT, required: bool = True) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(name, "text is required" if required else "text, or omit it")
    if len(value) > limit:
        raise ValidationError(name, f"at most {limit} characters")
    return value.strip()


def _slug(value: object, name: str, example: str) -> str:
    if not isinstance(value, str) or not _SLUG_RE.match(value):
        raise ValidationError(name, f"a lower-case slug such as {example} (got {value!r})")
    return value


def _json_object(value: object, name: str, *, required: bool = False) -> dict[str, Any] | None:
    if value is None and not required:
        return None
    if not isinstance(value, dict):
        raise ValidationError(name, "a JSON object" + ("" if required else ", or omit it"))
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise ValidationError(name, f"must be JSON (strings, numbers, booleans, lists, objects): {err}") from None
    if len(text) > MAX_JSON:
        raise ValidationError(name, f"at most {MAX_JSON} characters as JSON")
    loaded: dict[str, Any] = json.loads(text)  # what is stored, so the answer shows the same
    return loaded


def _whole(value: object, name: str, *, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValidationError(name, f"a whole number >= {least} (got {value!r})")
    return value


def _priority(value: object) -> int:
    if value is None:
        return DEFAULT_PRIORITY
    if isinstance(value, str) and value.strip().lower() in PRIORITY_NAMES:
        return PRIORITY_NAMES[value.strip().lower()]
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 5:
        return value
    raise ValidationError("priority", f"1 (highest) to 5, or one of {', '.join(PRIORITY_NAMES)} (got {value!r})")


def _string_map(value: object, name: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or len(value) > 20:
        raise ValidationError(name, "an object of at most 20 system -> reference texts, or omit it")
    return {_slug(k, f"{name}.<system>", "acp"): str(_text(v, f"{name}.{k}")) for k, v in value.items()}


def _findings(value: object) -> list[dict[str, Any]]:
    if not isinstance(value, list) or len(value) > MAX_ITEMS:
        raise ValidationError("findings", f"a list of at most {MAX_ITEMS} objects {{text, ref?, severity?}}")
    out = []
    for i, item in enumerate(value):
        where = f"findings[{i}]"
        if not isinstance(item, dict) or set(item) - {"text", "ref", "severity"}:
            raise ValidationError(where, "an object with text, and optionally ref and severity")
        finding: dict[str, Any] = {"text": _text(item.get("text"), f"{where}.text")}
        if item.get("ref") is not None:
            finding["ref"] = _text(item["ref"], f"{where}.ref")
        if item.get("severity") is not None:
            if item["severity"] not in SEVERITIES:
                raise ValidationError(f"{where}.severity", f"one of {', '.join(SEVERITIES)} (got {item['severity']!r})")
            finding["severity"] = item["severity"]
        out.append(finding)
    return out


def _refs(value: object) -> list[str]:
    if not isinstance(value, list) or len(value) > MAX_ITEMS:
        raise ValidationError("refs", f"a list of at most {MAX_ITEMS} artifact ids or file references")
    return [str(_text(v, f"refs[{i}]")) for i, v in enumerate(value)]


def idempotency_key(task_id: str, step: str) -> str:
    """The key a planned side effect keeps for its whole life: one per task and step."""
    return hashlib.sha256(f"{task_id}\x1f{step}".encode()).hexdigest()[:32]


class TaskStore:
    """Protocol tasks of one account, read and changed as ``role`` (None: reads only) by ``actor``,
    inside ``caller``'s view. ``embedder`` embeds a new task's title (without one, ``maxy reindex``
    embeds it later). ``community``: the store keeps the community's tasks (a negotiation's), which
    every other store answers for as absent ones; what it creates is a community record."""

    def __init__(
        self,
        db: Database,
        caller: Caller,
        account: ValidatedAccount,
        role: str | None,
        actor: str = "agent",
        *,
        policy: RetryPolicy | None = None,
        clock: Callable[[], datetime] | None = None,
        embedder: Embedder | None = None,
        community: bool = False,
    ):
        if caller.account_id != account.account_id:
            raise ValidationError("accountId", "the caller and the validated account differ; nothing is served")
        if not isinstance(actor, str) or not _ACTOR_RE.match(actor):
            raise ValidationError("actor", f"a name of at most 128 letters, digits or ' ._@:/-' (got {actor!r})")
        self.db = db
        self.caller = caller
        self.role = check_role_name(role)
        self.actor = actor
        self.policy = policy or RetryPolicy()
        self._clock = clock or (lambda: datetime.now(UTC))
        self.community = community  # keeps a negotiation's task: its records are the community's
        self._writer = GraphWriter(
            db,
            account,
            embedder,
            caller=caller,
            created_by=f"task-store:{self.role or 'reader'}",
            owner=TASK_STORE,
            community=community,
        )

    # -- creating and specifying ---------------------------------------------------------
    @_refusals("create")
    def create(
        self,
        spec: dict[str, Any],
        *,
        title: str | None = None,
        kind: str = "protocol",
        priority: int | str | None = None,
        external_ref: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """A new task in spec_draft, its spec stored with its problems."""
        check_role(self.role, "task_create")
        normalized = normalize_spec(spec)
        problems = [str(p) for p in check_spec(normalized)]
        kind_ = _slug(kind, "kind", "protocol")
        goal = normalized.get("goal") or ""
        title_ = _text(title, "title", limit=MAX_TITLE, required=False) or (goal[:120] or kind_)
        task_id = str(uuid.uuid4())
        data = {
            "taskId": task_id,
            "kind": kind_,
            "title": title_,
            "priority": _priority(priority),
            "spec": normalized,
            "specProblems": problems,
            "externalRef": _string_map(external_ref, "externalRef"),
        }
        event = self._event(None, "created", data, to="spec_draft")
        state = apply(None, event)
        scope = record_scope(self.caller)
        task = NodeSpec([queries.TASK], _present(state.task_properties()), node_id=task_id, scope=scope)
        self._writer.commit(self._writer.prepare([task, self._event_spec(event, task_id, scope, None)]))
        self._log("create", state, kind=kind_, complete=state.spec_complete)
        return {
            "taskId": task_id,
            "phase": state.phase,
            "version": state.version,
            "specComplete": state.spec_complete,
            "specProblems": _problems(state),
        }

    @_refusals("update-spec")
    def update_spec(self, task_id: str, spec: dict[str, Any], *, expected_version: int) -> dict[str, Any]:
        """Replace the spec (spec_draft or spec_review only); it is checked again."""
        check_role(self.role, "task_update_spec")
        normalized = normalize_spec(spec)
        problems = [str(p) for p in check_spec(normalized)]
        expected = _whole(expected_version, "expectedVersion", least=1)

        def build(state: TaskState) -> _Change:
            if state.version != expected:
                raise TaskConflict(f"version {expected}", state.phase, state.version)
            if state.phase not in SPEC_EDIT_PHASES:
                hint = "; reset it first (task_transition to spec_draft)" if state.phase == "circuit_open" else ""
                raise ValidationError(
                    "spec",
                    f"the spec is replaced only in spec_draft or spec_review (the task is in {state.phase}){hint}",
                )
            return _Change("spec_updated", {"spec": normalized, "specProblems": problems})

        state, _ = self._change(task_id, build, expect_version=expected)
        self._log("update-spec", state, complete=state.spec_complete)
        return {
            "taskId": state.task_id,
            "phase": state.phase,
            "version": state.version,
            "specComplete": state.spec_complete,
            "specProblems": _problems(state),
        }

    # -- the orchestrator's moves ------------------------------------------------------
    @_refusals("transition")
    def transition(
        self,
        task_id: str,
        to: str,
        *,
        expected_phase: str,
        expected_version: int,
        reason: str | None = None,
        runtime: str | None = None,
        approval_context: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Move the task to ``to`` if it is still in ``expected_phase`` at ``expected_version``
        (else a TaskConflict) and the move's rule holds."""
        check_role(self.role, "task_transition")
        to_ = check_phase(to, "to")
        phase = check_phase(expected_phase, "expectedPhase")
        version = _whole(expected_version, "expectedVersion", least=1)
        reason_ = _text(reason, "reason", required=False)
        runtime_ = _slug(runtime, "runtime", "local or acp-codex") if runtime is not None else None
        context = _json_object(approval_context, "approvalContext")

        def build(state: TaskState) -> _Change:
            if (state.phase, state.version) != (phase, version):
                raise TaskConflict(f"{phase} at version {version}", state.phase, state.version)
            data = plan_transition(
                state,
                to_,
                now=self._now(),
                policy=self.policy,
                new_id=_new_id,
                runtime=runtime_,
                reason=reason_,
                approval_context=context,
            )
            touches = [("attempt", data[k]["attemptId"]) for k in ("superseded", "attempt") if k in data]
            if "approval" in data:
                touches.append(("approval", data["approval"]["approvalId"]))
            return _Change("transition", data, to=to_, touches=touches)

        state, change = self._change(task_id, build, expect_phase=phase, expect_version=version)
        data = change.data
        out: dict[str, Any] = {"taskId": state.task_id, "phase": state.phase, "version": state.version}
        if "attempt" in data:
            out["attemptId"] = data["attempt"]["attemptId"]
            out["runtime"] = data["attempt"]["runtime"]
        if "decision" in data:
            out["decision"] = data["decision"]
        if "backoffUntil" in data:
            out["backoffUntil"] = data["backoffUntil"]
        if "approval" in data:
            out["approvalId"] = data["approval"]["approvalId"]
        extra = {"attempt": short(out["attemptId"])} if "attemptId" in out else {}
        self._log("transition", state, **{"from": phase}, **extra)
        return out

    # -- the executor's records --------------------------------------------------------
    @_refusals("heartbeat")
    def heartbeat(self, task_id: str, attempt_id: str, checkpoint: dict[str, Any] | None = None) -> dict[str, Any]:
        """The running attempt is alive; ``checkpoint`` (if given) replaces its last one."""
        check_role(self.role, "task_heartbeat")
        checkpoint_ = _json_object(checkpoint, "checkpoint")

        def build(state: TaskState) -> _Change:
            _running(state, attempt_id, "a heartbeat")
            return _Change(
                "heartbeat", {"attemptId": attempt_id, "checkpoint": checkpoint_}, touches=[("attempt", attempt_id)]
            )

        state, _ = self._change(task_id, build)
        attempt = state.attempts[attempt_id]
        self._log("heartbeat", state, attempt=short(attempt_id), checkpoint=checkpoint_ is not None)
        return {
            "taskId": state.task_id,
            "attemptId": attempt_id,
            "heartbeatAt": attempt.heartbeat_at,
            "phase": state.phase,
            "version": state.version,
        }

    @_refusals("finish-attempt")
    def finish_attempt(self, task_id: str, attempt_id: str, outcome: str, reason: str | None = None) -> dict[str, Any]:
        """The running attempt ended: ``succeeded``, or ``failed`` with the reason."""
        check_role(self.role, "task_finish_attempt")
        if outcome not in OUTCOMES:
            raise ValidationError("outcome", f"one of {', '.join(OUTCOMES)} (got {outcome!r})")
        reason_ = _text(reason, "reason", required=outcome == "failed")

        def build(state: TaskState) -> _Change:
            _running(state, attempt_id, "task_finish_attempt")
            data = {"attemptId": attempt_id, "outcome": outcome, "reason": reason_}
            own = [("artifact", a.artifact_id) for a in state.artifacts.values() if a.attempt_id == attempt_id]
            return _Change("attempt_finished", data, touches=[("attempt", attempt_id), *own])

        state, _ = self._change(task_id, build)
        out: dict[str, Any] = {
            "taskId": state.task_id,
            "attemptId": attempt_id,
            "status": outcome,
            "phase": state.phase,
            "version": state.version,
            "failedAttempts": state.failed_attempts,
            "failedSinceReset": state.failed_since_reset,
        }
        if outcome == "failed":
            out["decision"] = self.policy.decide(state.failed_since_reset).as_dict()
        self._log("finish-attempt", state, attempt=short(attempt_id), outcome=outcome)
        return out

    @_refusals("add-artifact")
    def add_artifact(
        self, task_id: str, attempt_id: str, name: str, ref: str, kind: str = "file", digest: str | None = None
    ) -> dict[str, Any]:
        """Something the running attempt produced: ``ref`` is a path, URI or nodeId."""
        check_role(self.role, "task_add_artifact")
        name_ = str(_text(name, "name", limit=200))
        ref_ = str(_text(ref, "ref"))
        kind_ = _slug(kind, "kind", "file")
        digest_ = _text(digest, "digest", limit=200, required=False)
        artifact_id = _new_id()

        def build(state: TaskState) -> _Change:
            _running(state, attempt_id, "an artifact")
            data = {"artifactId": artifact_id, "attemptId": attempt_id, "name": name_, "ref": ref_, "kind": kind_}
            if digest_ is not None:
                data["digest"] = digest_
            return _Change("artifact_added", data, touches=[("artifact", artifact_id)])

        state, _ = self._change(task_id, build)
        self._log("add-artifact", state, attempt=short(attempt_id), artifact=short(artifact_id))
        return {"artifactId": artifact_id, "taskId": state.task_id, "attemptId": attempt_id}

    @_refusals("plan-side-effect")
    def plan_side_effect(self, task_id: str, step: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Declare a side effect before it happens; it runs only after an approval, by its key.
        Planning the same step with the same payload again answers the first plan."""
        check_role(self.role, "task_plan_side_effect")
        step_ = _slug(step, "step", "deploy or notify-team")
        payload_ = _json_object(payload, "payload", required=True) or {}
        effect_id = _new_id()

        def build(state: TaskState) -> _Change | dict[str, Any]:
            known = next((e for e in state.side_effects.values() if e.step == step_), None)
            if known is not None:
                if known.payload != payload_:
                    raise ValidationError(
                        "step", f"{step_} is already planned with another payload; plan the change under another step"
                    )
                return {"effectId": known.effect_id, "idempotencyKey": known.idempotency_key}
            if state.current_attempt_id is None:
                raise ValidationError("step", "side effects are planned by the running attempt; none has started")
            attempt = _running(state, state.current_attempt_id, "a side effect")
            data = {
                "effectId": effect_id,
                "attemptId": attempt,
                "step": step_,
                "payload": payload_,
                "idempotencyKey": idempotency_key(state.task_id, step_),
            }
            return _Change("side_effect_planned", data, touches=[("effect", effect_id)])

        state, change = self._change(task_id, build)
        if isinstance(change, dict):
            self._log("plan-side-effect", state, step=step_, planned="already")
            return {"taskId": state.task_id, "step": step_, "planned": False, **change}
        self._log("plan-side-effect", state, step=step_, planned="new")
        data = change.data
        return {
            "taskId": state.task_id,
            "step": step_,
            "planned": True,
            "effectId": data["effectId"],
            "idempotencyKey": data["idempotencyKey"],
        }

    @_refusals("set-external-ref")
    def set_external_ref(self, task_id: str, attempt_id: str, system: str, ref: str) -> dict[str, Any]:
        """Where an attempt runs outside (a harness session): a reference, never authority."""
        check_role(self.role, "task_set_external_ref")
        system_ = _slug(system, "system", "acp")
        ref_ = str(_text(ref, "ref"))

        def build(state: TaskState) -> _Change | dict[str, Any]:
            attempt = state.attempts.get(attempt_id) if isinstance(attempt_id, str) else None
            if attempt is None:
                raise ValidationError("attemptId", f"no attempt {attempt_id!r} of this task; task_get lists them")
            if attempt.external_refs.get(system_) == ref_:
                return {}
            data = {"attemptId": attempt_id, "system": system_, "ref": ref_}
            return _Change("external_ref_set", data, touches=[("attempt", attempt_id)])

        state, _ = self._change(task_id, build)
        self._log("set-external-ref", state, attempt=short(attempt_id), system=system_)
        return {
            "taskId": state.task_id,
            "attemptId": attempt_id,
            "externalRefs": state.attempts[attempt_id].external_refs,
        }

    # -- reviewers and the approver ------------------------------------------------------
    @_refusals("append-review")
    def append_review(
        self, task_id: str, gate: str, verdict: str, findings: list[dict[str, Any]], refs: list[str]
    ) -> dict[str, Any]:
        """A reviewer's verdict and findings at ``gate`` (evidence the orchestrator decides on)."""
        if gate not in GATES:
            raise ValidationError("gate", f"one of {', '.join(GATES)} (got {gate!r})")
        check_role(self.role, f"task_append_review:{gate}")
        if verdict not in VERDICTS:
            raise ValidationError("verdict", f"one of {', '.join(VERDICTS)} (got {verdict!r})")
        findings_ = _findings(findings)
        if verdict != "approved" and not findings_:
            raise ValidationError("findings", f"a {verdict} verdict says what must change: give at least one finding")
        refs_ = _refs(refs)
        review_id = _new_id()

        def build(state: TaskState) -> _Change:
            if state.phase != gate:
                raise ValidationError(
                    "gate", f"a {gate} review is recorded while the task is in {gate} (it is in {state.phase})"
                )
            data = {
                "reviewId": review_id,
                "gate": gate,
                "verdict": verdict,
                "findings": findings_,
                "refs": refs_,
                "attemptId": state.current_attempt_id if gate != "spec_review" else None,
            }
            return _Change("review_appended", data, touches=[("review", review_id)])

        state, _ = self._change(task_id, build)
        self._log("append-review", state, gate=gate, verdict=verdict, findings=len(findings_))
        return {"reviewId": review_id, "taskId": state.task_id, "gate": gate, "verdict": verdict}

    @_refusals("decide-approval")
    def decide_approval(self, task_id: str, approval_id: str, decision: str, note: str | None = None) -> dict[str, Any]:
        """Approve or reject the approval the task waits on (the same decision again changes nothing)."""
        check_role(self.role, "task_decide_approval")
        if decision not in DECISIONS:
            raise ValidationError("decision", f"one of {', '.join(DECISIONS)} (got {decision!r})")
        note_ = _text(note, "note", required=False)

        def build(state: TaskState) -> _Change | dict[str, Any]:
            approval = state.approvals.get(approval_id) if isinstance(approval_id, str) else None
            if approval is None:
                raise ValidationError("approvalId", f"no approval {approval_id!r} of this task; task_get lists them")
            if approval.state == decision:
                return {}
            if approval.state != "requested" or approval_id != state.current_approval_id:
                raise ValidationError("decision", f"this approval was already {approval.state}; it is decided once")
            if state.phase != "awaiting_approval":
                raise ValidationError("approvalId", f"the task is in {state.phase}, not awaiting_approval")
            data = {"approvalId": approval_id, "decision": decision, "note": note_}
            return _Change("approval_decided", data, touches=[("approval", approval_id)])

        state, _ = self._change(task_id, build)
        approval = state.approvals[approval_id]
        self._log("decide-approval", state, approval=short(approval_id), decision=approval.state)
        return {
            "taskId": state.task_id,
            "approvalId": approval_id,
            "state": approval.state,
            "decidedBy": approval.decided_by,
            "decidedAt": approval.decided_at,
        }

    @_refusals("resume")
    def resume(self, task_id: str, idempotency_key: str, result: dict[str, Any] | None = None) -> dict[str, Any]:
        """Record the approved side effect with this key as done (``replayed: true``); calling
        again with the same key answers the same effect with ``replayed: false`` and writes nothing."""
        check_role(self.role, "task_resume")
        if not isinstance(idempotency_key, str) or not idempotency_key.strip():
            raise ValidationError("idempotencyKey", "the key task_plan_side_effect returned")
        result_ = _json_object(result, "result")

        def build(state: TaskState) -> _Change | dict[str, Any]:
            effect = next((e for e in state.side_effects.values() if e.idempotency_key == idempotency_key), None)
            if effect is None:
                raise ValidationError("idempotencyKey", "no side effect of this task has this key; task_get lists them")
            if effect.state == "done":
                return {}
            if state.phase != "ready_to_resume":
                raise ValidationError(
                    "idempotencyKey",
                    f"side effects are replayed in ready_to_resume, once approved (the task is in {state.phase})",
                )
            return _Change(
                "side_effect_done",
                {"effectId": effect.effect_id, "result": result_},
                touches=[("effect", effect.effect_id)],
            )

        state, change = self._change(task_id, build)
        replayed = not isinstance(change, dict)
        effect = next(e for e in state.side_effects.values() if e.idempotency_key == idempotency_key)
        self._log("resume", state, step=effect.step, replayed=replayed)
        return {
            "replayed": replayed,
            "taskId": state.task_id,
            "effectId": effect.effect_id,
            "step": effect.step,
            "payload": effect.payload,
            "idempotencyKey": effect.idempotency_key,
            "doneAt": effect.done_at,
            "result": effect.result,
        }

    @_refusals("link-produced")
    def link_produced(self, task_id: str, node_ids: list[str]) -> dict[str, Any]:
        """Task -[:PRODUCED]-> each node (readable by the caller), once each."""
        check_role(self.role, "task_link_produced")
        if not isinstance(node_ids, list) or not node_ids or len(node_ids) > MAX_PRODUCED:
            raise ValidationError("nodeIds", f"a list of 1 to {MAX_PRODUCED} node ids")
        ids = list(dict.fromkeys(node_ids))
        for node_id in ids:
            if not isinstance(node_id, str) or not _ID_RE.match(node_id):
                raise not_writable(f"nodeIds[{node_ids.index(node_id)}]", node_id)
        found = readable_node_ids(self.db, self.caller, ids)
        missing = [n for n in ids if n not in found]
        if missing:
            raise not_writable(f"nodeIds[{node_ids.index(missing[0])}]", missing[0])

        def build(state: TaskState) -> _Change | dict[str, Any]:
            new = [n for n in ids if n not in state.produced]
            if len(state.produced) + len(new) > MAX_PRODUCED_TOTAL:
                raise ValidationError("nodeIds", f"a task records at most {MAX_PRODUCED_TOTAL} produced nodes")
            return _Change("produced_linked", {"nodeIds": new}, produced=new) if new else {}

        state, change = self._change(task_id, build)
        linked = change.data["nodeIds"] if isinstance(change, _Change) else []
        self._log("link-produced", state, new=len(linked), produced=len(state.produced))
        return {"taskId": state.task_id, "linked": linked, "producedCount": len(state.produced)}

    # -- reads -----------------------------------------------------------------------------
    @_refusals("get")
    def get(self, task_id: str) -> dict[str, Any]:
        """The whole task: header, phase, spec, attempts, reviews, artifacts, approvals, side
        effects, what it produced, the moves the table allows next, and when the circuit is open
        a ``circuit`` block (failure summary, attempts, last good artifact, unblock options)."""
        loaded = self._load(task_id)
        self._log("get", loaded.state)
        return _view(loaded)

    @_refusals("events")
    def events(self, task_id: str) -> list[dict[str, Any]]:
        """The task's event log in order, each with its ``data`` as an object."""
        _check_task_id(task_id)
        query, params = queries.task_events(self.caller, self.community)
        rows = self.db.read(query, id=task_id, **params)
        if not rows:
            raise _no_task(task_id)
        events = sorted((_event_view(p) for p in rows[0]["events"]), key=lambda e: e["seq"])
        log_line("task-store", "events", taskId=short(task_id), events=len(events), role=self.role or "none")
        return events

    # -- the change machinery --------------------------------------------------------------
    def _now(self) -> datetime:
        now = self._clock()
        return now if now.tzinfo else now.replace(tzinfo=UTC)

    def _load(self, task_id: str) -> _Loaded:
        _check_task_id(task_id)
        query, params = queries.load_task(self.caller, self.community)
        rows = self.db.read(query, id=task_id, **params)
        if not rows:
            raise _no_task(task_id)
        row = rows[0]
        task = dict(row["task"])
        state = TaskState.from_node(
            task,
            attempts=row["attempts"],
            artifacts=row["artifacts"],
            reviews=row["reviews"],
            approvals=row["approvals"],
            side_effects=row["effects"],
        )
        return _Loaded(state, task.get("scope"), task.get("agents"), task.get("createdAt"), task.get("updatedAt"))

    def _change(
        self,
        task_id: str,
        build: Callable[[TaskState], _Change | dict[str, Any]],
        *,
        expect_phase: str | None = None,
        expect_version: int | None = None,
    ) -> tuple[TaskState, Any]:
        """Read, check (``build``), and commit one change; a ``build`` answering a dict changes nothing."""
        for tries in range(MAX_TRIES):
            if tries:  # lost a race to another change: read again after a jittered pause
                time.sleep(random.uniform(0.5, 1.5) * min(RETRY_PAUSE_S * 2**tries, 0.5))
            loaded = self._load(task_id)
            change = build(loaded.state)
            if isinstance(change, dict):
                return loaded.state, change
            try:
                return self._commit(loaded, change, expect_phase, expect_version), change
            except _Stale:
                continue
        raise ValidationError("taskId", f"the task kept changing while this call ran ({MAX_TRIES} tries); call again")

    def _commit(
        self, loaded: _Loaded, change: _Change, expect_phase: str | None, expect_version: int | None
    ) -> TaskState:
        state = loaded.state
        task_id = state.task_id
        event = self._event(state, change.type, change.data, to=change.to)
        after = apply(state, event)
        before_props = state.task_properties()
        changed = {k: v for k, v in after.task_properties().items() if before_props.get(k) != v}
        scope, agents = self._record_visibility(loaded)
        specs = [self._event_spec(event, task_id, scope, agents)]
        specs += [self._entity_spec(kind, eid, after, state, scope, agents) for kind, eid in change.touches]
        prepared = self._writer.prepare(specs)
        lock_query, lock_params = queries.lock_task(self.caller, self.community)
        link_query, link_params = queries.link_produced(self.caller, self.community)

        def locked(tx: neo4j.ManagedTransaction) -> None:
            if tx.run(lock_query, id=task_id, **lock_params).single() is None:
                raise _no_task(task_id)
            now = tx.run(queries.READ_LOCKED, id=task_id).single()
            assert now is not None
            if expect_version is not None and (now["version"] != state.version or now["phase"] != state.phase):
                expected = (
                    f"{expect_phase} at version {expect_version}" if expect_phase else f"version {expect_version}"
                )
                raise TaskConflict(expected, now["phase"], now["version"])
            if now["seq"] != state.seq:
                raise _Stale()
            tx.run(queries.SET_TASK, id=task_id, props=changed, now=event["at"]).consume()
            if change.produced:
                linked = tx.run(link_query, id=task_id, ids=change.produced, **link_params).single()
                if linked is None or linked["n"] != len(change.produced):
                    raise not_writable("nodeIds", change.produced[0])

        self._writer.commit(prepared, before_write=locked)
        return after

    def _record_visibility(self, loaded: _Loaded) -> tuple[str | None, list[str] | None]:
        """A record's scope and agents: its task's, except where the caller's pins say otherwise
        (an unscoped task's records take the view's scope, a pinned agent tags them)."""
        scope, agents = loaded.scope, loaded.agents
        if self.caller.allowed_scopes is not None and scope not in self.caller.allowed_scopes:
            scope = None
        if self.caller.agent_slug is not None:
            agents = None
        return scope, agents

    def _event(self, state: TaskState | None, kind: str, data: dict[str, Any], *, to: str | None) -> dict[str, Any]:
        version = 1 if state is None else state.version + (1 if kind in ("spec_updated", "transition") else 0)
        return {
            "eventId": _new_id(),
            "seq": 1 if state is None else state.seq + 1,
            "type": kind,
            "actorRole": self.role,
            "actor": self.actor,
            "fromPhase": None if state is None else state.phase,
            "toPhase": to or (state.phase if state is not None else None),
            "version": version,
            "at": self._now().isoformat(),
            "data": {k: v for k, v in data.items() if v is not None},
        }

    def _event_spec(self, event: dict[str, Any], task_id: str, scope: str | None, agents: list[str] | None) -> NodeSpec:
        props = {**event, "taskId": task_id, "protocol": True, "data": dumps(event["data"])}
        edges = [Edge(queries.HAS_EVENT, task_id, "in")]
        return NodeSpec(
            [queries.EVENT], _present(props), edges=edges, node_id=event["eventId"], scope=scope, agents=agents
        )

    def _entity_spec(
        self,
        kind: str,
        entity_id: str,
        after: TaskState,
        before: TaskState,
        scope: str | None,
        agents: list[str] | None,
    ) -> NodeSpec:
        label, rel = queries.ENTITIES[kind]
        records: dict[str, Mapping[str, Any]] = {
            "attempt": after.attempts,
            "artifact": after.artifacts,
            "review": after.reviews,
            "approval": after.approvals,
            "effect": after.side_effects,
        }
        earlier: dict[str, Mapping[str, Any]] = {
            "attempt": before.attempts,
            "artifact": before.artifacts,
            "review": before.reviews,
            "approval": before.approvals,
            "effect": before.side_effects,
        }
        props = {**records[kind][entity_id].properties(after.task_id), "protocol": True}
        new = entity_id not in earlier[kind]
        edges = [Edge(rel, after.task_id, "in")] if new else []
        return NodeSpec([label], props, edges=edges, node_id=entity_id, scope=scope, agents=agents)

    def _log(self, op: str, state: TaskState, **extra: Any) -> None:
        log_line(
            "task-store",
            op,
            taskId=short(state.task_id),
            phase=state.phase,
            version=state.version,
            role=self.role or "none",
            **extra,
        )

    # The API names this method ``list``: it comes last, so the annotations above mean the builtin.
    @_refusals("list")
    def list(self, *, phase: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """The caller's protocol tasks, most recently changed first (optionally in one phase)."""
        phase_ = check_phase(phase, "phase") if phase is not None else None
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIST:
            raise ValidationError("limit", f"a whole number from 1 to {MAX_LIST} (got {limit!r})")
        query, params = queries.list_tasks(self.caller, self.community)
        rows = [r["task"] for r in self.db.read(query, phase=phase_, limit=limit, **params)]
        log_line("task-store", "list", phase=phase_ or "any", tasks=len(rows), role=self.role or "none")
        return rows


# -- helpers ---------------------------------------------------------------------------------
def _new_id() -> str:
    return str(uuid.uuid4())


def _present(props: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if v is not None}


def _check_task_id(task_id: object) -> None:
    if not isinstance(task_id, str) or not task_id.strip():
        raise ValidationError("taskId", "the taskId task_create returned")
    if not _ID_RE.match(task_id):
        raise _no_task(task_id)


def _no_task(task_id: object) -> ValidationError:
    """The one answer for a task that is absent, not a protocol task, or outside the caller's view."""
    return ValidationError("taskId", f"no task {task_id!r}; task_list shows the tasks you can see")


def _running(state: TaskState, attempt_id: str, what: str) -> str:
    """``attempt_id`` when it is the task's running attempt in executing, else a refusal."""
    attempt = state.attempts.get(attempt_id) if isinstance(attempt_id, str) else None
    if attempt is None:
        current = f"the current one is {state.current_attempt_id}" if state.current_attempt_id else "none has started"
        raise ValidationError("attemptId", f"no attempt {attempt_id!r} of this task ({current})")
    if attempt.attempt_id != state.current_attempt_id or attempt.status != "running" or state.phase != "executing":
        raise ValidationError(
            "attemptId",
            f"{what} belongs to the running attempt while the task is executing "
            f"(attempt {attempt.number} is {attempt.status}, the task is in {state.phase})",
        )
    return attempt.attempt_id


def _problems(state: TaskState) -> list[dict[str, str]]:
    out = []
    for text in state.spec_problems:
        name, _, reason = text.partition(": ")
        out.append({"field": name, "reason": reason})
    return out


def _event_view(props: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("eventId", "taskId", "seq", "type", "actorRole", "actor", "fromPhase", "toPhase", "version", "at")
    return {**{k: props.get(k) for k in keys}, "data": event_data(props)}


def _view(loaded: _Loaded) -> dict[str, Any]:
    s = loaded.state
    out: dict[str, Any] = {
        "taskId": s.task_id,
        "kind": s.kind,
        "title": s.title,
        "priority": s.priority,
        "status": s.status,
        "phase": s.phase,
        "version": s.version,
        "seq": s.seq,
        "nextPhases": list(TRANSITIONS[s.phase]),
        "createdAt": loaded.created_at,
        "updatedAt": loaded.updated_at,
        "startedAt": s.started_at,
        "completedAt": s.completed_at,
        "spec": s.spec,
        "specComplete": s.spec_complete,
        "specProblems": _problems(s),
        "externalRef": s.external_ref,
        "attemptCount": s.attempt_count,
        "failedAttempts": s.failed_attempts,
        "failedSinceReset": s.failed_since_reset,
        "specReworks": s.spec_reworks,
        "currentAttemptId": s.current_attempt_id,
        "backoffUntil": s.backoff_until,
        "circuitOpenedAt": s.circuit_opened_at,
        "lastGoodArtifactId": s.last_good_artifact_id,
        "currentApprovalId": s.current_approval_id,
        "attempts": [_attempt_view(a) for a in s.attempts.values()],
        "artifacts": [_artifact_view(a) for a in s.artifacts.values()],
        "reviews": [
            {
                "reviewId": r.review_id,
                "gate": r.gate,
                "role": r.role,
                "actor": r.actor,
                "verdict": r.verdict,
                "findings": r.findings,
                "refs": r.refs,
                "attemptId": r.attempt_id,
                "at": r.at,
            }
            for r in s.reviews.values()
        ],
        "approvals": [
            {
                "approvalId": a.approval_id,
                "state": a.state,
                "context": a.context,
                "requestedAt": a.requested_at,
                "decidedBy": a.decided_by,
                "decidedAt": a.decided_at,
                "note": a.note,
            }
            for a in s.approvals.values()
        ],
        "sideEffects": [
            {
                "effectId": e.effect_id,
                "step": e.step,
                "payload": e.payload,
                "idempotencyKey": e.idempotency_key,
                "state": e.state,
                "plannedAt": e.planned_at,
                "doneAt": e.done_at,
                "result": e.result,
            }
            for e in s.side_effects.values()
        ],
        "produced": s.produced,
    }
    if s.phase == "circuit_open":
        out["circuit"] = circuit_summary(s)
    return out


def _attempt_view(a: Any) -> dict[str, Any]:
    return {
        "attemptId": a.attempt_id,
        "number": a.number,
        "runtime": a.runtime,
        "status": a.status,
        "startedAt": a.started_at,
        "heartbeatAt": a.heartbeat_at,
        "checkpoint": a.checkpoint,
        "endedAt": a.ended_at,
        "failureReason": a.failure_reason,
        "externalRefs": a.external_refs,
    }


def _artifact_view(a: Any) -> dict[str, Any]:
    return {
        "artifactId": a.artifact_id,
        "attemptId": a.attempt_id,
        "name": a.name,
        "ref": a.ref,
        "kind": a.kind,
        "digest": a.digest,
        "good": a.good,
    }


def circuit_summary(s: TaskState) -> dict[str, Any]:
    """What an open circuit shows: why it opened, the attempts, the last good artifact, the way out."""
    if s.circuit_reason == "spec-mismatch":
        review = s.latest_review("spec_gate")
        found = "; ".join(f["text"] for f in (review.findings if review else [])[:3]) or "no findings recorded"
        summary = (
            f"the spec gate found a mismatch again after {s.reworks_since_reset} rework loops "
            f"({review.verdict if review else 'no verdict'}): {found}"
        )
    else:
        failed = [a for a in s.attempts.values() if a.status in ("failed", "superseded")]
        recent = failed[-s.failed_since_reset :] if s.failed_since_reset else failed
        reasons = "; ".join(f"attempt {a.number} on {a.runtime}: {a.failure_reason or a.status}" for a in recent)
        summary = f"{s.failed_since_reset} failed attempts since the last reset (the policy allows {MAX_FAILED_ATTEMPTS}): {reasons}"
    good = s.artifacts.get(s.last_good_artifact_id or "")
    return {
        "reason": s.circuit_reason,
        "openedAt": s.circuit_opened_at,
        "failureSummary": summary,
        "attempts": [_attempt_view(a) for a in s.attempts.values()],
        "lastGoodArtifact": _artifact_view(good) if good else None,
        "unblockOptions": [
            {
                "to": "spec_draft",
                "what": "reset: rework the spec (task_update_spec), review it again and run new attempts; "
                "the counters are kept and the policy counts failures from the reset",
            },
            {"to": "failed", "what": "give up: the task ends failed"},
        ],
    }

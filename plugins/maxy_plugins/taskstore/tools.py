"""The taskstore plugin's tools: protocol tasks through the platform's task store
(``maxy.taskstore.TaskStore``), one tool per operation.

Each call builds a store for the server's pins: its account and view (``ctx.caller``), and its
task role (``ctx.task_role``: TASK_ROLE on stdio, the key's ``taskRole`` over HTTP). The role
decides what may change (``maxy.taskstore.roles``); no argument names it. Reads work for every
role and for none; without a role every write is refused naming the way to get one. The store
checks each argument, writes the change and its event in one transaction and logs the
``[task-store]`` line; a tool only shapes the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired

from maxy.config import Settings
from maxy.plugins import OneOrMany, ToolContext, ToolError, ToolOutput, short, title_of, tool, tool_errors
from maxy.provenance.tasks import PRIORITY_NAMES
from maxy.taskstore import PHASES, RetryPolicy, TaskStore
from maxy.taskstore.store import DECISIONS, GATES, MAX_LIST, MAX_PRODUCED, OUTCOMES, SEVERITIES, VERDICTS
from pydantic import ConfigDict, Field
from typing_extensions import TypedDict  # pydantic reads typing.TypedDict only from Python 3.12

if TYPE_CHECKING:  # the enums are built from the task store's tables at run time
    Phase = str
    Gate = str
    Verdict = str
    Outcome = str
    Decision = str
    Severity = str
    PriorityName = str
else:
    Phase = Literal[PHASES]
    Gate = Literal[GATES]
    Verdict = Literal[VERDICTS]
    Outcome = Literal[OUTCOMES]
    Decision = Literal[DECISIONS]
    Severity = Literal[SEVERITIES]
    PriorityName = Literal[tuple(PRIORITY_NAMES)]

_ARG = ConfigDict(extra="forbid", field_title_generator=title_of)
Texts = list[Annotated[str, Field(max_length=1_000)]]


class SpecArg(TypedDict):
    """What the task is to do. Every field is needed before execution; a spec missing one is
    stored with its problems and the task stays in spec_draft."""

    __pydantic_config__ = _ARG  # type: ignore[misc]

    goal: NotRequired[Annotated[str, Field(description="What the task achieves, in a sentence or two.")]]
    scope_in: NotRequired[Annotated[Texts, Field(description="What is part of the task (at least one item).")]]
    scope_out: NotRequired[Annotated[Texts, Field(description="What is not part of it (may be empty).")]]
    inputs: NotRequired[Annotated[Texts, Field(description="What it starts from (may be empty).")]]
    outputs: NotRequired[Annotated[Texts, Field(description="What it delivers (at least one item).")]]
    acceptance_criteria: NotRequired[
        Annotated[
            Texts,
            Field(
                description="How a reviewer tells it is done: at least one, each checkable as written (four words "
                "or more naming a number, a comparison, a visible action such as returns or refuses, or an output)."
            ),
        ]
    ]
    risks: NotRequired[Annotated[Texts, Field(description="What could go wrong (may be empty, but given).")]]


class FindingArg(TypedDict):
    """One finding of a review."""

    __pydantic_config__ = _ARG  # type: ignore[misc]

    text: Annotated[str, Field(description="What was found.", max_length=2_000)]
    ref: NotRequired[Annotated[str, Field(description="Where: an artifact id or a file reference.", max_length=2_000)]]
    severity: NotRequired[Annotated[Severity, Field(description="How much it matters.")]]


TaskId = Annotated[str, Field(description="The taskId task_create returned.", max_length=128)]
AttemptId = Annotated[str, Field(description="The attemptId task_transition to executing returned.", max_length=128)]


# -- answers ----------------------------------------------------------------------------------
class SpecProblem(ToolOutput):
    field: str = Field(description="The spec field, e.g. acceptance_criteria[0].")
    reason: str


class Specified(ToolOutput):
    taskId: str
    phase: str
    version: int = Field(description="Pass it as expectedVersion to the next task_transition or task_update_spec.")
    specComplete: bool = Field(description="True when the spec has no problems (it may go to spec_review).")
    specProblems: list[SpecProblem] = Field(description="Why the spec is not complete yet (empty when it is).")


class PolicyDecision(ToolOutput):
    action: Literal["retry", "open_circuit"]
    backoffS: float = Field(description="Seconds to wait before the next attempt.")
    escalate: bool = Field(description="True when the next attempt may run on a stronger runtime.")


class Moved(ToolOutput):
    taskId: str
    phase: str = Field(description="The phase the task is in now.")
    version: int = Field(description="The task's version now: the next expectedVersion.")
    attemptId: str | None = Field(default=None, description="The attempt this move started (to executing).")
    runtime: str | None = Field(default=None, description="The runtime of that attempt.")
    decision: PolicyDecision | None = Field(default=None, description="The retry policy's decision (to retrying).")
    backoffUntil: str | None = Field(default=None, description="No attempt starts before this time.")
    approvalId: str | None = Field(default=None, description="The approval this move requested (awaiting_approval).")


class Beat(ToolOutput):
    taskId: str
    attemptId: str
    heartbeatAt: str
    phase: str
    version: int


class Finished(ToolOutput):
    taskId: str
    attemptId: str
    status: str = Field(description="How the attempt ended: succeeded or failed.")
    phase: str
    version: int
    failedAttempts: int = Field(description="Failed attempts in the task's whole life.")
    failedSinceReset: int = Field(
        description="Failed attempts since the circuit was last reset: what the policy counts."
    )
    decision: PolicyDecision | None = Field(default=None, description="What the policy decides after a failure.")


class ArtifactAdded(ToolOutput):
    artifactId: str = Field(description="Name it in a review's refs.")
    taskId: str
    attemptId: str


class Planned(ToolOutput):
    taskId: str
    step: str
    planned: bool = Field(description="False when the same step and payload were planned before (that plan answers).")
    effectId: str
    idempotencyKey: str = Field(description="The key task_resume replays the step by, once approved.")


class ExternalRefSet(ToolOutput):
    taskId: str
    attemptId: str
    externalRefs: dict[str, str] = Field(description="Every system -> reference the attempt carries.")


class Reviewed(ToolOutput):
    reviewId: str
    taskId: str
    gate: str
    verdict: str


class Decided(ToolOutput):
    taskId: str
    approvalId: str
    state: str = Field(description="approved or rejected.")
    decidedBy: str | None
    decidedAt: str | None


class Resumed(ToolOutput):
    replayed: bool = Field(description="True when this call recorded the step as done; false for a repeat.")
    taskId: str
    effectId: str
    step: str
    payload: dict[str, Any]
    idempotencyKey: str
    doneAt: str | None
    result: dict[str, Any] | None


class Linked(ToolOutput):
    taskId: str
    linked: list[str] = Field(description="The node ids linked by this call (already linked ones are left out).")
    producedCount: int = Field(description="How many nodes the task has produced in all.")


class TaskView(ToolOutput):
    taskId: str
    kind: str
    title: str
    phase: str
    version: int
    status: str = Field(description="The Task status the phase maps to (running, waiting, blocked, completed, failed).")
    nextPhases: list[str] = Field(description="The moves the phase table allows from here.")
    spec: dict[str, Any]
    specComplete: bool
    specProblems: list[SpecProblem]
    attempts: list[dict[str, Any]]
    artifacts: list[dict[str, Any]]
    reviews: list[dict[str, Any]]
    approvals: list[dict[str, Any]]
    sideEffects: list[dict[str, Any]]
    produced: list[str]
    circuit: dict[str, Any] | None = Field(
        default=None,
        description="When the circuit is open: failureSummary, attempts, lastGoodArtifact, unblockOptions.",
    )


class TaskList(ToolOutput):
    tasks: list[dict[str, Any]] = Field(description="The tasks, most recently changed first.")
    count: int


class EventLog(ToolOutput):
    taskId: str
    events: list[dict[str, Any]] = Field(description="Every event in seq order, each with its data.")


# -- the store for this call --------------------------------------------------------------------
def _store(ctx: ToolContext) -> TaskStore:
    if ctx.account is None:
        raise ToolError("ACCOUNT_ID was not validated at start: the task store is not available")
    return TaskStore(
        ctx.db,
        ctx.caller,
        ctx.account,
        ctx.task_role,
        actor=_actor(ctx),
        policy=retry_policy(ctx.settings),
        embedder=ctx.embedder,
    )


def retry_policy(settings: Settings) -> RetryPolicy:
    """The retry policy with the install's backoff (MAXY_TASK_BACKOFF_BASE_S, _CAP_S) where set."""
    knobs = {"base_s": settings.MAXY_TASK_BACKOFF_BASE_S, "cap_s": settings.MAXY_TASK_BACKOFF_CAP_S}
    return RetryPolicy(**{k: v for k, v in knobs.items() if v is not None})


def _actor(ctx: ToolContext) -> str:
    """Who acts, as the events record it: the pinned agent, else the server's conversation."""
    if ctx.caller.agent_slug:
        return f"agent:{ctx.caller.agent_slug}"
    if ctx.session_node_id:
        return f"session:{short(ctx.session_node_id)}"
    return "agent"


# -- the orchestrator ---------------------------------------------------------------------------
@tool(
    "task_create",
    description="""
Create a protocol task from its spec (orchestrator). The task starts in spec_draft; the spec is
stored with its problems (missing fields, acceptance criteria that cannot be checked as written)
and the task cannot go to spec_review until there are none. Returns {taskId, phase, version,
specComplete, specProblems}.
""",
    title="Create a protocol task",
    output=Specified,
)
@tool_errors
def task_create(
    ctx: ToolContext,
    spec: Annotated[SpecArg, Field(description="The spec: goal, scope, inputs, outputs, acceptance criteria, risks.")],
    title: Annotated[str | None, Field(description="A title people read (default: the goal).", max_length=500)] = None,
    kind: Annotated[
        str, Field(description="What kind of task: a lower-case slug (default protocol).", max_length=64)
    ] = "protocol",
    priority: Annotated[
        Annotated[int, Field(ge=1, le=5)] | PriorityName | None,
        Field(description="1 (highest) to 5, or urgent | high | normal | medium | low | someday (default normal)."),
    ] = None,
    externalRef: Annotated[
        dict[str, str] | None,
        Field(description="Where the task is tracked outside: system slug -> reference (never authoritative)."),
    ] = None,
) -> dict[str, Any]:
    return _store(ctx).create(dict(spec), title=title, kind=kind, priority=priority, external_ref=externalRef)


@tool(
    "task_update_spec",
    description="""
Replace the spec of a task in spec_draft or spec_review (orchestrator); it is checked again and
the version goes up. expectedVersion is the version you last read: if the task has changed since,
nothing is written.
""",
    title="Replace a task's spec",
    output=Specified,
    destructive=True,  # the spec is replaced
)
@tool_errors
def task_update_spec(
    ctx: ToolContext,
    taskId: TaskId,
    spec: Annotated[SpecArg, Field(description="The whole new spec (it replaces the old one).")],
    expectedVersion: Annotated[int, Field(description="The version you last read (task_get).", ge=1)],
) -> dict[str, Any]:
    return _store(ctx).update_spec(taskId, dict(spec), expected_version=expectedVersion)


@tool(
    "task_transition",
    description="""
Move a task to another phase (orchestrator only; reviewers and executors record evidence). The
move happens only if the task is still in expectedPhase at expectedVersion, else nothing is
written and the answer names where it is now. Each move has its rule: spec_review needs a
complete spec, executing starts a new attempt (not during backoff, never a fourth failed one),
spec_gate needs a succeeded attempt, retrying a failed one, quality_gate an approved spec_gate
review, completed an approved quality review and no planned side effect left, awaiting_approval
a planned side effect (it requests the approval, with approvalContext), ready_to_resume an
approved approval. task_get's nextPhases lists the moves from the current phase.
""",
    title="Move a task to another phase",
    output=Moved,
    destructive=True,  # the phase is overwritten
)
@tool_errors
def task_transition(
    ctx: ToolContext,
    taskId: TaskId,
    to: Annotated[Phase, Field(description="The phase to move to.")],
    expectedPhase: Annotated[Phase, Field(description="The phase you last read.")],
    expectedVersion: Annotated[int, Field(description="The version you last read.", ge=1)],
    reason: Annotated[str | None, Field(description="Why, kept in the event log.", max_length=2_000)] = None,
    runtime: Annotated[
        str | None,
        Field(
            description="To executing: where the attempt runs, a lower-case slug such as local or acp-codex.",
            max_length=64,
        ),
    ] = None,
    approvalContext: Annotated[
        dict[str, Any] | None,
        Field(description="To awaiting_approval: what the approver needs to decide (stored with the approval)."),
    ] = None,
) -> dict[str, Any]:
    return _store(ctx).transition(
        taskId,
        to,
        expected_phase=expectedPhase,
        expected_version=expectedVersion,
        reason=reason,
        runtime=runtime,
        approval_context=approvalContext,
    )


@tool(
    "task_link_produced",
    description="""
Record what a task produced (orchestrator): Task -[:PRODUCED]-> each node, once each. The nodes
must be ones this server can read. Calling it again links only the new ids.
""",
    title="Link what a task produced",
    output=Linked,
    idempotent=True,
)
@tool_errors
def task_link_produced(
    ctx: ToolContext,
    taskId: TaskId,
    nodeIds: Annotated[
        list[str], OneOrMany, Field(description=f"The produced nodes' ids (1 to {MAX_PRODUCED}).", min_length=1)
    ],
) -> dict[str, Any]:
    return _store(ctx).link_produced(taskId, list(nodeIds))


# -- the executor --------------------------------------------------------------------------------
@tool(
    "task_heartbeat",
    description="""
Report that the running attempt is alive (executor), with an optional checkpoint that replaces
the last one: what a resumed or superseding attempt starts from.
""",
    title="Report an attempt's progress",
    output=Beat,
    destructive=True,  # the checkpoint is replaced
)
@tool_errors
def task_heartbeat(
    ctx: ToolContext,
    taskId: TaskId,
    attemptId: AttemptId,
    checkpoint: Annotated[dict[str, Any] | None, Field(description="Where the attempt is (any JSON object).")] = None,
) -> dict[str, Any]:
    return _store(ctx).heartbeat(taskId, attemptId, checkpoint)


@tool(
    "task_finish_attempt",
    description="""
Report how the running attempt ended (executor): succeeded, or failed with the reason. The phase
does not change: the orchestrator moves on (spec_gate after a success; retrying, or
circuit_open when the policy says so, after a failure). A failure answers the policy's decision.
""",
    title="Finish an attempt",
    output=Finished,
    destructive=True,  # the attempt's status is overwritten
)
@tool_errors
def task_finish_attempt(
    ctx: ToolContext,
    taskId: TaskId,
    attemptId: AttemptId,
    outcome: Annotated[Outcome, Field(description="succeeded or failed.")],
    reason: Annotated[str | None, Field(description="Why it failed (required for failed).", max_length=2_000)] = None,
) -> dict[str, Any]:
    return _store(ctx).finish_attempt(taskId, attemptId, outcome, reason)


@tool(
    "task_add_artifact",
    description="""
Record something the running attempt produced (executor): a file path, URI or node id. Reviewers
name artifacts in their refs; the last good one is shown when the circuit opens.
""",
    title="Record an artifact",
    output=ArtifactAdded,
)
@tool_errors
def task_add_artifact(
    ctx: ToolContext,
    taskId: TaskId,
    attemptId: AttemptId,
    name: Annotated[str, Field(description="A name people read.", max_length=200)],
    ref: Annotated[str, Field(description="Where it is: a path, URI or node id.", max_length=2_000)],
    kind: Annotated[str, Field(description="A lower-case slug such as file, patch or report.", max_length=64)] = "file",
    digest: Annotated[str | None, Field(description="Its content digest, e.g. sha256:...", max_length=200)] = None,
) -> dict[str, Any]:
    return _store(ctx).add_artifact(taskId, attemptId, name, ref, kind, digest)


@tool(
    "task_plan_side_effect",
    description="""
Declare a side effect before it happens (executor, during the running attempt): a deployment, a
message, a write to another system. It runs only after an approval, replayed by its
idempotencyKey (task_resume). Planning the same step with the same payload again answers the
first plan; another payload under a planned step is refused.
""",
    title="Plan a side effect",
    output=Planned,
    idempotent=True,
)
@tool_errors
def task_plan_side_effect(
    ctx: ToolContext,
    taskId: TaskId,
    step: Annotated[str, Field(description="The step's name, a lower-case slug such as deploy.", max_length=64)],
    payload: Annotated[dict[str, Any], Field(description="Everything the step needs to run (any JSON object).")],
) -> dict[str, Any]:
    return _store(ctx).plan_side_effect(taskId, step, payload)


@tool(
    "task_set_external_ref",
    description="""
Record where an attempt runs outside Maxy (executor): a harness session, a job id. A reference
for people and tools, never the task's state.
""",
    title="Record an attempt's external reference",
    output=ExternalRefSet,
    destructive=True,  # the system's earlier reference is replaced
    idempotent=True,
)
@tool_errors
def task_set_external_ref(
    ctx: ToolContext,
    taskId: TaskId,
    attemptId: AttemptId,
    system: Annotated[str, Field(description="The system, a lower-case slug such as acp.", max_length=64)],
    ref: Annotated[str, Field(description="Its reference: a session id, URL or job id.", max_length=2_000)],
) -> dict[str, Any]:
    return _store(ctx).set_external_ref(taskId, attemptId, system, ref)


# -- reviewers and the approver --------------------------------------------------------------------
@tool(
    "task_append_review",
    description="""
Record a review at the gate the task is in: spec_review and spec_gate by the spec reviewer,
quality_gate by the quality reviewer. A review is evidence: the orchestrator decides the move.
changes_requested and blocked need at least one finding.
""",
    title="Record a review",
    output=Reviewed,
)
@tool_errors
def task_append_review(
    ctx: ToolContext,
    taskId: TaskId,
    gate: Annotated[Gate, Field(description="The gate reviewed: the phase the task is in.")],
    verdict: Annotated[Verdict, Field(description="approved, changes_requested or blocked.")],
    findings: Annotated[
        list[FindingArg] | None, Field(description="What was found (at least one unless approved).", max_length=100)
    ] = None,
    refs: Annotated[
        list[Annotated[str, Field(max_length=2_000)]] | None,
        Field(description="The artifact ids or file references reviewed.", max_length=100),
    ] = None,
) -> dict[str, Any]:
    return _store(ctx).append_review(taskId, gate, verdict, [dict(f) for f in findings or []], list(refs or []))


@tool(
    "task_decide_approval",
    description="""
Approve or reject the approval a task waits on (approver). The orchestrator then moves the task
to ready_to_resume (approved) or failed (rejected). The same decision again changes nothing.
""",
    title="Decide an approval",
    output=Decided,
    destructive=True,  # the approval's state is decided for good
    idempotent=True,
)
@tool_errors
def task_decide_approval(
    ctx: ToolContext,
    taskId: TaskId,
    approvalId: Annotated[str, Field(description="The approvalId task_get lists.", max_length=128)],
    decision: Annotated[Decision, Field(description="approved or rejected.")],
    note: Annotated[str | None, Field(description="Why, kept with the approval.", max_length=2_000)] = None,
) -> dict[str, Any]:
    return _store(ctx).decide_approval(taskId, approvalId, decision, note)


@tool(
    "task_resume",
    description="""
Replay an approved side effect by its idempotencyKey once the task is in ready_to_resume
(approver or orchestrator): the step is recorded as done with its result (replayed: true).
Calling it again with the same key writes nothing and answers the same step (replayed: false),
so an interrupted run can always call it again.
""",
    title="Replay an approved side effect",
    output=Resumed,
    destructive=True,  # the step is marked done for good
    idempotent=True,
)
@tool_errors
def task_resume(
    ctx: ToolContext,
    taskId: TaskId,
    idempotencyKey: Annotated[str, Field(description="The key task_plan_side_effect returned.", max_length=128)],
    result: Annotated[dict[str, Any] | None, Field(description="What the step returned (any JSON object).")] = None,
) -> dict[str, Any]:
    return _store(ctx).resume(taskId, idempotencyKey, result)


# -- reads -------------------------------------------------------------------------------------------
@tool(
    "task_get",
    description="""
Read a task: header, phase and version, nextPhases, spec and its problems, attempts, artifacts,
reviews, approvals, side effects and produced nodes; when the circuit is open, a circuit block
with the failure summary, the attempts, the last good artifact and the unblock options.
""",
    title="Read a protocol task",
    output=TaskView,
    read_only=True,
    idempotent=True,
)
@tool_errors
def task_get(ctx: ToolContext, taskId: TaskId) -> dict[str, Any]:
    return _store(ctx).get(taskId)


@tool(
    "task_list",
    description="The protocol tasks this server can see, most recently changed first, optionally in one phase.",
    title="List protocol tasks",
    output=TaskList,
    read_only=True,
    idempotent=True,
)
@tool_errors
def task_list(
    ctx: ToolContext,
    phase: Annotated[Phase | None, Field(description="Only tasks in this phase.")] = None,
    limit: Annotated[int, Field(description="At most this many tasks.", ge=1, le=MAX_LIST)] = 50,
) -> dict[str, Any]:
    tasks = _store(ctx).list(phase=phase, limit=limit)
    return {"tasks": tasks, "count": len(tasks)}


@tool(
    "task_events",
    description="A task's event log in seq order: every change, who made it (role and actor), and its data.",
    title="Read a task's event log",
    output=EventLog,
    read_only=True,
    idempotent=True,
)
@tool_errors
def task_events(ctx: ToolContext, taskId: TaskId) -> dict[str, Any]:
    return {"taskId": taskId, "events": _store(ctx).events(taskId)}

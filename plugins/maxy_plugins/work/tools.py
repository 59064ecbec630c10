"""The work plugin: provenance Tasks (``maxy.tasks``) for durable actions (work-create,
work-update, work-complete).

    (:Task {taskId, kind, title, status, priority, startedAt, completedAt, inputs_<field>...})
      -[:RAISED_DURING]->(:Conversation)       the conversation the action was raised in
      -[:PRODUCED]->(entity)                   every entity the action created

Inputs are stored as ``inputs_<field>`` properties (the graph's property names allow no dot)
after :func:`redact_secrets` has replaced every schema-tagged secret with ``"[redacted]"``:
nothing secret is ever written, logged or embedded. Each step emits one ``[task]`` line:
``[task] action-start|step|done kind=<kind> taskId=<8> ...``.

work-complete is idempotent: each produced node is linked once, ``producedCount`` is the number
of nodes linked, and a call that would change nothing writes nothing and answers as the first did.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from maxy.conversations import find_conversation
from maxy.conversations.store import MAX_SESSION_ID
from maxy.graph.confine import not_writable, record_scope
from maxy.graph.write import Edge, NodeSpec
from maxy.plugins import (
    OneOrMany,
    ToolContext,
    ToolError,
    ToolOutput,
    active_conversation,
    check_text,
    load_node,
    log_line,
    now_iso,
    readable_node_ids,
    require,
    short,
    tool,
    tool_errors,
    update_node,
)
from maxy.provenance import produced_ids
from maxy.provenance.tasks import DEFAULT_PRIORITY, DONE_STATUSES, KIND_RE, PRIORITY_NAMES, STATUSES
from maxy.secrets import redact_secrets
from pydantic import Field

MAX_INPUT_FIELDS = 60
MAX_PRODUCED = 500
MAX_NOTES = 50
MAX_TITLE = 500
MAX_STEP = 500
MAX_NOTE = 2_000
_FIELD_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,55}$")

if TYPE_CHECKING:  # the enums are built from maxy.provenance.tasks at run time
    OpenStatus = str
    DoneStatus = str
    PriorityName = str
else:
    OpenStatus = Literal[tuple(s for s in STATUSES if s not in DONE_STATUSES)]
    DoneStatus = Literal[DONE_STATUSES]
    PriorityName = Literal[tuple(PRIORITY_NAMES)]

TaskId = Annotated[str, Field(description="The taskId work-create returned.")]


class TaskStarted(ToolOutput):
    taskId: str = Field(description="Pass it as producedByTaskId to memory-write and to work-update / work-complete.")
    kind: str
    status: str
    raisedDuring: str | None = Field(description="The sessionId of the conversation it was raised in, if any.")


class TaskUpdated(ToolOutput):
    taskId: str
    status: str
    stepCount: int = Field(description="How many steps have been recorded.")


class TaskCompleted(ToolOutput):
    taskId: str
    status: str
    completedAt: str = Field(description="When the task finished (a repeat answers the first time).")
    produced: list[str] = Field(description="The producedNodeIds of this call.")
    producedCount: int = Field(description="How many nodes the task has produced in all.")


def _storable(value: Any) -> Any:
    """A property value: scalars and flat lists as they are, anything else as JSON text."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return list(value)
    if (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    ):
        return list(value)
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


def _input_properties(inputs: Mapping[str, Any]) -> dict[str, Any]:
    require(len(inputs) <= MAX_INPUT_FIELDS, "inputs", f"at most {MAX_INPUT_FIELDS} fields")
    props: dict[str, Any] = {}
    for key, value in inputs.items():
        require(
            isinstance(key, str) and bool(_FIELD_RE.match(key)),
            f"inputs.{key}",
            "field names are a letter then letters, digits or _ (at most 56)",
        )
        stored = _storable(value)
        if stored is not None:
            props[f"inputs_{key}"] = stored
    return props


def _priority(value: object) -> int:
    if isinstance(value, str):
        require(
            value.strip().lower() in PRIORITY_NAMES, "priority", f"1 (highest) to 5, or one of {sorted(PRIORITY_NAMES)}"
        )
        return PRIORITY_NAMES[value.strip().lower()]
    require(
        isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 5,
        "priority",
        "1 (highest) to 5, or urgent|high|normal|low|someday",
    )
    return int(value)  # type: ignore[call-overload]


def _task(ctx: ToolContext, task_id: object) -> dict[str, Any]:
    task = load_node(ctx, task_id, "Task", field="taskId")
    if task is None:
        raise not_writable("taskId", task_id, "Task")
    return task


def _ms_since(iso: object) -> int | None:
    try:
        return round((datetime.now(UTC) - datetime.fromisoformat(str(iso))).total_seconds() * 1000)
    except (TypeError, ValueError):
        return None


# ---------------------------------------------------------------------------------------
@tool(
    "work-create",
    description="""
Start a provenance Task for a durable action: kind (e.g. "cloudflare-tunnel-login"), title,
inputsProvided (the call-shape record), inputs + inputSchema (the form payload and its JSON
schema: fields tagged secret / format "password" are stored as "[redacted]"),
raisedDuringConversationKey (the sessionId of the conversation the action was raised in;
defaults to the active one), priority (1 highest .. 5, or urgent|high|normal|low). Returns
{"taskId"}: pass it as producedByTaskId to memory-write and to work-update / work-complete.
""",
    title="Start a task",
    output=TaskStarted,
)
@tool_errors
def work_create(
    ctx: ToolContext,
    kind: Annotated[
        str,
        Field(
            description="What kind of action: a lower-case slug, e.g. cloudflare-tunnel-login.",
            max_length=64,
            json_schema_extra={"pattern": KIND_RE.pattern},  # checked by the tool, with its own message
        ),
    ],
    title: Annotated[
        str | None, Field(description="A title people read (default: the kind).", max_length=MAX_TITLE)
    ] = None,
    inputsProvided: Annotated[
        dict[str, Any] | list[str] | None,
        Field(description="The call-shape record: which fields the action was given (an object or field names)."),
    ] = None,
    inputs: Annotated[
        dict[str, Any] | None,
        Field(
            description="The form payload; secrets tagged in inputSchema (and well-known secret names) are stored "
            'as "[redacted]".',
            max_length=MAX_INPUT_FIELDS,
        ),
    ] = None,
    inputSchema: Annotated[
        dict[str, Any] | None,
        Field(description="The JSON schema of inputs: fields with secret / x-secret / format password are redacted."),
    ] = None,
    raisedDuringConversationKey: Annotated[
        str | None,
        Field(
            description="The sessionId of the conversation the action was raised in (default: the active one).",
            max_length=MAX_SESSION_ID,
        ),
    ] = None,
    priority: Annotated[
        Annotated[int, Field(ge=1, le=5)] | PriorityName | None,
        Field(description="1 (highest) to 5, or urgent | high | normal | medium | low | someday (default normal)."),
    ] = None,
) -> dict[str, Any]:
    require(
        isinstance(kind, str) and bool(KIND_RE.match(kind)),
        "kind",
        "a lower-case slug such as cloudflare-tunnel-login",
    )
    title_ = check_text(title, "title", limit=MAX_TITLE, required=False) or kind
    require(inputs is None or isinstance(inputs, dict), "inputs", "an object of field names to values")
    require(inputSchema is None or isinstance(inputSchema, dict), "inputSchema", "a JSON schema object")
    require(
        inputsProvided is None or isinstance(inputsProvided, (dict, list)),
        "inputsProvided",
        "an object (or list of field names) recording the call shape",
    )
    safe_inputs = redact_secrets(inputs or {}, inputSchema)
    safe_provided = redact_secrets(inputsProvided, inputSchema) if inputsProvided is not None else None
    props: dict[str, Any] = {
        "kind": kind,
        "title": title_,
        "status": "running",
        "startedAt": now_iso(),
        "priority": _priority(priority) if priority is not None else DEFAULT_PRIORITY,
        **_input_properties(safe_inputs),
    }
    if safe_inputs:
        props["inputFields"] = sorted(safe_inputs)
    if safe_provided is not None:
        props["inputsProvided"] = json.dumps(safe_provided, ensure_ascii=False, default=str, sort_keys=True)
    w = ctx.writer()
    edges: list[Edge] = []
    if raisedDuringConversationKey is not None:
        key = check_text(raisedDuringConversationKey, "raisedDuringConversationKey", limit=256)
        conv = find_conversation(ctx.db, ctx.caller, key)
        if conv is None:
            raise ToolError(
                f"raisedDuringConversationKey: no Conversation with sessionId {key!r} in this account; nothing was written"
            )
    else:
        conv = active_conversation(ctx)
    if conv is not None:
        edges.append(Edge("RAISED_DURING", conv["nodeId"], "out"))
        props["conversationSessionId"] = conv.get("sessionId")
    task_id = str(uuid.uuid4())
    props["taskId"] = task_id
    props = {k: v for k, v in props.items() if v is not None}
    w.write(NodeSpec(["Task"], props, edges=edges, node_id=task_id, scope=record_scope(ctx.caller)))
    log_line(
        "task",
        "action-start",
        kind=kind,
        taskId=short(task_id),
        source="mcp",
        conversation=short(conv.get("sessionId")) if conv else "none",
        inputs=len(safe_inputs),
        redacted=sum(1 for v in _flatten(safe_inputs) if v == "[redacted]"),
    )
    return {
        "taskId": task_id,
        "kind": kind,
        "status": "running",
        "raisedDuring": conv.get("sessionId") if conv else None,
    }


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        return [x for v in value.values() for x in _flatten(v)]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flatten(v)]
    return [value]


@tool(
    "work-update",
    description="""
Record progress on a Task: status (pending|running|blocked|waiting), step (what is happening
now), note (free text kept with the task, at most 50). At least one is required.
""",
    title="Record task progress",
    output=TaskUpdated,
    destructive=True,  # status and the last step are overwritten
)
@tool_errors
def work_update(
    ctx: ToolContext,
    taskId: TaskId,
    status: Annotated[
        OpenStatus | None, Field(description="The task's status now (finish it with work-complete).")
    ] = None,
    step: Annotated[str | None, Field(description="What is happening now.", max_length=MAX_STEP)] = None,
    note: Annotated[
        str | None, Field(description="Free text kept with the task (the last 50 are kept).", max_length=MAX_NOTE)
    ] = None,
) -> dict[str, Any]:
    require(
        status is not None or step is not None or note is not None, "status", "give at least one of status, step, note"
    )
    if status is not None:
        require(status in STATUSES, "status", f"one of {', '.join(STATUSES)}")
        require(status not in DONE_STATUSES, "status", "use work-complete to finish a task")
    step_ = check_text(step, "step", limit=MAX_STEP, required=False)
    note_ = check_text(note, "note", limit=MAX_NOTE, required=False)
    ctx.writer()
    task = _task(ctx, taskId)
    props = task["properties"]
    changes: dict[str, Any] = {"lastUpdateAt": now_iso()}
    if status is not None:
        changes["status"] = status
    if step_ is not None:
        changes["lastStep"] = step_
        changes["stepCount"] = int(props.get("stepCount") or 0) + 1
    if note_ is not None:
        notes = list(props.get("notes") or [])
        changes["notes"] = (notes + [note_])[-MAX_NOTES:]
    update_node(ctx, task, changes)
    log_line(
        "task",
        "step",
        kind=props.get("kind"),
        taskId=short(task["nodeId"]),
        status=changes.get("status", props.get("status")),
        step=step_ or "-",
    )
    return {
        "taskId": task["nodeId"],
        "status": changes.get("status", props.get("status")),
        "stepCount": changes.get("stepCount", props.get("stepCount", 0)),
    }


@tool(
    "work-complete",
    description="""
Finish a Task: status completed (default), failed or cancelled; producedNodeIds: the nodeIds of
every entity the action created (each gets Task-[:PRODUCED]->entity once; same account only).
Calling it again with the same arguments changes nothing and answers the same; more
producedNodeIds are added to the ones already linked.
""",
    title="Finish a task",
    output=TaskCompleted,
    destructive=True,  # the status is overwritten
    idempotent=True,
)
@tool_errors
def work_complete(
    ctx: ToolContext,
    taskId: TaskId,
    status: Annotated[DoneStatus, Field(description="How it ended (default completed).")] = "completed",
    producedNodeIds: Annotated[
        list[str] | None,
        OneOrMany,
        Field(description=f"The node ids of every entity the action created (at most {MAX_PRODUCED})."),
    ] = None,
) -> dict[str, Any]:
    require(status in DONE_STATUSES, "status", f"one of {', '.join(DONE_STATUSES)}")
    if isinstance(producedNodeIds, str):
        producedNodeIds = [producedNodeIds]
    require(producedNodeIds is None or isinstance(producedNodeIds, list), "producedNodeIds", "a list of nodeIds")
    produced = list(dict.fromkeys(producedNodeIds or []))
    require(len(produced) <= MAX_PRODUCED, "producedNodeIds", f"at most {MAX_PRODUCED}")
    for i, pid in enumerate(produced):
        require(isinstance(pid, str) and bool(pid.strip()), f"producedNodeIds[{i}]", "a nodeId")
    ctx.writer()
    task = _task(ctx, taskId)
    if produced:
        found = readable_node_ids(ctx.db, ctx.caller, produced)
        missing = [p for p in produced if p not in found]
        if missing:
            raise not_writable(f"producedNodeIds[{produced.index(missing[0])}]", missing[0])
    props = task["properties"]
    started = time.perf_counter()
    linked = produced_ids(ctx.db, ctx.caller, task["nodeId"])
    new = [pid for pid in produced if pid not in linked]
    repeat = props.get("status") == status and props.get("completedAt") is not None
    completed_at = str(props["completedAt"]) if repeat else now_iso()
    count = len(linked) + len(new)
    if not (repeat and not new and props.get("producedCount") == count):
        update_node(
            ctx,
            task,
            {"status": status, "completedAt": completed_at, "producedCount": count},
            edges=[Edge("PRODUCED", pid, "out") for pid in new],
        )
    duration = _ms_since(props.get("startedAt"))
    log_line(
        "task",
        "done",
        kind=props.get("kind"),
        taskId=short(task["nodeId"]),
        status=status,
        produced=len(produced),
        new=len(new),
        ms=duration if duration is not None else round((time.perf_counter() - started) * 1000),
    )
    return {
        "taskId": task["nodeId"],
        "status": status,
        "completedAt": completed_at,
        "produced": produced,
        "producedCount": count,
    }

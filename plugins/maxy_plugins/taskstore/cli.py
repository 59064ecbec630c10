"""``maxy tasks list|show|events|transition``: the operator's view of protocol tasks, added
through the CLI hook (``register_commands``) like any plugin's commands.

The commands act as the ``operator`` task role (the orchestrator's rights and the approver's,
recorded as ``actorRole=operator``) for the validated ACCOUNT_ID, inside the view the
environment's pins give (ALLOWED_SCOPES, AGENT_SLUG), through the same store the tools use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import typer
from maxy.errors import ValidationError
from maxy.plugins import ToolContext, cli_context, emit_json, friendly, out, short
from maxy.taskstore import OPERATOR, PHASES, SPEC_FIELDS, TaskStore
from maxy.taskstore.store import MAX_LIST

from .tools import retry_policy

ACTOR = "cli"  # who acts, as the events record it beside actorRole=operator


def _phase(value: str | None) -> str | None:
    if value is not None and value not in PHASES:
        raise typer.BadParameter(f"{value!r} is not a phase: use one of {', '.join(PHASES)}")
    return value


def _store(ctx: ToolContext) -> TaskStore:
    assert ctx.account is not None  # cli_context validates ACCOUNT_ID
    return TaskStore(ctx.db, ctx.caller, ctx.account, OPERATOR, actor=ACTOR, policy=retry_policy(ctx.settings))


# The reads a refusal points to, as this command line spells them
_COMMANDS = {"task_list": "maxy tasks list", "task_get": "maxy tasks show"}


T = TypeVar("T")


def _with_store(operation: Callable[[TaskStore], T]) -> T:
    """Run ``operation`` on the operator's store; a refusal that names a read tool names the
    command that does the same here."""
    return _in_account(operation)[0]


def _in_account(operation: Callable[[TaskStore], T]) -> tuple[T, Any]:
    """:func:`_with_store`, and the account it ran in (for a summary line that names it)."""
    ctx = cli_context(plugin="taskstore")
    try:
        return operation(_store(ctx)), ctx.account
    except ValidationError as err:
        reason = err.reason
        for tool_name, command in _COMMANDS.items():
            reason = reason.replace(tool_name, command)
        raise ValidationError(err.field, reason) from None
    finally:
        ctx.db.close()


def _line(text: str) -> None:
    out.print(text, highlight=False, markup=False, soft_wrap=True)


def list_cmd(
    phase: str | None = typer.Option(None, "--phase", callback=_phase, help="Only tasks in this phase."),
    limit: int = typer.Option(50, "--limit", min=1, max=MAX_LIST, help="At most this many tasks."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """The protocol tasks of the account, most recently changed first."""
    tasks = _with_store(lambda store: store.list(phase=phase, limit=limit))
    if json_out:
        emit_json(tasks)
        return
    if not tasks:
        _line(f"(no protocol tasks{' in ' + phase if phase else ''})")
    for t in tasks:
        _line(f"{t['taskId']}  {t['phase']:<17} v{t['version']:<3} {t['status']:<9} {t.get('title') or '-'}")


def show_cmd(
    task_id: str = typer.Argument(..., metavar="TASK_ID", help="The task's id (maxy tasks list)."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """One task: phase and version, the moves allowed next, spec, attempts, reviews, approvals,
    side effects, and when the circuit is open why and how to unblock it."""
    task = _with_store(lambda store: store.get(task_id))
    if json_out:
        emit_json(task)
        return
    for line in render_task(task):
        _line(line)


def events_cmd(
    task_id: str = typer.Argument(..., metavar="TASK_ID", help="The task's id (maxy tasks list)."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """A task's event log in order: each change, who made it and what it decided."""
    events = _with_store(lambda store: store.events(task_id))
    if json_out:
        emit_json(events)
        return
    for e in events:
        moved = e["fromPhase"] not in (None, e["toPhase"])
        move = f"{e['fromPhase']} -> {e['toPhase']}" if moved else e["toPhase"]
        _line(
            f"{e['seq']:>3}  {e['at']}  {e['type']:<19} {e['actorRole'] or '-'}/{e['actor']}  {move}  v{e['version']}"
        )


def transition_cmd(
    task_id: str = typer.Argument(..., metavar="TASK_ID", help="The task's id (maxy tasks list)."),
    to: str = typer.Option(..., "--to", callback=_phase, help="The phase to move to."),
    expected_phase: str = typer.Option(
        ..., "--expected-phase", callback=_phase, help="The phase you last read (maxy tasks show)."
    ),
    expected_version: int = typer.Option(..., "--expected-version", min=1, help="The version you last read."),
    reason: str | None = typer.Option(None, "--reason", help="Why, kept in the event log."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Move a task to another phase as the operator, only if it is still in --expected-phase at
    --expected-version (else nothing is written); each move's rule applies as for the orchestrator."""
    moved, account = _in_account(
        lambda store: store.transition(
            task_id, to, expected_phase=expected_phase, expected_version=expected_version, reason=reason
        )
    )
    if json_out:
        emit_json(dict(moved, account=account.ref()))
        return
    extra = [f"{k} {moved[k]}" for k in ("attemptId", "approvalId", "backoffUntil") if moved.get(k)]
    _line(
        f"{short(moved['taskId'])}: {expected_phase} -> {moved['phase']} (version {moved['version']}) "
        f"in {account.label()}"
    )
    for item in extra:
        _line(f"  {item}")


def register_commands(app: typer.Typer) -> None:
    tasks_app = typer.Typer(
        no_args_is_help=True, help="Protocol tasks: list, show, read the event log, move a task to another phase."
    )
    app.add_typer(tasks_app, name="tasks")
    for name, command in (
        ("list", list_cmd),
        ("show", show_cmd),
        ("events", events_cmd),
        ("transition", transition_cmd),
    ):
        tasks_app.command(name)(friendly(command))


def render_task(task: dict[str, Any]) -> list[str]:
    """``maxy tasks show``'s text: a header, then one block per kind of record."""
    lines = [
        f"{task['taskId']}  {task['title']}",
        f"  kind {task['kind']}, priority {task['priority']}, phase {task['phase']} (version {task['version']}), "
        f"status {task['status']}",
        f"  next: {', '.join(task['nextPhases']) or '(none: finished)'}",
        f"  spec: {'complete' if task['specComplete'] else 'incomplete'}",
    ]
    spec = task.get("spec") or {}
    for name in (f for f in SPEC_FIELDS if f in spec):
        value = spec[name]
        lines.append(f"    {name}: {value if isinstance(value, str) else '; '.join(value) or '-'}")
    lines += [f"    problem: {p['field']}: {p['reason']}" for p in task.get("specProblems") or []]
    for a in task.get("attempts") or []:
        why = f" ({a['failureReason']})" if a.get("failureReason") else ""
        lines.append(f"  attempt {a['number']} {a['attemptId']} on {a['runtime']}: {a['status']}{why}")
        lines += [f"    {system}: {ref}" for system, ref in (a.get("externalRefs") or {}).items()]
    for a in task.get("artifacts") or []:
        lines.append(f"  artifact {a['artifactId']} {a['name']}: {a['ref']}{' (good)' if a.get('good') else ''}")
    for r in task.get("reviews") or []:
        lines.append(f"  review {r['gate']} by {r['role']}: {r['verdict']}")
        lines += [f"    - {f['text']}" for f in r.get("findings") or []]
    for a in task.get("approvals") or []:
        decided = f" by {a['decidedBy']}" if a.get("decidedBy") else ""
        lines.append(f"  approval {a['approvalId']}: {a['state']}{decided}")
    for e in task.get("sideEffects") or []:
        lines.append(f"  side effect {e['step']} ({e['idempotencyKey']}): {e['state']}")
    if task.get("produced"):
        lines.append(f"  produced: {', '.join(task['produced'])}")
    circuit = task.get("circuit")
    if circuit:
        lines.append(f"  circuit open since {circuit['openedAt']}: {circuit['failureSummary']}")
        good = circuit.get("lastGoodArtifact")
        lines.append(f"    last good artifact: {good['name'] + ' ' + good['ref'] if good else '(none)'}")
        lines += [f"    unblock: -> {o['to']}: {o['what']}" for o in circuit.get("unblockOptions") or []]
    return lines

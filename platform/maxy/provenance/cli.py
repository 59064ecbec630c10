"""``maxy audit produced|tasks|prune``: the provenance queries for operators and the audit trail's
retention (a feature module: ``register(app)``)."""

from __future__ import annotations

import typer

from ..console import emit_json, friendly, out
from ..db import Database
from ..errors import ConfigError
from ..graph.guards import Caller
from ..logs import short
from .queries import produced_by_conversation, tasks_by_kind


def _caller_and_db() -> tuple[Caller, Database]:
    from ..accounts import validate_account_id_env
    from ..config import load_settings

    settings = load_settings()
    account = validate_account_id_env(settings)  # as writers do: a deleted account is not readable
    return Caller.from_settings(settings, account.account_id), Database(settings)


# The commands, defined last: their options name the helpers above.
commands = typer.Typer()  # added to the main app by register()


audit_app = typer.Typer(
    no_args_is_help=True, help="Operator audit queries (what actions produced) and the ToolCall trail's retention."
)


@audit_app.command("produced")
@friendly
def produced_cmd(
    conversation: str = typer.Option(..., "--conversation", "-c", help="The conversation's sessionId."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """What entities did this conversation's actions produce?"""
    caller, db = _caller_and_db()
    with db:
        rows = produced_by_conversation(db, caller, conversation)
    if json_out:
        emit_json(rows)
        return
    if not rows:
        out.print("(nothing produced by this conversation)")
        return
    for r in rows:
        task = f"{r['kind']} {short(r['taskId'])} {r['status']}" if r["via"] == "task" else "direct"
        out.print(
            f"{','.join(r['labels'])}\t{r.get('name') or '-'}\t{r['nodeId']}\t{task}",
            highlight=False,
            markup=False,
        )


@audit_app.command("tasks")
@friendly
def tasks_cmd(
    kind: str = typer.Option(..., "--kind", "-k", help="Task kind, e.g. cloudflare-tunnel-login."),
    status: str | None = typer.Option(None, "--status", help="Only tasks with this status (e.g. completed)."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Tasks of one kind, newest first, with what each produced."""
    caller, db = _caller_and_db()
    with db:
        rows = tasks_by_kind(db, caller, kind, status=status)
    if json_out:
        emit_json(rows)
        return
    if not rows:
        out.print(f"(no {kind} tasks)")
        return
    for r in rows:
        produced = ", ".join(f"{','.join(e['labels'])}:{e.get('name') or e['nodeId']}" for e in r["produced"]) or "-"
        out.print(
            f"{r['taskId']}\t{r['status']}\t{r.get('completedAt') or r.get('startedAt') or '-'}\t{produced}",
            highlight=False,
            markup=False,
        )


@audit_app.command("prune")
@friendly
def prune_cmd(
    older_than: str = typer.Option(
        ...,
        "--older-than",
        help="Delete ToolCalls older than this: a whole number and m, h, d or w (12h, 30d, 2w).",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Count what would go; delete nothing."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Delete this account's audit ToolCalls (and their relationships) older than a duration, in batches."""
    from ..accounts import account_ref, ref_label
    from ..config import load_settings
    from ..mcp.audit_retention import parse_duration, prune_tool_calls

    age = parse_duration(older_than)  # a bad duration stops here, before any connection
    caller, db = _caller_and_db()
    if caller.pinned:
        raise ConfigError(
            "maxy audit prune: the audit trail belongs to the whole account; "
            "unset ALLOWED_SCOPES and AGENT_SLUG to prune it"
        )
    with db:
        result = prune_tool_calls(db, caller.account_id, age, dry_run=dry_run)
    ref = account_ref(load_settings().data_root, caller.account_id)
    if json_out:
        emit_json(dict(result, account=ref))
        return
    verb = "would delete" if dry_run else "deleted"
    out.print(
        f"{verb} {result['toolCalls']} ToolCall(s) of {ref_label(ref)} older than {result['olderThan']} "
        f"(created before {result['cutoff']}) and {result['relationships']} relationship(s)",
        markup=False,
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.add_typer(commands)
    app.add_typer(audit_app, name="audit")

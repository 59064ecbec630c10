"""``maxy conversation import|search|append`` (a feature module: ``register(app)``)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ..console import emit_json, friendly, out

# The commands, defined last: their options name the helpers above.
commands = typer.Typer()  # added to the main app by register()


conv_app = typer.Typer(no_args_is_help=True, help="Conversation memory: import, append and search messages.")


@conv_app.command("import")
@friendly
def import_(
    file: Path = typer.Argument(..., help="JSONL: conversation, session, id, speaker, role, content, timestamp"),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Write Conversation and Message nodes (with embeddings) for the current account."""
    from ..accounts import validate_account_id_env
    from ..config import load_settings
    from ..db import Database
    from ..embeddings import get_embedder
    from ..graph.guards import Caller
    from ..graph.write import GraphWriter
    from .importing import import_messages, read_messages

    settings = load_settings()
    account = validate_account_id_env(settings)
    messages = read_messages(file)
    caller = Caller.from_settings(settings, account.account_id)  # the pins of this process
    with Database(settings) as db:
        writer = GraphWriter(db, account, get_embedder(settings), caller=caller, created_by="import")
        summary = import_messages(writer, messages)
    if json_out:
        emit_json(dict(summary, account=account.ref()))
    else:
        out.print(
            f"imported {summary['messages']} message(s) in {summary['conversations']} conversation(s) into "
            f"{account.label()}, {summary['embedded']} embedded ({summary['ms']} ms)",
            markup=False,
            highlight=False,
        )


@conv_app.command("search")
@friendly
def search(
    query: str = typer.Argument(...),
    session: str = typer.Option(None, "--session", help="Only this session (conversation)."),
    limit: int = typer.Option(10, "--limit", "-n"),
    after: str = typer.Option(None, "--after", help="Only messages sent at or after this ISO 8601 instant."),
    before: str = typer.Option(None, "--before", help="Only messages sent before this ISO 8601 instant."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Search past messages (the same implementation as the conversation-search tool)."""
    from ..accounts import validate_account_id_env
    from ..config import load_settings
    from ..db import Database
    from ..embeddings import get_embedder
    from ..errors import ValidationError
    from ..graph.guards import Caller
    from .search import search_messages

    settings = load_settings()
    validated = validate_account_id_env(settings)  # a deleted account is not readable either
    if settings.SESSION_ID and session and session != settings.SESSION_ID:
        raise ValidationError("session", "SESSION_ID pins the session; --session cannot change it")
    with Database(settings) as db:
        rows = search_messages(
            db,
            Caller.from_settings(settings, validated.account_id),
            get_embedder(settings),
            query,
            session_id=session or settings.SESSION_ID,
            limit=limit,
            after=after,
            before=before,
        )
    if json_out:
        emit_json(rows)
        return
    if not rows:
        out.print("No results.")
    for i, r in enumerate(rows, start=1):
        out.print(
            f"{i:2}. {r['score']:.3f} [{r.get('sessionId') or '-'} {r.get('messageId')}] {r.get('timestamp') or ''} "
            f"{(r.get('content') or '')[:200]}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


@conv_app.command("append")
@friendly
def append(
    session: str = typer.Argument(..., help="The session (conversation) the turn belongs to."),
    text: str = typer.Argument("-", help="The turn's text; - (the default) reads it from stdin."),
    role: str = typer.Option("user", "--role", help="user, assistant or system."),
    speaker: str = typer.Option(None, "--speaker", help='Who said it: stored as "<speaker>: <text>".'),
    timestamp: str = typer.Option(None, "--timestamp", help="When it was said, ISO 8601 (default: now)."),
    message_id: str = typer.Option(None, "--message-id", help="The same id again updates that turn."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Store one turn of a conversation (the same implementation as the conversation-append tool)."""
    from ..accounts import validate_account_id_env
    from ..config import load_settings
    from ..db import Database
    from ..embeddings import get_embedder
    from ..errors import ValidationError
    from ..graph.guards import Caller
    from ..graph.write import GraphWriter
    from .append import append_turn

    settings = load_settings()
    account = validate_account_id_env(settings)
    if settings.SESSION_ID and session != settings.SESSION_ID:
        raise ValidationError("session", "SESSION_ID pins the session; SESSION cannot name another one")
    content = sys.stdin.read() if text == "-" else text
    caller = Caller.from_settings(settings, account.account_id)  # the pins of this process
    with Database(settings) as db:
        writer = GraphWriter(db, account, get_embedder(settings), caller=caller, created_by="cli")
        result = append_turn(
            writer,
            session,
            role=role,
            content=content,
            speaker=speaker,
            timestamp=timestamp,
            message_id=message_id,
        )
    if json_out:
        emit_json(dict(result, account=account.ref()))
        return
    conversation = result["conversationId"] or "none yet (created at the second turn)"
    out.print(
        f"{'appended' if result['created'] else 'updated'} turn {result['seq']} of {result['sessionId']} "
        f"in {account.label()} "
        f"(message {result['messageId']}, conversation {conversation}"
        f"{'' if result['embedded'] else ', not embedded: run maxy reindex'})",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    app.add_typer(commands)
    app.add_typer(conv_app, name="conversation")

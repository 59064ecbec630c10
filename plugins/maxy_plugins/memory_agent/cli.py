"""``maxy memory-agent ...``: a memory's entries and context from the command line, through
the same code as the plugin's tools, for ACCOUNT_ID inside the view the environment's pins give.

``memory_agent_app`` is the command group; other commands of the memory agent join it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import typer
from maxy.embeddings import get_embedder
from maxy.graph.write import GraphWriter
from maxy.memoryagent import add_entry, await_consistency, get_context, list_entries, put_context
from maxy.memoryagent.consistency import MAX_TIMEOUT_S
from maxy.memoryagent.entries import MAX_LIST
from maxy.plugins import ToolContext, cli_context, emit_json, friendly, out, short

from .run_command import run_cmd

memory_agent_app = typer.Typer(
    no_args_is_help=True,
    help="A conversation's durable memory: entries, context documents and the consistency barrier.",
)
T = TypeVar("T")
MEMORY = typer.Option(..., "--memory", "-m", help="The memory (1-128 letters, digits or . _ : @ -).")


@contextmanager
def _context() -> Iterator[ToolContext]:
    ctx = cli_context(plugin="memory-agent")
    try:
        yield ctx
    finally:
        ctx.db.close()


def _writing(operation: Callable[[GraphWriter], T]) -> T:
    with _context() as ctx:
        assert ctx.account is not None  # cli_context validates ACCOUNT_ID
        writer = GraphWriter(ctx.db, ctx.account, get_embedder(ctx.settings), caller=ctx.caller, created_by="cli")
        return operation(writer)


def _written(operation: Callable[[GraphWriter], dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """:func:`_writing` for a command that writes: its result with ``account`` ({id, name}) added,
    and the account as its summary line names it."""
    result, account = _writing(lambda w: (operation(w), w.account))
    return dict(result, account=account.ref()), account.label()


def _line(text: str) -> None:
    out.print(text, highlight=False, markup=False, soft_wrap=True)


def _text(value: str) -> str:
    return sys.stdin.read() if value == "-" else value


def entries_cmd(
    memory: str = MEMORY,
    limit: int = typer.Option(10, "--limit", "-n", min=1, max=MAX_LIST, help="At most this many entries."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """The memory's entries, most recent first."""
    with _context() as ctx:
        rows = list_entries(ctx.db, ctx.caller, memory, limit=limit)
    if json_out:
        emit_json(rows)
        return
    if not rows:
        _line(f"(no entries in memory {memory})")
    for r in rows:
        who = f" {r['role']}" if r["role"] else ""
        tags = f"  [{', '.join(r['tags'])}]" if r["tags"] else ""
        _line(f"{r['seq']:>4}  {r['createdAt']}{who}  {r['summary']}{tags}")


def context_cmd(memory: str = MEMORY, json_out: bool = typer.Option(False, "--json")) -> None:
    """The memory's latest context document."""
    with _context() as ctx:
        latest = get_context(ctx.db, ctx.caller, memory)
    if json_out:
        emit_json(latest)
        return
    if latest is None:
        _line(f"(no context for memory {memory} yet)")
        return
    _line(f"version {latest['version']}, {latest['createdAt']}")
    _line(latest["content"])


def add_entry_cmd(
    memory: str = MEMORY,
    summary: str = typer.Option(..., "--summary", help="The entry's standalone summary."),
    raw_entry: str = typer.Option("-", "--raw-entry", help="The message as written; - (the default) reads stdin."),
    tag: list[str] = typer.Option([], "--tag", help="A short label (repeatable)."),
    role: str = typer.Option(None, "--role", help="user, assistant or system."),
    session_id: str = typer.Option(None, "--session", help="The conversation session of the message."),
    message_id: str = typer.Option(None, "--message-id", help="The message's id: the same id updates its entry."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Record one message as an entry (the add_entry tool)."""
    raw = _text(raw_entry)
    result, where = _written(
        lambda w: add_entry(
            w, memory, summary=summary, raw_entry=raw, tags=tag, role=role, session_id=session_id, message_id=message_id
        )
    )
    if json_out:
        emit_json(result)
        return
    done = "added" if result["created"] else "updated"
    extra = "" if result["embedded"] else ", not embedded: maxy memory-agent barrier embeds it"
    _line(f"{done} entry {result['seq']} of {result['memory']} in {where} ({short(result['entryId'], 17)}{extra})")


def put_context_cmd(
    memory: str = MEMORY,
    content: str = typer.Option("-", "--content", help="The context document; - (the default) reads stdin."),
    session_id: str = typer.Option(None, "--session", help="The session it was written in."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Save a new version of the memory's context document (the put_context tool)."""
    text = _text(content)
    result, where = _written(lambda w: put_context(w, memory, text, session_id=session_id))
    if json_out:
        emit_json(result)
        return
    _line(f"saved context version {result['version']} of {result['memory']} in {where}")


def barrier_cmd(
    memory: str = MEMORY,
    timeout_s: float = typer.Option(10.0, "--timeout", min=0.001, max=MAX_TIMEOUT_S, help="Seconds to wait at most."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Wait until every entry of the memory is found by search (the await_consistency tool);
    exit code 1 when that did not happen in time."""
    result: dict[str, Any] = _writing(lambda w: await_consistency(w, memory, timeout_s=timeout_s))
    if json_out:
        emit_json(result)
    elif result["consistent"]:
        _line(f"consistent: {result['entries']} entries searchable ({result['waitedMs']} ms)")
    else:
        why = result.get("error") or f"the indexes did not catch up within {timeout_s:g} s"
        _line(f"not consistent after {result['waitedMs']} ms: {why}")
    if not result["consistent"]:
        raise typer.Exit(1)


for _name, _command in (
    ("entries", entries_cmd),
    ("context", context_cmd),
    ("add-entry", add_entry_cmd),
    ("put-context", put_context_cmd),
    ("barrier", barrier_cmd),
    ("run", run_cmd),
):
    memory_agent_app.command(_name)(friendly(_command))


def register_commands(app: typer.Typer) -> None:
    app.add_typer(memory_agent_app, name="memory-agent")

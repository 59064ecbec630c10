"""``maxy memory-agent run FILE.jsonl``: feed a conversation file through the memory agent
(``maxy.memoryagent.runner``), with a progress bar on stderr and a summary of what was written."""

from __future__ import annotations

from pathlib import Path

import typer
from maxy.conversations.importing import read_messages
from maxy.embeddings import get_embedder
from maxy.graph.write import GraphWriter
from maxy.memoryagent.runner import run_messages
from maxy.memoryagent.spaces import check_memory
from maxy.plugins import cli_context, emit_json, out


def run_cmd(
    file: Path = typer.Argument(..., help="JSONL as maxy conversation import reads it: one message per line."),
    memory: str = typer.Option(
        None, "--memory", "-m", help="One memory for every conversation of the file (default: one per conversation)."
    ),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Feed each session of the file through the memory agent: every message becomes a turn and an
    entry, every sixth message and each session's end a new context document."""
    from maxy.console import err
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    if memory is not None:
        check_memory(memory, "--memory")
    messages = read_messages(file)
    ctx = cli_context(plugin="memory-agent")
    try:
        assert ctx.account is not None  # cli_context validates ACCOUNT_ID
        writer = GraphWriter(ctx.db, ctx.account, get_embedder(ctx.settings), caller=ctx.caller, created_by="cli")
        columns = (TextColumn("messages"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, console=err, transient=True) as bar:
            task = bar.add_task("messages", total=len(messages))
            summary = run_messages(
                writer,
                ctx.settings,
                messages,
                memory=memory,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
    finally:
        ctx.db.close()
    figures = summary.as_dict()
    if json_out:
        emit_json(figures)
        return
    degraded = summary.modes.get("degraded", 0)
    why = ", ".join(f"{k} {v}" for k, v in sorted(summary.reasons.items()))
    out.print(
        f"{summary.messages} message(s) in {summary.sessions} session(s) of {len(summary.memories)} memory(ies) "
        f"({', '.join(summary.memories)}): {summary.entries} entries, {summary.contexts} context document(s), "
        f"{summary.ms / 1000:.1f} s",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    if degraded:
        out.print(
            f"{degraded} step(s) without the model ({why}): extractive summaries and a deterministic context",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )

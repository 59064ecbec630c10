"""``maxy eval received``: the command that asks every question through the real tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from ..console import emit_json, friendly, out
from .ready import schema_ready


def _limits(limits: str) -> tuple[int, ...]:
    from ..errors import ValidationError

    try:
        ks = tuple(int(k) for k in limits.split(",") if k.strip())
    except ValueError:
        raise ValidationError("--limits", f"{limits!r}: comma-separated whole numbers, e.g. 3,5,10") from None
    if not ks or any(not 1 <= k <= 50 for k in ks):
        raise ValidationError("--limits", f"{limits!r}: whole numbers from 1 to 50, e.g. 3,5,10")
    return ks


def _check_sets(scifact: Path | None, locomo: Path | None, folder: Path | None, questions: Path | None) -> None:
    from ..errors import ValidationError

    if (folder is None) != (questions is None):
        raise ValidationError("--questions", "--folder and --questions go together")
    if scifact is None and locomo is None and folder is None:
        raise ValidationError(
            "--scifact", "name a data set: --scifact DIR, --locomo DIR or --folder DIR --questions FILE"
        )


def _measure(settings: Any, name: str, batches: Any, ks: tuple[int, ...]) -> dict[str, Any]:
    """One data set's figures, with a progress bar on stderr."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from ..console import err
    from .received import ask

    columns = (TextColumn(name), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(name, total=sum(len(b.questions) for b in batches))
        return ask(
            settings, batches, limits=ks, progress=lambda done, total: bar.update(task, completed=done, total=total)
        )


# The commands, defined last: their options name the helpers above.
commands = typer.Typer()  # added to maxy eval by maxy.evaluation.cli


@commands.command("received")
@friendly
def received(
    scifact: Path = typer.Option(
        None,
        "--scifact",
        exists=True,
        file_okay=False,
        help="A BEIR folder (SciFact): its claims against its abstracts.",
    ),
    split: str = typer.Option("dev", "--split", help="The BEIR qrels file to use."),
    locomo: Path = typer.Option(
        None, "--locomo", exists=True, file_okay=False, help="A LoCoMo folder: its facts and its messages."
    ),
    folder: Path = typer.Option(
        None, "--folder", exists=True, file_okay=False, help="A folder of documents (with --questions)."
    ),
    questions: Path = typer.Option(
        None, "--questions", exists=True, dir_okay=False, help='For --folder: {"question", "gold"} per line.'
    ),
    limits: str = typer.Option("3,5,10", "--limits", help="The limits each question is asked with."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Ask every question through a real MCP client against the default `maxy mcp config` server:
    how often the gold text reaches the agent, hits and tokens per limit, tokens of tools/list."""
    from ..config import load_settings
    from . import received as rc

    ks = _limits(limits)
    _check_sets(scifact, locomo, folder, questions)
    settings = load_settings()
    with schema_ready(settings) as (embedder, db):
        sets: list[tuple[str, Any]] = []
        if scifact is not None:
            sets.append((f"scifact-{split}", lambda: rc.scifact_batches(settings, db, embedder, scifact, split)))
        if locomo is not None:
            sets.append(("locomo-facts", lambda: rc.locomo_fact_batches(settings, db, embedder, locomo)))
            sets.append(("locomo-messages", lambda: rc.locomo_message_batches(settings, db, embedder, locomo)))
        if folder is not None:
            sets.append((folder.name, lambda: rc.folder_batches(settings, db, embedder, folder, questions)))
        results = {name: _measure(settings, name, build(), ks) for name, build in sets}
    if json_out:
        emit_json(results)
        return
    for name, figures in results.items():
        out.print(
            f"{name}: {figures['questions']} questions; tools/list {figures['toolsListTokens']} tokens "
            f"({figures['tools']} tools)"
        )
        for k in ks:
            size = figures[f"tokens@{k}"]
            out.print(
                f"  limit {k:2}: gold reaches the agent {figures[f'reach@{k}']:5.1f}%  "
                f"hits {figures[f'hits@{k}']:5.2f}  tokens mean {size['mean']} p95 {size['p95']}"
            )

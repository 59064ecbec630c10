"""``maxy demo``: ingest a few documents into an account of their own and answer questions.

The installer's main job runs it on this project's README and docs. It writes into the
account named ``demo`` (created on first use, never recorded as ``ACCOUNT_ID``), so the
account a user works in holds only what the user put there.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer

from .config import Settings
from .console import emit_json, err, friendly, out

DEMO_ACCOUNT = "demo"
DEMO_PATHS = ("README.md", "docs")
DEMO_QUESTIONS = (
    "How do I run the tests?",
    "How does Maxy keep one account from seeing another account's nodes?",
    "What happens to a write when the embedding model is unavailable?",
)


@dataclass
class DemoRun:
    account_id: str
    account_name: str
    created: bool
    ingest: list[Any] = field(default_factory=list)  # IngestResult per file
    answers: list[tuple[str, Any]] = field(default_factory=list)  # (question, SearchResponse)

    @property
    def failed(self) -> list[Any]:
        return [r for r in self.ingest if r.error]


def run_demo(
    settings: Settings,
    paths: Sequence[Path],
    questions: Sequence[str],
    *,
    account_name: str = DEMO_ACCOUNT,
    limit: int = 3,
) -> DemoRun:
    """Ingest ``paths`` into the account called ``account_name`` (created when missing), then
    search each question there (compact hits, no graph expansion)."""
    from .accounts import list_accounts
    from .db import Database
    from .embeddings import get_embedder
    from .evaluation.accounts import named_account
    from .graph.guards import Caller
    from .graph.write import GraphWriter
    from .ingest.files import collect_files
    from .ingest.hierarchy import ingest_paths
    from .ingest.summarize import get_summarizer
    from .logs import log_line, short
    from .search import SearchConfig, SearchRequest, hybrid

    started = time.perf_counter()
    collected = collect_files(paths)  # bad paths are refused before an account is made
    requests = [SearchRequest(q, limit=limit, expand_hops=0).validated() for q in questions]  # before any work
    existed = any(a.name == account_name for a in list_accounts(settings.data_root))
    account = named_account(settings, account_name)
    settings = settings.model_copy(update={"ACCOUNT_ID": account.account_id})
    caller = Caller.from_settings(settings, account.account_id)
    embedder = get_embedder(settings)
    run = DemoRun(account.account_id, account_name, created=not existed)
    with Database(settings) as db:
        writer = GraphWriter(db, account, embedder, caller=caller, created_by="ingest")
        run.ingest = ingest_paths(collected, writer, summarizer=get_summarizer(settings))
        config = SearchConfig.from_settings(settings)
        for request in requests:
            run.answers.append((request.query, hybrid(db, caller, request, embedder, config)))
    log_line(
        "demo",
        accountId=short(account.account_id),
        created=run.created,
        documents=sum(1 for r in run.ingest if not r.error and not r.skipped),
        failed=len(run.failed),
        questions=len(requests),
        ms=round((time.perf_counter() - started) * 1000),
    )
    return run


# The commands, defined last: their options name the helpers above.
commands = typer.Typer()  # added to the main app by register()


@commands.command("demo")
@friendly
def demo_cmd(
    paths: list[Path] = typer.Argument(None, help="Files or folders to ingest [default: README.md docs]."),
    question: list[str] = typer.Option(
        None, "--question", "-q", help="Ask this instead of the three built-in questions (repeatable)."
    ),
    account: str = typer.Option(DEMO_ACCOUNT, "--account", help="The name of the account to write into."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Ingest documents into the demo account (created if missing, never ACCOUNT_ID) and answer questions."""
    from .config import load_settings
    from .errors import ValidationError
    from .search.format import brief_line, render, to_json

    if any(not q.strip() for q in question or []):
        raise ValidationError("--question", "is empty; ask a question, or leave --question out for the built-in ones")
    run = run_demo(
        load_settings(), paths or [Path(p) for p in DEMO_PATHS], question or DEMO_QUESTIONS, account_name=account
    )
    written = [r for r in run.ingest if not r.error and not r.skipped]
    if json_out:
        emit_json(
            {
                "account": {"accountId": run.account_id, "name": run.account_name, "created": run.created},
                "ingested": len(written),
                "skipped": sum(1 for r in run.ingest if r.skipped),
                "failed": len(run.failed),
                "chunks": sum(r.chunks for r in written),
                "answers": [{"question": q, "results": to_json(r.hits)} for q, r in run.answers],
            }
        )
    else:
        what = "created" if run.created else "reused"
        skipped = Counter(r.reason for r in run.ingest if r.skipped)
        detail = "".join(f", {n} {reason}" for reason, n in sorted(skipped.items()))
        err.print(
            f"demo: account {run.account_name} ({run.account_id}, {what}): ingested {len(written)} document(s){detail}",
            highlight=False,
            soft_wrap=True,
        )
        for q, response in run.answers:
            out.print(f"\nQ: {q}", markup=False, highlight=False)
            for i, hit in enumerate(response.hits, start=1):
                out.print(brief_line(i, hit), markup=False, highlight=False, soft_wrap=True)
            if not response.hits:
                out.print(render([], nearest_miss=response.nearest_miss), markup=False, highlight=False)
    for r in run.failed:
        err.print(f"[red]error:[/red] {r.error}", highlight=False, soft_wrap=True)
    if run.failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(commands)

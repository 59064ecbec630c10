"""``maxy ingest``, ``maxy delete`` and ``maxy purge`` (added to the main app by ``register``).

``maxy.cli`` is imported inside the functions that use it, not at module level:
``python -m maxy.cli`` runs that module as ``__main__`` and imports this one while doing so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from ..config import load_settings
from ..console import emit_json, friendly, out


def _writer_context(settings: Any) -> tuple[Any, Any, Any]:
    """Validate ACCOUNT_ID (exit 1 on failure) and open the database."""
    from ..accounts import validate_account_id_env
    from ..db import Database

    validated = validate_account_id_env(settings)
    return validated, Database(settings), settings


def _embedder(settings: Any) -> Any:
    from ..embeddings import get_embedder
    from ..errors import ConfigError

    try:
        return get_embedder(settings)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _log_lines_above(bar: Any) -> Any:
    """While the bar is live on a terminal, print ``maxy`` log lines above it (unwrapped)
    instead of through it. Returns a function that puts the original handlers back."""
    import logging

    logger = logging.getLogger("maxy")
    console = bar.console
    if not console.is_terminal:
        return lambda: None

    class AboveBar(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            try:
                console.print(self.format(record), soft_wrap=True, highlight=False, markup=False, emoji=False)
            except Exception:  # noqa: BLE001 - logging must never break the command
                self.handleError(record)

    originals = [h for h in logger.handlers if isinstance(h, logging.StreamHandler)]
    above = AboveBar()
    above.setFormatter(logging.Formatter("%(message)s"))
    for h in originals:
        logger.removeHandler(h)
    logger.addHandler(above)

    def restore() -> None:
        logger.removeHandler(above)
        for h in originals:
            logger.addHandler(h)

    return restore


def _ingest_collected(collected: Any, writer: Any, kwargs: dict[str, Any]) -> list[Any]:
    import logging

    from ..console import err
    from .hierarchy import ingest_paths

    if not collected.files or logging.getLogger("maxy").getEffectiveLevel() > logging.WARNING:
        return ingest_paths(collected, writer, **kwargs)  # nothing to follow, or --quiet
    if err.is_terminal:  # a bar only where someone can see it
        return _ingest_with_bar(collected, writer, kwargs)
    return _ingest_with_lines(collected, writer, kwargs)


def _ingest_with_lines(collected: Any, writer: Any, kwargs: dict[str, Any]) -> list[Any]:
    """Piped or logged: a plain line per file, and per tenth of a large one."""
    from ..console import err
    from .hierarchy import ingest_paths
    from .progress import PlainProgress, stopped_line

    def say(line: str) -> None:
        err.print(line, markup=False, highlight=False, soft_wrap=True)

    lines = PlainProgress(say, len(collected.files))
    try:
        return ingest_paths(collected, writer, progress=lines.file_done, batch_progress=lines.batch, **kwargs)
    except KeyboardInterrupt:
        if lines.current is not None:
            say(stopped_line(lines.current.result))
        raise


def _ingest_with_bar(collected: Any, writer: Any, kwargs: dict[str, Any]) -> list[Any]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..console import err
    from .hierarchy import ingest_paths
    from .progress import FileProgress, estimate_line, leftover_line, name_of, stopped_line

    with Progress(
        TextColumn("{task.fields[what]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        _chunks_time_left_column(),
        TextColumn("{task.description}"),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task("", total=len(collected.files), what="ingest")
        restore = _log_lines_above(bar)
        files_done = 0
        large: dict[str, Any] = {}  # the large file being written: its bar row and progress

        def progress(done: int, total: int, result: Any) -> None:
            nonlocal files_done
            files_done = done
            if large.get("result") is result:
                bar.remove_task(large.pop("task"))
                large.clear()
            bar.update(task, completed=done, description=name_of(result))

        def batch_progress(result: Any, done: int, total: int) -> None:
            # inside a large file: the share of its text written so far, and its chunks below
            share = done / total if total else 1.0
            if large.get("result") is not result:
                if "task" in large:
                    bar.remove_task(large["task"])
                for line in (leftover_line(result), estimate_line(result)):
                    if line:
                        bar.console.print(line, markup=False, highlight=False, soft_wrap=True)
                large.update(
                    result=result,
                    follow=FileProgress(result),
                    task=bar.add_task(
                        "chunks", total=None, completed=result.chunks_done, what="  " + name_of(result), chunks=True
                    ),
                )
            chunks, expected, _ = large["follow"].measure(done, total)
            shown = large.get("total")
            if shown is None or chunks > shown or abs(expected - shown) > 0.05 * shown:
                # a new total resets rich's rate samples: only when the estimate moved
                large["total"] = max(chunks, expected)
                bar.update(large["task"], total=large["total"])
            bar.update(large["task"], completed=chunks)
            bar.update(task, completed=files_done + share, description=f"{name_of(result)} {share:.0%}")

        try:
            return ingest_paths(collected, writer, progress=progress, batch_progress=batch_progress, **kwargs)
        except KeyboardInterrupt:
            if "result" in large:
                bar.console.print(stopped_line(large["result"]), markup=False, highlight=False, soft_wrap=True)
            raise
        finally:
            restore()


def _chunks_time_left_column() -> Any:
    from rich.progress import TimeRemainingColumn
    from rich.text import Text

    class ChunksTimeLeft(TimeRemainingColumn):
        """The time left of a large file's chunks (rich's rate over the chunks written); blank on
        the row of files, whose sizes differ too much for a rate."""

        def render(self, task: Any) -> Text:
            return super().render(task) if task.fields.get("chunks") else Text("")

    return ChunksTimeLeft()


def _written(results: list[Any]) -> list[Any]:
    return [r for r in results if not r.error and not r.skipped]


def _emit_ingest_json(results: list[Any], summarizer_name: str, account: Any, error: str | None = None) -> None:
    from ..console import emit_json

    written = _written(results)
    emit_json(
        {
            "documents": [r.as_dict() for r in results],
            "ingested": len(written),
            "skipped": sum(1 for r in results if r.skipped),
            "failed": sum(1 for r in results if r.error),
            "sections": sum(r.sections for r in written),
            "chunks": sum(r.chunks for r in written),
            "summarizer": summarizer_name,
            "account": account.ref(),
            **({"error": error} if error else {}),
        }
    )


def _print_skipped(skipped: list[Any]) -> None:
    """One line per reason (``skipped 12 files of unsupported type (.png 9, .svg 3)``); the
    files themselves are the ``[ingest] skip`` lines ``maxy --verbose`` shows."""
    import logging

    from ..console import err
    from .skipsummary import summary_lines

    listed = logging.getLogger("maxy").isEnabledFor(logging.INFO)  # --verbose: the skip lines are above
    for line in summary_lines(skipped, hint=not listed):
        err.print(line, markup=False, highlight=False, soft_wrap=True)


def _print_ingest(results: list[Any], account: Any) -> None:
    from ..console import err, out
    from .specs import SIZE_ONLY

    failed = [r for r in results if r.error]
    skipped = [r for r in results if r.skipped]
    refused = [r for r in skipped if r.note]
    written = _written(results)
    if len(results) == 1 and not failed and not refused:
        r = results[0]
        what = f"skipped ({r.reason})" if r.skipped else f"{r.sections} sections, {r.chunks} chunks"
        out.print(f"{r.path}: {r.attachment_id}: {what} in {account.label()}", markup=False, highlight=False)
    else:
        out.print(
            f"ingested {len(written)} document(s) into {account.label()}: {sum(r.sections for r in written)} "
            f"sections, {sum(r.chunks for r in written)} chunks; skipped {len(skipped)}, failed {len(failed)}",
            markup=False,
            highlight=False,
        )
    for r in written:
        if r.chunking == SIZE_ONLY:
            err.print(
                f"[yellow]warning:[/yellow] {r.path or r.attachment_id}: chunked by size, the embedder was "
                "unavailable; ingest it again once it answers and it is re-chunked by topic",
                highlight=False,
                soft_wrap=True,
            )
        elif r.rechunked:
            err.print(f"re-chunked {r.path or r.attachment_id} by topic (it was cut by size before)", highlight=False)
    for r in failed:
        err.print(f"[red]error:[/red] {r.error}", highlight=False, soft_wrap=True)


def _print_purged(counts: dict[str, int], grace_days: float, json_out: bool, account: Any) -> None:
    from ..console import emit_json, out

    if json_out:
        emit_json({"graceDays": grace_days, "deleted": counts, "total": sum(counts.values()), "account": account.ref()})
    elif not counts:
        out.print(
            f"nothing to purge in {account.label()} (grace period {grace_days:g} days)", markup=False, highlight=False
        )
    else:
        detail = ", ".join(f"{label} {n}" for label, n in counts.items())
        out.print(
            f"purged {sum(counts.values())} node(s) from {account.label()}: {detail}", markup=False, highlight=False
        )


def _print_preview(preview: dict[str, Any], grace_days: float, json_out: bool, account: Any) -> None:
    from ..console import emit_json, out

    counts = preview["counts"]
    if json_out:
        emit_json(
            {
                "graceDays": grace_days,
                "dryRun": True,
                "wouldDelete": counts,
                "total": sum(counts.values()),
                "documents": preview["documents"],
                "account": account.ref(),
            }
        )
        return
    if not counts:
        out.print(
            f"nothing to purge in {account.label()} (grace period {grace_days:g} days)", markup=False, highlight=False
        )
        return
    detail = ", ".join(f"{label} {n}" for label, n in counts.items())
    out.print(
        f"would purge {sum(counts.values())} node(s) from {account.label()}: {detail}", markup=False, highlight=False
    )
    for doc in preview["documents"]:
        out.print(f"  {doc['attachmentId']}  {doc['title'] or ''}  (deleted {doc['deletedAt']})", highlight=False)


def _purge_stopped(db: Any, validated: Any, settings: Any, dry_run: bool, json_out: bool) -> None:
    """``maxy purge --stopped``: what stopped ingests left, deleted (or listed)."""
    from ..console import emit_json, out
    from ..graph.guards import Caller
    from ..graph.write import GraphWriter
    from .stopped import find_left_ingests, remove_stopped

    try:
        caller = Caller.from_settings(settings, validated.account_id)
        found = find_left_ingests(db, caller)
        stopped = [x for x in found if not x.running]
        if not dry_run:
            stopped = remove_stopped(GraphWriter(db, validated, None, caller=caller, created_by="ingest"), found)
    finally:
        db.close()
    running = [x for x in found if x.running]
    if json_out:
        key = "wouldRemove" if dry_run else "removed"
        emit_json(
            {
                "dryRun": dry_run,
                key: [x.as_dict() for x in stopped],
                "nodes": sum(x.nodes for x in stopped),
                "running": [x.as_dict() for x in running],
                "account": validated.ref(),
            }
        )
        return
    if not stopped:
        out.print(f"no stopped ingest left hidden nodes in {validated.label()}", markup=False, highlight=False)
    else:
        verb = "would remove" if dry_run else "removed"
        names = ", ".join(f"{x.name} (attachment {x.attachment_id}, {x.nodes:,} nodes)" for x in stopped)
        total = sum(x.nodes for x in stopped)
        out.print(
            f"{verb} {total:,} hidden node(s) of {len(stopped)} stopped ingest(s) from {validated.label()}: {names}",
            markup=False,
            highlight=False,
        )
    for x in running:
        out.print(
            f"left alone: {x.name} (attachment {x.attachment_id}) is being written (pid {x.pid})", highlight=False
        )


# The commands, defined last: their options name the helpers above.
commands = typer.Typer()  # added to the main app by register()


@commands.command("ingest")
@friendly
def ingest_cmd(
    paths: list[str] = typer.Argument(
        ..., help="Files or folders: Markdown, text, HTML, PDF, Word, PowerPoint, reST, AsciiDoc, source code."
    ),
    attachment_id: str | None = typer.Option(
        None, "--attachment-id", help="The attachmentId for a single file (default: derived from its path)."
    ),
    scope: str | None = typer.Option(None, "--scope", help="public, shared or admin."),
    agents: list[str] | None = typer.Option(None, "--agent", help="Tag the nodes for this agent (repeatable)."),
    force: bool = typer.Option(False, "--force", help="Re-ingest even when the content is unchanged."),
    as_text: bool = typer.Option(
        False, "--as-text", help="Read files of other types as plain text (a folder: every one that is text)."
    ),
    no_ignore: bool = typer.Option(
        False,
        "--no-ignore",
        help="In folders, read what .gitignore/.maxyignore and the default build and vendor folders exclude, "
        "and HTML templates.",
    ),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Ingest documents as KnowledgeDocument -> Section -> Chunk hierarchies. Exits 1 when a
    file failed or when the paths hold no file to ingest."""
    from ..console import fail
    from ..graph.guards import Caller
    from ..graph.write import GraphWriter
    from .files import collect_files
    from .skipsummary import nothing_found
    from .summarize import get_summarizer

    settings = load_settings()
    validated, db, settings = _writer_context(settings)
    try:
        # validate paths before loading the embedder
        collected = collect_files(paths, ignore=not no_ignore, as_text=as_text)
        caller = Caller.from_settings(settings, validated.account_id)  # the pins of this process
        batch = settings.MAXY_INGEST_BATCH_NODES
        writer = GraphWriter(db, validated, _embedder(settings), caller=caller, created_by="ingest", batch_size=batch)
        summarizer = get_summarizer(settings)
        kwargs: dict[str, Any] = {
            "attachment_id": attachment_id,
            "scope": scope,
            "agents": agents or None,
            "force": force,
            "summarizer": summarizer,
        }
        results = _ingest_collected(collected, writer, kwargs)
    finally:
        db.close()
    nothing = (
        None if collected.files else nothing_found(collected.folders or [Path(p) for p in paths], collected.skipped)
    )
    if json_out:
        _emit_ingest_json(results, summarizer.name, validated, error=nothing)
    else:
        _print_skipped(collected.skipped)
        if not nothing:
            _print_ingest(results, validated)
    if nothing:
        fail(nothing)
    if any(r.error for r in results):
        raise typer.Exit(1)


@commands.command("delete")
@friendly
def delete_cmd(
    attachment: str = typer.Option(..., "--attachment", help="The attachmentId of the document to delete."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Soft-delete a document and its sections and chunks (hidden at once, purged after the grace period)."""
    from ..graph.guards import Caller
    from .lifecycle import soft_delete_attachment

    validated, db, settings = _writer_context(load_settings())
    try:
        caller = Caller.from_settings(settings, validated.account_id)
        stamped = soft_delete_attachment(db, validated.account_id, attachment, caller=caller)
    finally:
        db.close()
    if json_out:
        emit_json({"attachmentId": attachment, "deleted": stamped, "account": validated.ref()})
    elif stamped:
        out.print(
            f"soft-deleted {attachment} in {validated.label()}: {stamped} node(s); purged after the grace period",
            markup=False,
            highlight=False,
        )
    else:
        out.print(f"{attachment} was already deleted in {validated.label()}", markup=False, highlight=False)


@commands.command("purge")
@friendly
def purge_cmd(
    grace_days: float = typer.Option(7, "--grace-days", min=0, help="Keep soft-deleted nodes this many days."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List what would be deleted; delete nothing."),
    yes: bool = typer.Option(False, "--yes", help="Confirm --grace-days 0 (everything soft-deleted, at once)."),
    stopped: bool = typer.Option(
        False, "--stopped", help="Instead: delete the hidden nodes that stopped ingests of large files left."
    ),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Hard-delete nodes soft-deleted longer ago than the grace period (--dry-run lists them)."""
    from ..errors import ValidationError
    from ..graph.guards import Caller
    from ..graph.purge import purge, purge_preview

    validated, db, settings = _writer_context(load_settings())
    if stopped:
        _purge_stopped(db, validated, settings, dry_run, json_out)
        return
    try:
        caller = Caller.from_settings(settings, validated.account_id)
        preview = None
        if dry_run or (grace_days == 0 and not yes):
            preview = purge_preview(db, validated.account_id, grace_days=grace_days, caller=caller)
        counts = None if preview is not None else purge(db, validated.account_id, grace_days, caller=caller)
    finally:
        db.close()
    if preview is None:
        _print_purged(counts or {}, grace_days, json_out, validated)
        return
    _print_preview(preview, grace_days, json_out, validated)
    if not dry_run and preview["counts"]:
        raise ValidationError(
            "--grace-days",
            "0 hard-deletes everything soft-deleted, at once; nothing was deleted: "
            "add --yes to purge what is listed above",
        )


def register(app: typer.Typer) -> None:
    app.add_typer(commands)

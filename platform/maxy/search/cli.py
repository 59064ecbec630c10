"""``maxy search`` and ``maxy reindex``."""

from __future__ import annotations

from typing import Any

import typer

from ..console import emit_json, err, friendly, out


def _report_reindex(summary: dict[str, Any], model: str, json_out: bool, account: Any) -> None:
    """Print a reindex summary; raise (exit 1) when nodes are left without an embedding."""
    from ..console import emit_json, err, out
    from ..errors import MaxyError

    if json_out:
        emit_json(dict(summary, account=account.ref()))
    else:
        out.print(
            f"reindexed {summary['embedded']} node(s) in {account.label()}, {summary['failed']} failed, "
            f"{summary['remaining']} still without embedding ({summary['ms']} ms)"
            + (f", re-chunked {summary['rechunked']} document(s)" if summary.get("rechunked") else ""),
            markup=False,
        )
        for doc in summary.get("sizeOnlyLeft", []):
            err.print(
                f"[yellow]warning:[/yellow] {doc['sourcePath'] or doc['attachmentId']}: still chunked by size "
                f"({doc['reason']})",
                highlight=False,
                soft_wrap=True,
            )
    if summary["modelChanged"]:
        err.print(
            f"the embedding model changed to {model}: every account's vectors were dropped; "
            "this run re-embedded this account only. Run `ACCOUNT_ID=<name or id> maxy reindex` for each other "
            "account (`maxy account list`); until then their searches are BM25-only."
        )
    if summary["left"]:
        raise MaxyError(
            f"{summary['left']} node(s) left without an embedding"
            + (f" (the embedder failed: {summary['error']})" if summary.get("error") else "")
            + ": run `maxy reindex` again once the embedder answers; it continues where this run stopped"
        )


def _agent_slug(value: str | None) -> str | None:
    from ..errors import ValidationError
    from ..identifiers import check_agent_slug

    if value is None:
        return None
    try:
        return check_agent_slug(value, field="--agent")
    except ValidationError as exc:
        raise typer.BadParameter(exc.reason) from None


def _absent_fields(hits: Any, fields: tuple[str, ...] | None) -> list[str]:
    """A warning naming each --fields property that none of the hits has (a typo would otherwise
    return bare hits without a word)."""
    if not fields or not hits:
        return []
    own = [f for f in fields if not f.startswith("related.")]
    absent = [f for f in own if not any(f in h.properties for h in hits)]
    if not absent:
        return []
    present = sorted({k for h in hits for k in h.properties if k != "embedding"})
    return [
        f"--fields: no result has {', '.join(map(repr, absent))}; "
        f"these results have: {', '.join(present) or 'no properties'}"
    ]


def _caller(settings: Any, scope: list[str] | None, agent: str | None):
    from ..errors import ValidationError
    from ..graph.guards import Caller

    pinned = Caller.from_settings(settings)
    try:
        return pinned.narrowed(tuple(scope) if scope else None, agent)
    except ValidationError as exc:  # name the environment's pins, which the CLI's view comes from
        pin = "ALLOWED_SCOPES" if exc.field == "scope" else "AGENT_SLUG"
        flag = "--scope" if exc.field == "scope" else "--agent"
        raise ValidationError(exc.field, f"{pin} pins the view; {flag} cannot widen or change it") from None


def _embedder_or_none(settings: Any, err: Any):
    from ..embeddings import get_embedder
    from ..embeddings.base import EmbeddingError

    try:
        return get_embedder(settings)
    except (EmbeddingError, ValueError) as exc:
        err.print(f"[yellow]warning:[/yellow] embedder unavailable ({exc}); BM25 only", highlight=False)
        return None


# The commands, defined last: their options name the helpers above.
commands = typer.Typer()  # added to the main app by register()


@commands.command()
@friendly
def search(
    query: str = typer.Argument(..., help="What to look for."),
    limit: int = typer.Option(10, "--limit", "-n", help="How many results."),
    label: list[str] = typer.Option(None, "--label", "-l", help="Only these labels (repeatable)."),
    fields: str = typer.Option(None, "--fields", help="Comma-separated properties to return per result ('' for none)."),
    expand_hops: int = typer.Option(1, "--expand-hops", help="1: attach related nodes; 0: compact."),
    scope: list[str] = typer.Option(None, "--scope", help="Allowed scopes (repeatable); default: all."),
    agent: str = typer.Option(None, "--agent", callback=_agent_slug, help="Only nodes tagged for this agent slug."),
    fusion: str = typer.Option(
        None, "--fusion", help="weighted | rrf | vector | bm25 [default: weighted, or rrf with MAXY_GS_RRF]"
    ),
    retrieval_class: str = typer.Option(
        None, "--class", help="entity | temporal | event | general | none: routes the search (MAXY_GS_ROUTE)."
    ),
    min_relevance: float = typer.Option(
        None, "--min-relevance", help="Keep only hits at least this relevant (0-1; 0: no cut) [default: the cut]."
    ),
    explain: bool = typer.Option(False, "--explain", help="With --json: per-path scores of each hit."),
    brief: bool = typer.Option(False, "--brief", help="One line per result: rank, score, label, title, snippet."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """The ranking pipeline's list (vector + BM25): every level of a document is its own hit, as
    `maxy eval beir` ranks them. `maxy memory search` shows what an agent's memory-search returns."""
    from ..accounts import validate_account_id_env
    from ..config import load_settings
    from ..db import Database
    from . import SearchConfig, SearchRequest, hybrid, relevance
    from .format import brief_line, project, render, search_json

    settings = load_settings()
    validated = validate_account_id_env(settings)  # a deleted account is not readable either
    caller = _caller(settings.model_copy(update={"ACCOUNT_ID": validated.account_id}), scope, agent)
    field_list = None if fields is None else [f.strip() for f in fields.split(",") if f.strip()]
    request = SearchRequest(
        query,
        limit=limit,
        labels=tuple(label) if label else None,
        fields=tuple(field_list) if field_list is not None else None,
        expand_hops=expand_hops,
        retrieval_class=retrieval_class,
        min_relevance=relevance.pipeline_floor(min_relevance),
    )
    config = SearchConfig.from_settings(settings)
    if fusion is not None:
        config = config.with_(fusion=fusion)
    embedder = _embedder_or_none(settings, err)
    with Database(settings) as db:
        response = hybrid(db, caller, request, embedder, config)
    response.hits, response.nearest_miss = relevance.answer(
        response.hits, response.nearest_miss, getattr(embedder, "name", None), min_relevance
    )
    warnings = list(response.warnings) + _absent_fields(response.hits, request.fields)
    project(response.hits, request.fields, caller.account_id)
    if json_out:
        emit_json(search_json(query, response, warnings=warnings, explain=explain))
    else:
        for w in warnings:
            err.print(f"[yellow]warning:[/yellow] {w}", highlight=False, soft_wrap=True)
        if brief:
            for i, hit in enumerate(response.hits, start=1):
                out.print(brief_line(i, hit), markup=False, highlight=False, soft_wrap=True)
            if not response.hits:
                out.print(render([], nearest_miss=response.nearest_miss), markup=False, highlight=False)
        else:
            text = render(response.hits, fields=request.fields, nearest_miss=response.nearest_miss)
            out.print(text, markup=False, highlight=False)


@commands.command()
@friendly
def reindex(
    label: list[str] = typer.Option(None, "--label", "-l", help="Only these labels (repeatable)."),
    recreate: bool = typer.Option(
        False, "--recreate", help="Rebuild vector indexes whose dimensions differ, then re-embed."
    ),
    batch_size: int = typer.Option(64, "--batch-size", min=1, help="Nodes embedded per call."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Embed nodes that lack an embedding (after an embedder outage or a model change), and
    re-chunk by topic the documents cut by size while the embedder was down. Exits 1 when
    nodes are left without an embedding."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from ..accounts import validate_account_id_env
    from ..config import load_settings
    from ..db import Database
    from ..embeddings import get_embedder
    from ..graph.guards import Caller
    from ..graph.schema import apply_schema
    from ..graph.write import GraphWriter
    from ..ingest.rechunk import rechunk_size_only
    from .reindex import count_missing
    from .reindex import reindex as run_reindex

    settings = load_settings()
    validated = validate_account_id_env(settings)
    caller = Caller.from_settings(settings, validated.account_id)  # the pins of this process
    embedder = get_embedder(settings)
    with Database(settings) as db:
        model_changed = False
        if recreate:
            applied = apply_schema(db, embedder.dimensions, recreate_vector_indexes=True, embedder=embedder)
            model_changed = bool(applied.get("modelChanged"))
        labels = list(label) if label else None
        total = count_missing(db, validated.account_id, labels, caller=caller)
        with Progress(
            TextColumn("reindex"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err,
            disable=json_out or total == 0,
        ) as progress:
            task = progress.add_task("reindex", total=total)
            summary = run_reindex(
                db,
                validated,
                embedder,
                labels=labels,
                batch_size=batch_size,
                caller=caller,
                progress=lambda n: progress.update(task, completed=n),
            )
        if not summary["failed"]:  # the embedder answers: documents cut by size can be cut by topic
            writer = GraphWriter(db, validated, embedder, caller=caller, created_by="reindex")
            summary.update(rechunk_size_only(writer).as_dict())
    summary["modelChanged"] = model_changed
    _report_reindex(summary, embedder.name, json_out, validated)


def register(app: typer.Typer) -> None:
    app.add_typer(commands)

"""The memory plugin's document tools: memory-ingest, memory-delete and memory-reindex,
wrappers of the platform's ingest, soft delete and reindex, each confined to the caller's view.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from maxy.config import config_dir
from maxy.plugins import ToolContext, ToolError, require, tool, tool_errors


def _check_paths(paths: object) -> list[str]:
    if isinstance(paths, str):
        paths = [paths]
    require(isinstance(paths, list) and bool(paths), "paths", "a non-empty list of file or folder paths")
    protected = config_dir().expanduser().resolve()
    out = []
    for i, p in enumerate(paths):  # type: ignore[arg-type, var-annotated]
        require(isinstance(p, str) and bool(p.strip()), f"paths[{i}]", "a file or folder path")
        resolved = Path(p).expanduser().resolve()
        require(
            resolved != protected and protected not in resolved.parents,
            f"paths[{i}]",
            "the Maxy configuration folder (credentials, database files) cannot be ingested",
        )
        require(resolved.exists(), f"paths[{i}]", f"no such file or folder: {p}")
        out.append(str(resolved))
    return out


@tool(
    "memory-ingest",
    description="""
Ingest files or folders (.md .markdown .txt .html .htm) into the KnowledgeDocument -> Section ->
Chunk hierarchy. attachmentId: a stable id for a single file (re-ingesting the same id replaces
the document); scope and agents: visibility of every node written. Returns one result per file.
""",
    idempotent=True,
)
@tool_errors
def memory_ingest(
    ctx: ToolContext,
    paths: list[str],
    attachmentId: str | None = None,
    scope: str | None = None,
    agents: list[str] | None = None,
) -> dict[str, Any]:
    from maxy.ingest.hierarchy import ingest_paths

    w = ctx.writer(f"agent:{ctx.plugin or 'memory'}:ingest")
    files = _check_paths(paths)
    results = ingest_paths(files, w, attachment_id=attachmentId, scope=scope, agents=agents, source="mcp")
    return {
        "documents": [r.as_dict() for r in results],
        "written": sum(1 for r in results if r.ok and not r.skipped),
        "skipped": sum(1 for r in results if r.skipped),
        "failed": sum(1 for r in results if not r.ok),
    }


@tool(
    "memory-delete",
    description="""
Soft-delete an ingested document by attachmentId: the document, its sections and chunks get
deletedAt and disappear from every search at once; they are purged after a 7-day grace period.
Re-ingesting the same attachmentId restores it.
""",
    destructive=True,
    idempotent=True,
)
@tool_errors
def memory_delete(ctx: ToolContext, attachmentId: str) -> dict[str, Any]:
    from maxy.ingest.lifecycle import soft_delete_attachment

    w = ctx.writer()
    stamped = soft_delete_attachment(ctx.db, w.account.account_id, attachmentId, caller=ctx.caller)
    return {"attachmentId": attachmentId, "deleted": stamped, "alreadyDeleted": stamped == 0}


@tool(
    "memory-reindex",
    description="""
Backfill missing embeddings (after an embedder outage, a new vector index or a model change)
for all indexed labels or only `labels`. Resumable; returns counts.
""",
    idempotent=True,
)
@tool_errors
def memory_reindex(ctx: ToolContext, labels: list[str] | None = None) -> dict[str, Any]:
    from maxy.graph.allowlist import check_labels
    from maxy.search.reindex import reindex

    w = ctx.writer()
    if labels is not None:
        check_labels(labels, field="labels")
    if ctx.embedder is None:
        raise ToolError("embedder: no embedder is configured for this server; nothing to reindex with")
    return reindex(ctx.db, w.account, ctx.embedder, labels=labels, caller=ctx.caller)

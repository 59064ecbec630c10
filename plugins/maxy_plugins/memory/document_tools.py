"""The memory plugin's document tools: memory-ingest, memory-delete and memory-reindex,
wrappers of the platform's ingest, soft delete and reindex, each confined to the caller's view.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from maxy.config import config_dir
from maxy.plugins import (
    AgentsArg,
    IndexedLabel,
    OneOrMany,
    ScopeArg,
    ToolContext,
    ToolError,
    ToolOutput,
    require,
    tool,
    tool_errors,
)
from pydantic import Field

AttachmentId = Annotated[str, Field(description="The document's attachmentId (from memory-ingest's result).")]


class IngestedDocument(ToolOutput):
    attachmentId: str
    title: str
    documentId: str | None = Field(description="The KnowledgeDocument's node id; null when nothing was written.")
    sections: int
    chunks: int
    skipped: bool = Field(description="True when the file was left alone (see reason).")
    reason: str | None = Field(
        description="unchanged | empty | outside-folder | protected-folder | unsupported | ignored | template | error."
    )
    error: str | None
    note: str | None = Field(description="Why a file was skipped, in words.")
    contentHash: str | None
    embedded: int = Field(description="How many of its nodes got embeddings.")
    ms: int
    path: str | None


class Ingested(ToolOutput):
    documents: list[IngestedDocument] = Field(description="One entry per file.")
    written: int
    skipped: int
    failed: int


class Deleted(ToolOutput):
    attachmentId: str
    deleted: int = Field(description="How many nodes (document, sections, chunks) were marked deleted now.")
    alreadyDeleted: bool = Field(description="True when nothing was left to delete.")


class Reindexed(ToolOutput):
    keyed: int = Field(description="Nodes that gained name, alias or date keys.")
    embedded: int = Field(description="Nodes that got their embedding.")
    skipped: int
    failed: int
    remaining: int = Field(description="Nodes still without an embedding; run again to continue.")
    ms: int


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
Ingest files or folders (Markdown, text, HTML, PDF, Word, PowerPoint, reST, AsciiDoc, source
code) so memory-search finds their passages; each document keeps its path relative to the
folder. Re-ingesting an unchanged file skips it.
""",
    title="Ingest documents",
    output=Ingested,
    destructive=True,  # a changed file replaces its document's sections and chunks
    idempotent=True,  # an unchanged file is skipped
)
@tool_errors
def memory_ingest(
    ctx: ToolContext,
    paths: Annotated[
        list[str],
        OneOrMany,
        Field(description="Files or folders to ingest; folders are read recursively.", min_length=1),
    ],
    attachmentId: Annotated[
        str | None,
        Field(description="A stable id for a single file: ingesting the same id again replaces that document."),
    ] = None,
    scope: ScopeArg = None,
    agents: AgentsArg = None,
    asText: Annotated[
        bool, Field(description="Read files of other types as plain text (binary files are still refused).")
    ] = False,
) -> dict[str, Any]:
    from maxy.ingest.files import collect_files
    from maxy.ingest.hierarchy import ingest_paths
    from maxy.ingest.skipsummary import require_files

    w = ctx.writer(f"agent:{ctx.plugin or 'memory'}:ingest")
    checked = _check_paths(paths)
    files = require_files(collect_files(checked, as_text=asText), checked)
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
    title="Delete a document",
    output=Deleted,
    destructive=True,
    idempotent=True,
)
@tool_errors
def memory_delete(ctx: ToolContext, attachmentId: AttachmentId) -> dict[str, Any]:
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
    title="Backfill embeddings",
    output=Reindexed,
    idempotent=True,  # it fills only what is missing
)
@tool_errors
def memory_reindex(
    ctx: ToolContext,
    labels: Annotated[
        Annotated[list[IndexedLabel], Field(min_length=1)] | None,
        OneOrMany,
        Field(description="Only nodes with these labels (omitted: every indexed label)."),
    ] = None,
) -> dict[str, Any]:
    from maxy.graph.allowlist import check_labels
    from maxy.search.reindex import reindex

    w = ctx.writer()
    if labels is not None:
        check_labels(labels, field="labels")
    if ctx.embedder is None:
        raise ToolError("embedder: no embedder is configured for this server; nothing to reindex with")
    return reindex(ctx.db, w.account, ctx.embedder, labels=labels, caller=ctx.caller)

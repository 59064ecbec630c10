"""Re-chunk the documents that were cut by size while the embedder was down (``maxy reindex``).

A document ingested during an embedder outage is chunked by size only and marked
``chunking: "size-only"``. Once the embedder answers, its source file (``sourcePath``) is read
again, through the same checks as ``maxy ingest`` (protected folders, supported types), and
the document is re-ingested with its stored scope and agents, now cut by topic. A document
with no readable source file (an API record, a moved file) is listed for the operator to
ingest again; the next ``maxy ingest`` of it re-chunks it even when unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import GraphWriteError, ValidationError
from ..graph.guards import node_guard
from ..graph.write import GraphWriter
from ..logs import log_line, short
from .files import collect_files
from .formats import parse_file
from .hierarchy import ingest_document
from .specs import SIZE_ONLY


@dataclass
class RechunkSummary:
    rechunked: list[str] = field(default_factory=list)  # attachmentIds now cut by topic
    left: list[dict[str, Any]] = field(default_factory=list)  # still size-only, with why

    def as_dict(self) -> dict[str, Any]:
        return {"rechunked": len(self.rechunked), "sizeOnlyLeft": self.left}


def size_only_documents(writer: GraphWriter) -> list[dict[str, Any]]:
    guard = node_guard(writer.caller, "d")
    return writer.db.read(
        f"""
        MATCH (d:KnowledgeDocument) WHERE {guard.clause} AND d.chunking = $mark
        RETURN d.attachmentId AS attachmentId, d.sourcePath AS sourcePath, d.scope AS scope,
               d.agents AS agents, d.source AS source
        ORDER BY d.attachmentId
        """,
        mark=SIZE_ONLY,
        **guard.params,
    )


def _source_file(path: str | None) -> tuple[Path | None, str]:
    if not path:
        return None, "no source file (ingested as a record): ingest it again"
    try:
        collected = collect_files([path])
    except ValidationError as err:
        return None, f"{err.reason}: ingest it again from where it is now"
    if not collected.files:
        return None, collected.skipped[0].note if collected.skipped else "not readable"
    return collected.files[0], ""


def rechunk_size_only(writer: GraphWriter) -> RechunkSummary:
    """Re-ingest every size-only document the writer's caller can see whose file is readable."""
    summary = RechunkSummary()
    for doc in size_only_documents(writer):
        att = doc["attachmentId"]
        path, why = _source_file(doc["sourcePath"])
        if path is None:
            summary.left.append({"attachmentId": att, "sourcePath": doc["sourcePath"], "reason": why})
            continue
        try:
            result = ingest_document(
                writer,
                parse_file(path),
                att,
                scope=doc["scope"],
                agents=doc["agents"],
                source=doc["source"],
                force=True,
            )
        except (ValidationError, GraphWriteError) as err:
            summary.left.append({"attachmentId": att, "sourcePath": str(path), "reason": str(err)})
            continue
        if result.chunking == SIZE_ONLY:
            summary.left.append({"attachmentId": att, "sourcePath": str(path), "reason": "the embedder failed again"})
        else:
            summary.rechunked.append(att)
    log_line(
        "reindex",
        "rechunk",
        accountId=short(writer.account.account_id),
        rechunked=len(summary.rechunked),
        sizeOnlyLeft=len(summary.left),
    )
    return summary

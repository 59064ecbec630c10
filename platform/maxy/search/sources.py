"""The source file of document hits whose levels do not carry it.

Ingest writes ``relativePath`` (the file's path inside the folder ingested) on a document's
every level, so a folded hit names its file from its own passage (``collapse.document_source``).
A document ingested before that carries it on its KnowledgeDocument only, or as ``sourcePath``:
:func:`attach_sources` reads those, for every such hit at once, through the caller's guards.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..db import Database
from ..graph.guards import Caller, node_guard
from .collapse import DocumentHit
from .hits import Hit


def attach_sources(db: Database, caller: Caller, hits: Sequence[Hit]) -> None:
    """Fill ``source`` of the document hits that lack it from their KnowledgeDocument."""
    missing = [h for h in hits if isinstance(h, DocumentHit) and not h.source and h.attachment_id]
    if not missing:
        return
    guard = node_guard(caller, "d")
    rows = db.read(
        f"""
        MATCH (d:KnowledgeDocument) WHERE d.attachmentId IN $ids AND {guard.clause}
        RETURN d.attachmentId AS id, d.relativePath AS relative, d.sourcePath AS path
        """,
        ids=sorted({h.attachment_id for h in missing}),
        **guard.params,
    )
    found: dict[str, str] = {}
    for row in rows:
        name = row["relative"] or (str(row["path"]).replace("\\", "/").rsplit("/", 1)[-1] if row["path"] else "")
        if name:
            found.setdefault(row["id"], name)
    for hit in missing:
        hit.source = found.get(hit.attachment_id, "")

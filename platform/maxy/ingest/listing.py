"""Ingested documents as the operator sees them: the KnowledgeDocuments a caller can read, a
page at a time, and one document's outline (its sections and their chunks, in order).

Every node passes the caller's guards, the sections and chunks the same one as their document
(they are search hits in their own right). ``deleted=True`` reads the soft-deleted ones instead,
through ``deleted_guard``: the delete path's domain (account, pinned scopes and agent) without
the live check, and only for an admin view (``Caller.admin_view``, unpinned or pinned with the
admin scope). Any other caller asking for deleted documents gets a ValidationError naming
``deleted``, the same whether or not any exist.
"""

from __future__ import annotations

from typing import Any

from ..db import Database
from ..graph.confine import id_root
from ..graph.guards import Caller, Guard, deleted_guard, node_guard
from ..graph.paging import check_page, plain
from .identity import check_attachment_id, document_node_id

PREVIEW_CHARS = 200
# Newest first: by ingest time, or for the trash by deletion time.
_LIVE_ORDER = "d.createdAt DESC, d.nodeId"
_DELETED_ORDER = "d.deletedAt DESC, d.createdAt DESC, d.nodeId"


def _guards(caller: Caller, deleted: bool) -> tuple[Guard, Guard, Guard]:
    """The guard of the document ``d``, its sections ``s`` and their chunks ``c``."""
    guard = deleted_guard if deleted else node_guard
    return guard(caller, "d"), guard(caller, "s"), guard(caller, "c")


def list_documents(
    db: Database, caller: Caller, *, deleted: bool = False, offset: int = 0, limit: int = 50
) -> tuple[int, list[dict[str, Any]]]:
    """(how many documents, one page of them), newest first. Rows: attachmentId, nodeId, title,
    source, sourcePath, relativePath, mediaType, scope, agents, createdAt, updatedAt, deletedAt (None when
    live), sectionCount, chunkCount (those the guards admit)."""
    offset, limit = check_page(offset, limit)
    gd, gs, gc = _guards(caller, deleted)
    rows = db.read(
        f"""
        MATCH (d:KnowledgeDocument) WHERE {gd.clause}
        WITH d ORDER BY {_DELETED_ORDER if deleted else _LIVE_ORDER}
        WITH collect(d) AS docs
        RETURN size(docs) AS total, [d IN docs[$skip..($skip + $n)] | d {{
            .attachmentId, nodeId: d.nodeId, .title, .source, .sourcePath, .relativePath, .mediaType, .scope, .agents,
            .createdAt, .updatedAt, .deletedAt,
            sectionCount: COUNT {{ MATCH (d)-[:HAS_SECTION]->(s:Section) WHERE {gs.clause} }},
            chunkCount: COUNT {{
                MATCH (d)-[:HAS_SECTION]->(s:Section)-[:HAS_CHUNK]->(c:Chunk) WHERE {gs.clause} AND {gc.clause}
            }}
        }}] AS rows
        """,
        skip=offset,
        n=limit,
        **gd.params,
    )
    return int(rows[0]["total"]), plain(rows[0]["rows"])


def document_outline(
    db: Database, caller: Caller, attachment_id: str, *, deleted: bool = False
) -> dict[str, Any] | None:
    """{"document": its properties (no embedding), "sections": [{nodeId, title, summary, position,
    chunks: [{nodeId, position, preview (the first 200 characters)}]}]}, sections and chunks by
    position; None when the caller has no such document (absent, hidden, or in the other state
    than ``deleted`` asks for). Several views' documents of one attachmentId: the caller's own
    view's first, then the newest."""
    att = check_attachment_id(attachment_id)
    gd, gs, gc = _guards(caller, deleted)
    rows = db.read(
        f"""
        MATCH (d:KnowledgeDocument) WHERE d.attachmentId = $att AND {gd.clause}
        WITH d ORDER BY CASE WHEN d.nodeId = $own THEN 0 ELSE 1 END, d.createdAt DESC LIMIT 1
        RETURN [k IN keys(d) WHERE k <> 'embedding' | [k, d[k]]] AS pairs, COLLECT {{
            MATCH (d)-[:HAS_SECTION]->(s:Section) WHERE {gs.clause}
            WITH s ORDER BY s.position, s.nodeId
            RETURN s {{
                nodeId: s.nodeId, .title, .summary, .position, chunks: COLLECT {{
                    MATCH (s)-[:HAS_CHUNK]->(c:Chunk) WHERE {gc.clause}
                    WITH c ORDER BY c.position, c.nodeId
                    RETURN c {{nodeId: c.nodeId, .position, preview: left(coalesce(c.content, c.text, ''), $chars)}}
                }}
            }}
        }} AS sections
        """,
        att=att,
        own=document_node_id(id_root(caller), att),
        chars=PREVIEW_CHARS,
        **gd.params,
    )
    if not rows:
        return None
    return {"document": plain(dict(rows[0]["pairs"])), "sections": plain(rows[0]["sections"])}

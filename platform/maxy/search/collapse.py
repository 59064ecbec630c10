"""One hit per ingested document: its KnowledgeDocument, Sections and Chunks fold into one.

A document found at several levels used to fill a result list with the same text (the
document's summary, its sections' summaries, its chunks). ``collapse_documents`` keeps one
hit per document, at the rank of its best member, carrying the best passage: the best-ranked
Chunk's node and properties (its ``content`` whole), or the best member itself when no chunk
was found. Pure: plain hits in, plain hits out, no database.

Members of one document share ``attachmentId`` (ingest writes it on every level, and
re-ingesting replaces the whole hierarchy) and, since the whole hierarchy is written with one
visibility, ``scope`` and ``agents``: a pinned view's copy of the same attachment stays apart.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..graph.allowlist import DOCUMENT_LABELS
from .hits import Hit, Related

PATH_SEPARATOR = " › "  # as ingest joins a chunk's heading path (maxy.ingest.hierarchy.TITLE_SEPARATOR)
# What the path already says, left out of a document hit's default text.
PATH_PROPERTIES = frozenset({"documentTitle", "sectionTitle", "relativePath", "sourcePath"})
# The hit's own data, taken from the passage node; every other Hit field (score, relevance,
# ranks ...) comes from the document's best-ranked member, so the list keeps its order.
_PASSAGE_FIELDS = frozenset({"node_id", "labels", "properties", "related", "valid_from", "happened"})


@dataclass
class DocumentHit(Hit):
    """A document's hits as one: the passage node, ranked as the document's best member."""

    path: str = ""  # Document title › Section heading
    source: str = ""  # the file it came from, inside the folder ingested: advanced/timeouts.md
    attachment_id: str = ""
    folded: list[Hit] = field(default_factory=list)  # the document's other hits, best first
    passage_chunks: list[str] = field(default_factory=list)  # the chunks its text is made of (passages.py)
    passage_cut: int = 0  # characters of those chunks cut to fit the passage budget

    def same_document(self, rel: Related) -> bool:
        """A related node of this very document (its section, a neighbouring chunk ...)."""
        return bool(DOCUMENT_LABELS.intersection(rel.labels)) and rel.properties.get("attachmentId") == (
            self.attachment_id
        )


def document_key(hit: Hit) -> tuple[str, Any, tuple[str, ...]] | None:
    """Which ingested document a hit belongs to, or None for any other node."""
    if not DOCUMENT_LABELS.intersection(hit.labels):
        return None
    attachment = hit.properties.get("attachmentId")
    if not isinstance(attachment, str) or not attachment:
        return None
    agents = hit.properties.get("agents")
    return attachment, hit.properties.get("scope"), tuple(agents) if isinstance(agents, list) else ()


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def document_path(members: Sequence[Hit], passage: Hit) -> str:
    """``Document title › Section heading`` of the passage (just the title for a document or an
    untitled introduction)."""
    props = passage.properties
    doc_title = _text(props.get("documentTitle"))
    if not doc_title:
        for m in members:
            if "KnowledgeDocument" in m.labels:
                doc_title = _text(m.properties.get("title"))
            elif not doc_title:
                doc_title = _text(m.properties.get("documentTitle"))
            if doc_title:
                break
    if "Chunk" in passage.labels:
        heading = _text(props.get("sectionTitle"))
    elif "Section" in passage.labels:
        heading = _text(props.get("title"))
    else:
        heading = ""
        doc_title = doc_title or _text(props.get("title"))
    if heading and heading != doc_title:
        return f"{doc_title}{PATH_SEPARATOR}{heading}" if doc_title else heading
    return doc_title


def document_source(members: Sequence[Hit], passage: Hit) -> str:
    """The file a document came from, as ingested (``advanced/timeouts.md``): the passage's
    ``relativePath``, else a member's, else the name of the document's ``sourcePath``; "" when no
    member says (a document ingested before every level carried it: ``sources`` looks it up)."""
    for hit in (passage, *members):
        relative = _text(hit.properties.get("relativePath"))
        if relative:
            return relative
    for hit in members:
        path = _text(hit.properties.get("sourcePath"))
        if path:
            return path.replace("\\", "/").rsplit("/", 1)[-1]
    return ""


def fold(members: Sequence[Hit]) -> DocumentHit:
    """One document's hits (best first) as one hit."""
    best = members[0]
    passage = next((m for m in members if "Chunk" in m.labels), best)
    values = {
        f.name: getattr(passage if f.name in _PASSAGE_FIELDS else best, f.name)
        for f in dataclasses.fields(Hit)
        if f.init
    }
    return DocumentHit(
        **values,
        path=document_path(members, passage),
        source=document_source(members, passage),
        attachment_id=str(passage.properties.get("attachmentId") or ""),
        folded=[m for m in members if m is not passage],
    )


def collapse_documents(hits: Sequence[Hit]) -> list[Hit]:
    """The hits with each document's levels folded into one hit at its best member's rank;
    every other hit is returned as it is, in its place."""
    groups: dict[tuple[str, Any, tuple[str, ...]], list[Hit]] = {}
    order: list[Hit | tuple[str, Any, tuple[str, ...]]] = []
    for h in hits:
        key = document_key(h)
        if key is None:
            order.append(h)
        elif key in groups:
            groups[key].append(h)
        else:
            groups[key] = [h]
            order.append(key)
    return [fold(groups[item]) if isinstance(item, tuple) else item for item in order]

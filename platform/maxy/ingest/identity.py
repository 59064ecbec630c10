"""Who a document and its nodes are: attachment ids, node ids, content hashes, and the checks of
what a caller names (attachment id, scope, agents).

A KnowledgeDocument's nodeId depends only on the writer's id root (the account id, plus its view
when pinned: ``maxy.graph.confine``) and the attachmentId, so the previous hierarchy of a
document is a unique-index lookup away; section and chunk ids also depend on the content hash
and their position."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from ..config import SCOPE_VALUES
from ..errors import ValidationError
from ..identifiers import check_agent_slug
from .formats import ParsedDocument

HIERARCHY_VERSION = "1"  # part of the content hash: bump it to re-ingest everything
MAX_ATTACHMENT_ID = 512


def _h(*parts: object, n: int = 40) -> str:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:n]


def attachment_id_for_path(path: str | Path) -> str:
    """A stable attachmentId for a file: ``file:`` + sha1 of its absolute resolved path (24 hex)."""
    return "file:" + hashlib.sha1(str(Path(path).resolve()).encode("utf-8")).hexdigest()[:24]


# ``root`` below is the writer's id root: the account id, plus its view when pinned (confine.id_root).
def document_node_id(root: str, attachment_id: str) -> str:
    return "kdoc-" + _h(root, attachment_id)


def section_node_id(root: str, attachment_id: str, chash: str, position: int) -> str:
    return "ksec-" + _h(root, attachment_id, chash, position)


def chunk_node_id(root: str, attachment_id: str, chash: str, section: int, position: int) -> str:
    return "kchk-" + _h(root, attachment_id, chash, section, position)


def content_hash(parsed: ParsedDocument) -> str:
    payload = json.dumps(
        [HIERARCHY_VERSION, parsed.title, parsed.media_type, [[s.heading, s.text] for s in parsed.sections]],
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def check_attachment_id(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("attachmentId", "a non-empty string is required")
    if len(value) > MAX_ATTACHMENT_ID or any(ord(c) < 32 for c in value):
        raise ValidationError("attachmentId", f"at most {MAX_ATTACHMENT_ID} printable characters")
    return value


def check_scope_agents(scope: str | None, agents: Sequence[str] | None) -> list[str] | None:
    if scope is not None and scope not in SCOPE_VALUES:
        raise ValidationError("scope", f"must be one of {list(SCOPE_VALUES)} or omitted")
    if agents is None:
        return None
    if isinstance(agents, str):
        raise ValidationError("agents", "must be a list of agent slugs")
    return sorted({check_agent_slug(a) for a in agents})

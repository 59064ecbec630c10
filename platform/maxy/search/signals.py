"""The few properties BOOST and DEDUP read, for every fused candidate, in one guarded query."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..db import Database
from ..graph.guards import Caller, generic_guard
from .hits import Hit

SIGNAL_PROPERTIES = (
    "compiledTruth",
    "backlinkCount",
    "slug",
    "canonicalName",
    "name",
    "content",
    "body",
    "text",
    "summary",
    "description",
)

Signals = dict[str, dict[str, Any]]  # nodeId -> the signal properties it has


def load_signals(db: Database, caller: Caller, hits: Sequence[Hit]) -> Signals:
    if not hits:
        return {}
    guard = generic_guard(caller, "n")
    rows = db.read(
        f"""
        UNWIND $ids AS id
        MATCH (n:Node {{nodeId: id}}) WHERE {guard.clause}
        RETURN n.nodeId AS id, [k IN $keys WHERE n[k] IS NOT NULL | [k, n[k]]] AS props
        """,
        ids=[h.node_id for h in hits],
        keys=list(SIGNAL_PROPERTIES),
        **guard.params,
    )
    return {r["id"]: dict(r["props"]) for r in rows}

"""EXACT NAME: a query that is exactly a node's name puts that node first.

An agent that looks up what it wrote by its unique name ("ACME-7731", "Globex Corporation")
expects it at the top, yet among hundreds of similar nodes the scaled vector list can outweigh
one exact keyword hit. The query's canonical form (``maxy.graph.names.name_key``) is looked up
in the ``nameKey`` index, through the guards and the time filters; each node found is moved
above every fused hit (several exact matches keep their fused order).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..db import Database
from ..graph.guards import Caller, Guard, both, node_guard, outside_community
from ..graph.names import name_key
from .hits import Hit

MAX_EXACT = 20


def exact_hits(db: Database, caller: Caller, labels: Sequence[str] | None, when: Guard | None, query: str) -> list[Hit]:
    """The nodes in the search's view (guards, labels, time filters) whose canonical name is the query's."""
    key = name_key(query)
    if key is None:
        return []
    guard = both(both(node_guard(caller, "n"), outside_community("n")), when)
    label_filter = "AND any(l IN labels(n) WHERE l IN $labels)" if labels else ""
    rows = db.read(
        f"""
        MATCH (n:Node {{nameKey: $key}}) WHERE {guard.clause} {label_filter}
        RETURN n.nodeId AS id, [l IN labels(n) WHERE l <> 'Node'] AS labels ORDER BY n.updatedAt DESC LIMIT $cap
        """,
        key=key,
        labels=list(labels or []),
        cap=MAX_EXACT,
        **guard.params,
    )
    return [Hit(r["id"], r["labels"]) for r in rows]


def promote(hits: list[Hit], exact: list[Hit]) -> list[Hit]:
    """``hits`` with the exact matches first (added when fusion did not have them)."""
    if not exact:
        return hits
    by_id = {h.node_id: h for h in hits}
    top = max((h.score for h in hits), default=0.0)
    for match in exact:
        hit = by_id.setdefault(match.node_id, match)
        hit.score = top + 1.0 + hit.score
        hit.ranks["exact"] = 1
    return sorted(by_id.values(), key=lambda h: -h.score)

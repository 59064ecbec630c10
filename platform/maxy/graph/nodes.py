"""Reading nodes by id, through the caller's guards.

``read_node`` is the one way to load a node to update it: a node the caller may not read
(absent, soft-deleted, of another account, outside pinned scopes or agent) is ``None``, so
a writer can refuse it exactly like one that does not exist. Tools reach it through
``maxy.plugins.load_node``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..db import Database
from .allowlist import RESERVED_PROPERTIES
from .guards import Caller, both, node_guard, outside_community


def read_node(db: Database, caller: Caller, node_id: str, label: str | None = None) -> dict[str, Any] | None:
    """A live node of the caller's account (guarded), with its labels, writable properties
    (``properties``), platform-managed ones (``meta``), scope and agents; ``None`` when the
    caller cannot read it (a community record too: ``outside_community``). ``label`` must come
    from the allow-list (it is part of the query)."""
    guard = both(node_guard(caller, "n"), outside_community("n"))
    label_filter = f"AND n:`{label}`" if label else ""
    rows = db.read(
        f"""
        MATCH (n:Node {{nodeId: $id}}) WHERE {guard.clause} {label_filter}
        RETURN n.nodeId AS nodeId, [l IN labels(n) WHERE l <> 'Node'] AS labels,
               [k IN keys(n) WHERE k <> 'embedding' | [k, n[k]]] AS pairs
        """,
        id=node_id,
        **guard.params,
    )
    if not rows:
        return None
    row = rows[0]
    all_props = dict(row["pairs"])
    return {
        "nodeId": row["nodeId"],
        "labels": row["labels"],
        "scope": all_props.get("scope"),
        "agents": all_props.get("agents"),
        "meta": {k: v for k, v in all_props.items() if k in RESERVED_PROPERTIES},
        "properties": {k: v for k, v in all_props.items() if k not in RESERVED_PROPERTIES},
    }


def readable_node_ids(db: Database, caller: Caller, node_ids: Sequence[str]) -> set[str]:
    """The ids among ``node_ids`` of nodes the caller can read (never a community record)."""
    guard = both(node_guard(caller, "n"), outside_community("n"))
    rows = db.read(
        f"UNWIND $ids AS id MATCH (n:Node {{nodeId: id}}) WHERE {guard.clause} RETURN collect(n.nodeId) AS found",
        ids=list(node_ids),
        **guard.params,
    )
    return set(rows[0]["found"]) if rows else set()

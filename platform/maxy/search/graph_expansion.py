"""EXPAND GRAPH: the final hits' properties, and their one-hop neighbourhood, guarded."""

from __future__ import annotations

from collections.abc import Sequence

from ..db import Database
from ..graph.guards import Caller, Guard, both, node_guard, outside_community, related_guard
from .hits import Hit, Related

MAX_RELATED = 20
# Internal or bulky fields never shown to an agent.
HIDDEN_PROPERTIES = frozenset({"embedding", "accountId"})


# The visible property keys, filtered server-side so embeddings never cross the wire.
_KEYS = "[k IN keys({v}) WHERE NOT k IN " + repr(sorted(HIDDEN_PROPERTIES)) + "]"
# The properties as [key, value] pairs.
_PROPS = "[k IN " + _KEYS + " | [k, {v}[k]]]"
# The same as two lists, the keys and their values: two objects per node for Python to build
# instead of one per property (the search paths read hundreds of nodes per search).
_COLUMNS = "[" + _KEYS + ", [k IN " + _KEYS + " | {v}[k]]]"


def properties_of(var: str) -> str:
    """The Cypher expression for ``var``'s visible properties as ``[key, value]`` pairs."""
    return _PROPS.format(v=var)


def visible(pairs: list) -> dict:
    """The properties an agent sees, from ``properties_of``'s pairs."""
    return {k: v for k, v in pairs if k not in HIDDEN_PROPERTIES}


def property_columns(var: str) -> str:
    """The Cypher expression for ``var``'s visible properties as ``[keys, values]``."""
    return _COLUMNS.format(v=var)


def visible_columns(columns: list) -> dict:
    """The properties an agent sees, from ``property_columns``' two lists (which leave out
    ``HIDDEN_PROPERTIES`` already)."""
    keys, values = columns
    return dict(zip(keys, values, strict=True))


def load_properties(db: Database, caller: Caller, hits: Sequence[Hit]) -> list[Hit]:
    """Fill in the properties of the hits whose path did not bring them (guards re-applied);
    hits that vanished meanwhile are dropped."""
    missing = [h for h in hits if not h.loaded]
    if not missing:
        return list(hits)
    guard = both(node_guard(caller, "n"), outside_community("n"))
    rows = db.read_packed(
        f"""
        UNWIND $ids AS id
        MATCH (n:Node {{nodeId: id}}) WHERE {guard.clause}
        RETURN collect([n.nodeId, labels(n), {properties_of("n")}]) AS rows
        """,
        ("id", "labels", "props"),
        ids=[h.node_id for h in missing],
        **guard.params,
    )
    found = {r["id"]: r for r in rows}
    out = []
    for h in hits:
        if not h.loaded:
            row = found.get(h.node_id)
            if row is None:
                continue
            h.labels = [x for x in row["labels"] if x != "Node"]
            h.properties = visible(row["props"])
            h.loaded = True
        out.append(h)
    return out


def expand(
    db: Database, caller: Caller, hits: Sequence[Hit], limit: int = MAX_RELATED, *, when: Guard | None = None
) -> None:
    """Attach up to ``limit`` related nodes per hit, one hop, both directions; ``when`` (on
    ``related``) hides neighbours outside the time filters, e.g. superseded facts."""
    if not hits:
        return
    guard = both(node_guard(caller, "n"), outside_community("n"))
    rguard = both(both(related_guard(caller, "related"), outside_community("related")), when)
    rows = db.read_packed(
        f"""
        UNWIND $ids AS id
        MATCH (n:Node {{nodeId: id}}) WHERE {guard.clause}
        CALL (n) {{
            MATCH (n)-[r]-(related:Node)
            WHERE {rguard.clause}
            RETURN type(r) AS relType,
                   CASE WHEN startNode(r) = n THEN 'outgoing' ELSE 'incoming' END AS direction,
                   labels(related) AS labels, {properties_of("related")} AS props
            LIMIT $limit
        }}
        RETURN collect([id, relType, direction, labels, props]) AS rows
        """,
        ("id", "relType", "direction", "labels", "props"),
        ids=[h.node_id for h in hits],
        limit=limit,
        **{**guard.params, **rguard.params},
    )
    by_id = {h.node_id: h for h in hits}
    for r in rows:
        by_id[r["id"]].related.append(
            Related(r["relType"], r["direction"], [x for x in r["labels"] if x != "Node"], visible(r["props"]))
        )

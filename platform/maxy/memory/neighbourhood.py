"""Reading nodes back by id, with their neighbourhood: what ``memory-get`` and ``maxy memory
get`` run.

Each requested id the caller can read (``node_guard``) comes back whole: labels, scope,
agents, properties and the platform's timestamps (never the embedding), including its
``validFrom`` / ``validUntil``, whether or not it is still true. An id it cannot read is
listed in ``missing``, the same whether it is absent, forgotten, foreign, hidden or a community
record (those are read only through the community's tools: ``outside_community``).

Its neighbours are the nodes reached through up to ``hops`` relationships (either
direction; only ``types`` when given), each by one of its shortest paths. Every node on the
path, not only its end, passes the related-node guard (``related_guard``, layer 4) and the
validity filter (``validity_clause``: facts true now, at ``as_of``, or all with
``include_history``), so a hidden or superseded node blocks the way: nothing behind it is
reached through it. ``budget`` caps the neighbours of all requested nodes together, nearest
first, and ``truncated`` says when it cut.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ..db import Database
from ..errors import ValidationError
from ..graph.allowlist import RESERVED_PROPERTIES, check_relationship_type, quote
from ..graph.guards import Caller, both, node_guard, outside_community, related_guard
from ..graph.validity import to_instant, validity_clause
from ..logs import log_line, short

MAX_IDS = 50
MAX_HOPS = 3
MAX_BUDGET = 500
DEFAULT_BUDGET = 50
NEIGHBOUR_TEXT_CHARS = 500
# Platform properties shown beside a node's own (the rest are internal: keys, ids, vectors).
META_PROPERTIES = ("createdAt", "updatedAt", "createdBy")
_HIDDEN = ["embedding", "accountId", "nameKey", "aliasKeys", "deletedAt"]


def get_nodes(
    db: Database,
    caller: Caller,
    node_ids: Sequence[str],
    *,
    hops: int = 1,
    types: Sequence[str] | None = None,
    budget: int = DEFAULT_BUDGET,
    as_of: str | None = None,
    include_history: bool = False,
) -> dict[str, Any]:
    """The readable nodes among ``node_ids`` with their neighbourhood; see the module doc.

    Returns ``{"nodes": [{nodeId, labels, scope, agents, meta, properties, neighbours: [{nodeId,
    labels, properties (long text trimmed), hops, path: [{type, direction, nodeId}]}]}],
    "missing": [ids], "truncated": bool}``; a path step's direction is ``out`` when its
    relationship points from the previous node of the path to the next, ``in`` otherwise.
    """
    started = time.perf_counter()
    ids = _check_ids(node_ids)
    hops = _check_range(hops, "hops", 0, MAX_HOPS)
    budget = _check_range(budget, "budget", 1, MAX_BUDGET)
    rel_types = None if types is None else _check_types(types)
    instant = to_instant(as_of, "asOf") if as_of is not None else None
    found = _read_nodes(db, caller, ids)
    truncated = False
    if hops and found:
        rows = _neighbour_rows(db, caller, list(found), hops, rel_types, budget, instant, include_history)
        truncated = _attach(found, rows, budget)
    nodes = [found[i] for i in ids if i in found]
    missing = [i for i in ids if i not in found]
    log_line(
        "memory",
        op="get",
        ids=len(ids),
        found=len(nodes),
        missing=len(missing),
        hops=hops,
        types=rel_types or "-",
        neighbours=sum(len(n["neighbours"]) for n in nodes),
        truncated=truncated,
        accountId=short(caller.account_id),
        ms=round((time.perf_counter() - started) * 1000),
    )
    return {"nodes": nodes, "missing": missing, "truncated": truncated}


# -- checks ---------------------------------------------------------------------------------
def _check_ids(node_ids: object) -> list[str]:
    if isinstance(node_ids, str):
        node_ids = [node_ids]
    if not isinstance(node_ids, (list, tuple)) or not node_ids:
        raise ValidationError("nodeIds", "one node id or a non-empty list of node ids")
    out: list[str] = []
    for i, node_id in enumerate(node_ids):
        if not isinstance(node_id, str) or not node_id.strip():
            raise ValidationError(f"nodeIds[{i}]", "a node id (non-empty string)")
        if node_id.strip() not in out:
            out.append(node_id.strip())
    if len(out) > MAX_IDS:
        raise ValidationError("nodeIds", f"at most {MAX_IDS} ids per call (got {len(out)})")
    return out


def _check_range(value: object, field: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValidationError(field, f"an integer from {lo} to {hi}")
    return value


def _check_types(types: object) -> list[str]:
    if isinstance(types, str):
        types = [types]
    if not isinstance(types, (list, tuple)) or not types:
        raise ValidationError("types", "a non-empty list of relationship types (omit it for every type)")
    return list(dict.fromkeys(check_relationship_type(t, field="types") for t in types))


# -- the requested nodes --------------------------------------------------------------------
def _read_nodes(db: Database, caller: Caller, ids: list[str]) -> dict[str, dict[str, Any]]:
    guard = both(node_guard(caller, "n"), outside_community("n"))
    rows = db.read(
        f"""
        UNWIND $ids AS id
        MATCH (n:Node {{nodeId: id}}) WHERE {guard.clause}
        RETURN n.nodeId AS nodeId, [l IN labels(n) WHERE l <> 'Node'] AS labels,
               [k IN keys(n) WHERE NOT k IN $hidden | [k, n[k]]] AS pairs
        """,
        ids=ids,
        hidden=_HIDDEN,
        **guard.params,
    )
    found: dict[str, dict[str, Any]] = {}
    for row in rows:
        props = dict(row["pairs"])
        found[row["nodeId"]] = {
            "nodeId": row["nodeId"],
            "labels": row["labels"],
            "scope": props.get("scope"),
            "agents": props.get("agents"),
            "meta": {k: props[k] for k in META_PROPERTIES if k in props},
            "properties": {k: v for k, v in sorted(props.items()) if k not in RESERVED_PROPERTIES},
            "neighbours": [],
        }
    return found


# -- the neighbourhood ----------------------------------------------------------------------
def _neighbour_query(caller: Caller, hops: int, rel_types: list[str] | None, validity: Any) -> tuple[str, dict]:
    """Every node of the quantified path is bound to ``x`` in turn, so the guard and the
    validity filter hold on each hop (a hidden node prunes the search there)."""
    guard = both(node_guard(caller, "n"), outside_community("n"))
    step = both(both(related_guard(caller, "x"), outside_community("x")), validity)
    rel = ":" + "|".join(quote(t) for t in rel_types) if rel_types else ""
    query = f"""
    UNWIND $ids AS id
    MATCH (n:Node {{nodeId: id}}) WHERE {guard.clause}
    CALL (n) {{
        MATCH p = ANY SHORTEST (n) (()-[{rel}]-(x:Node WHERE {step.clause})){{1,{hops}}} (m)
        WHERE m <> n
        WITH m, p, length(p) AS hops
        ORDER BY hops, m.nodeId
        LIMIT $limit
        RETURN m, hops,
               [i IN range(0, hops - 1) | {{
                   type: type(relationships(p)[i]),
                   direction: CASE WHEN startNode(relationships(p)[i]) = nodes(p)[i] THEN 'out' ELSE 'in' END,
                   nodeId: nodes(p)[i + 1].nodeId}}] AS path
    }}
    RETURN id, m.nodeId AS nodeId, [l IN labels(m) WHERE l <> 'Node'] AS labels,
           [k IN keys(m) WHERE NOT k IN $hidden | [k, m[k]]] AS pairs, hops, path
    """
    return query, {**guard.params, **step.params}


def _neighbour_rows(
    db: Database,
    caller: Caller,
    ids: list[str],
    hops: int,
    rel_types: list[str] | None,
    budget: int,
    instant: str | None,
    include_history: bool,
) -> list[dict[str, Any]]:
    validity = validity_clause("x", as_of=instant, include_history=include_history)
    query, params = _neighbour_query(caller, hops, rel_types, validity)
    return db.read(query, ids=ids, limit=budget + 1, hidden=[*_HIDDEN, *RESERVED_PROPERTIES], **params)


def _attach(found: dict[str, dict[str, Any]], rows: list[dict[str, Any]], budget: int) -> bool:
    """Give each node its neighbours, nearest first over all nodes, at most ``budget`` in all;
    True when some were left out."""
    order = {node_id: i for i, node_id in enumerate(found)}
    rows = sorted(rows, key=lambda r: (r["hops"], order[r["id"]], r["nodeId"]))
    for row in rows[:budget]:
        found[row["id"]]["neighbours"].append(
            {
                "nodeId": row["nodeId"],
                "labels": row["labels"],
                "properties": {k: _trim(v) for k, v in sorted(row["pairs"])},
                "hops": row["hops"],
                "path": row["path"],
            }
        )
    return len(rows) > budget


def _trim(value: Any) -> Any:
    if isinstance(value, str) and len(value) > NEIGHBOUR_TEXT_CHARS:
        return value[:NEIGHBOUR_TEXT_CHARS] + f"… [{len(value) - NEIGHBOUR_TEXT_CHARS} more chars]"
    if isinstance(value, list):
        return [_trim(v) for v in value]
    return value

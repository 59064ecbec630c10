"""Writing one memory: what ``memory-write``, ``maxy memory write`` and ``Memory.write`` run.

A write means what it says:

- ``node_id`` updates that node, and is refused when the caller cannot read one with that id
  (absent, forgotten, hidden and foreign ids get the same answer);
- a node with no meaningful property (every value empty) is refused, and so is a value over
  ``MAX_VALUE_CHARS`` or a node over ``MAX_NODE_CHARS`` in all (long text belongs in a document);
- an entity (``ENTITY_LABELS``) whose canonical name or alias matches a live node of the same
  label in the caller's view resolves to it (``resolved``) instead of making a second one,
  unless ``resolve=False``; see ``merge`` for what the merge keeps. Writers that create the
  same entity at once (many agents on one account) make one node: a new entity's transaction
  takes a lock per lookup key and looks again under it, and a writer that finds the entity
  made meanwhile resolves into it (``claim_names``);
- ``valid_from`` / ``valid_until`` say when the fact was true; ``supersede`` ends earlier facts:
  each gets ``validUntil`` (the new fact's ``validFrom``, by default now) and a
  ``SUPERSEDED_BY`` edge to the new one, in the same transaction. Nothing is deleted;
- a node written with ABOUT edges records the names of what it is about (``about``, unless the
  write sets it), so its text says who a fact concerns even when the fact does not name them.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import neo4j

from ..errors import ValidationError
from ..graph.allowlist import ENTITY_LABELS, check_labels
from ..graph.confine import not_writable
from ..graph.guards import Caller, both, node_guard, outside_community
from ..graph.names import lookup_keys
from ..graph.nodes import read_node
from ..graph.validity import now_instant, to_instant, validity_clause
from ..graph.write import Edge, GraphWriter, NodeSpec, WriteResult
from ..logs import log_line, short
from .merge import merge_properties

MAX_VALUE_CHARS = 20_000
MAX_NODE_CHARS = 100_000
MAX_SUPERSEDE = 20
TIME_PROPS = ("validFrom", "validUntil")
NAME_RACE_ATTEMPTS = 5  # a writer that lost the race for a new entity's name resolves again


class NameTaken(Exception):
    """Another writer created an entity with this name while this one was preparing its write."""


@dataclass(frozen=True)
class MemoryWrite:
    """What to write: the memory-write tool's arguments, checked by :func:`remember`."""

    labels: Sequence[str]
    properties: dict[str, Any]
    edges: Sequence[Edge] = ()
    node_id: str | None = None
    scope: str | None = None
    agents: Sequence[str] | None = None
    resolve: bool = True
    supersede: Sequence[str] = ()
    source: str | None = None  # the Task or Conversation that produced it (PRODUCED edge)
    valid_from: object = None  # when it became true (ISO 8601); same as properties.validFrom
    valid_until: object = None  # when it stops being true; same as properties.validUntil


def remember(writer: GraphWriter, memory: MemoryWrite) -> dict[str, Any]:
    """Write ``memory`` inside the writer's view; returns nodeId, labels, created, embedded,
    provenance, resolved (the nodeId merged into, or None) and superseded (ids)."""
    for attempt in range(1, NAME_RACE_ATTEMPTS + 1):
        try:
            return _remember_once(writer, memory)
        except NameTaken as taken:
            log_line(
                "memory",
                "name-race",
                level=logging.INFO,
                existing=short(str(taken)),
                attempt=attempt,
                agent=writer.created_by,
            )
    return _remember_once(writer, memory)


def _remember_once(writer: GraphWriter, memory: MemoryWrite) -> dict[str, Any]:
    labels = check_labels(memory.labels, field="labels")
    if not isinstance(memory.properties, dict):
        raise ValidationError("properties", "an object of property names to values")
    given = {"validFrom": memory.valid_from, "validUntil": memory.valid_until}
    props = _checked_properties({**memory.properties, **{k: v for k, v in given.items() if v is not None}})
    spec = NodeSpec(labels, props, edges=list(memory.edges), scope=memory.scope, agents=memory.agents)
    resolved = None
    claim: Callable[[neo4j.ManagedTransaction], None] | None = None
    if memory.node_id is not None:
        _update_in_place(writer.db, writer.caller, memory.node_id, spec)
    elif memory.resolve:
        resolved = _resolve(writer.db, writer.caller, spec)
        if resolved is None:
            claim = claim_names(writer.caller, spec)
    _require_meaningful(spec.properties)
    _note_about(writer.db, writer.caller, spec)
    olds = _superseded(writer.db, writer.caller, memory.supersede, spec)
    _add_provenance(spec, memory.source)
    results = writer.write_many([spec, *olds], atomic=bool(olds), before_write=claim)
    result: WriteResult = results[0]
    if resolved is not None or olds:
        log_line(
            "memory",
            op="write",
            nodeId=short(result.node_id),
            resolved=short(resolved) if resolved else "-",
            superseded=len(olds),
            agent=writer.created_by,
        )
    return {
        "nodeId": result.node_id,
        "labels": list(result.labels),
        "created": result.created,
        "embedded": result.embedded,
        "provenance": result.provenance,
        "resolved": resolved,
        "superseded": [o.node_id for o in olds],
    }


# -- checks ---------------------------------------------------------------------------------
def _checked_properties(properties: dict[str, Any]) -> dict[str, Any]:
    props = dict(properties)
    total = 0
    for key, value in props.items():
        size = _chars(value)
        if size > MAX_VALUE_CHARS:
            raise ValidationError(
                f"properties.{key}",
                f"{size:,} characters; at most {MAX_VALUE_CHARS:,} per value "
                "(shorten it, or store long text as a document with memory-ingest); nothing was written",
            )
        total += size
    if total > MAX_NODE_CHARS:
        raise ValidationError(
            "properties",
            f"{total:,} characters in all; at most {MAX_NODE_CHARS:,} per node "
            "(split it into several nodes, or ingest it as a document); nothing was written",
        )
    for key in TIME_PROPS:
        if props.get(key) is not None:
            props[key] = to_instant(props[key], f"properties.{key}")
    if props.get("validFrom") and props.get("validUntil") and props["validUntil"] <= props["validFrom"]:
        raise ValidationError("properties.validUntil", "must be later than validFrom; nothing was written")
    return props


def _chars(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (list, tuple)):
        return sum(_chars(v) for v in value)
    return 0


def _meaningful(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, (list, tuple)):
        return any(_meaningful(v) for v in value)
    return True


def _require_meaningful(props: dict[str, Any]) -> None:
    if not any(_meaningful(v) for k, v in props.items() if k not in TIME_PROPS and k != "accountId"):
        raise ValidationError(
            "properties",
            "nothing to remember: give at least one non-empty property (e.g. name, text or description)",
        )


# -- updates and entity resolution -------------------------------------------------------
def _update_in_place(db: Any, caller: Caller, node_id: str, spec: NodeSpec) -> None:
    existing = read_node(db, caller, node_id) if isinstance(node_id, str) else None
    if existing is None:  # absent, deleted, hidden or foreign: one answer, so no id is confirmed
        raise ValidationError(
            "nodeId", f"no node {node_id!r} that you can write; nothing was written (omit nodeId to create a node)"
        )
    # An update keeps the node's visibility unless told otherwise (the primitive sets scope
    # and agents on every write: omitting them must not widen the node).
    spec.node_id = node_id
    spec.scope = existing["scope"] if spec.scope is None else spec.scope
    spec.agents = existing["agents"] if spec.agents is None else spec.agents
    spec.properties = {**existing["properties"], **spec.properties}


def _resolve(db: Any, caller: Caller, spec: NodeSpec) -> str | None:
    """The live node of the same entity label whose name or alias matches the write's; merged
    into ``spec`` (which then updates it). None when nothing matches."""
    entity_labels = sorted(ENTITY_LABELS.intersection(spec.labels))
    keys = lookup_keys(spec.labels, spec.properties) if entity_labels else []
    if not keys:
        return None
    query, params = _match_query(caller, keys, entity_labels)
    rows = db.read(query, **params)
    if not rows:
        return None
    existing = read_node(db, caller, rows[0]["id"])
    if existing is None:
        return None
    spec.node_id = existing["nodeId"]
    spec.labels = list(dict.fromkeys([*existing["labels"], *spec.labels]))
    spec.properties = merge_properties(existing["properties"], spec.properties)
    return existing["nodeId"]


def _match_query(caller: Caller, keys: list[str], entity_labels: list[str]) -> tuple[str, dict[str, Any]]:
    """The query for the live entity in the caller's view that one of ``keys`` names (name first)."""
    guard = both(node_guard(caller, "n"), outside_community("n"))
    current = validity_clause("n")
    query = f"""
        MATCH (n:Node) WHERE (n.nameKey IN $keys OR any(k IN coalesce(n.aliasKeys, []) WHERE k IN $keys))
          AND any(l IN labels(n) WHERE l IN $labels) AND {guard.clause} AND {current.clause}
        RETURN n.nodeId AS id ORDER BY CASE WHEN n.nameKey IN $keys THEN 0 ELSE 1 END, n.createdAt LIMIT 1
        """
    return query, {"keys": keys, "labels": entity_labels, **guard.params, **current.params}


# One transaction at a time may create an entity under a name: MERGE on a lock id takes the
# nodeId uniqueness constraint's lock for it until commit (the node itself is gone at once).
_LOCK_NAMES = "UNWIND $locks AS lock MERGE (l:Node {nodeId: lock}) DELETE l"


def claim_names(caller: Caller, spec: NodeSpec) -> Callable[[neo4j.ManagedTransaction], None] | None:
    """For a new entity: the ``before_write`` step that locks its lookup keys in this account
    (sorted, so two writers never wait on each other in a circle), then looks for the entity
    again; raises :class:`NameTaken` when another writer made it meanwhile (nothing is written,
    and :func:`remember` resolves into it)."""
    entity_labels = sorted(ENTITY_LABELS.intersection(spec.labels))
    keys = lookup_keys(spec.labels, spec.properties) if entity_labels else []
    if not keys:
        return None
    locks = sorted({_lock_id(caller.account_id, key) for key in keys})
    query, params = _match_query(caller, keys, entity_labels)

    def claim(tx: neo4j.ManagedTransaction) -> None:
        tx.run(_LOCK_NAMES, locks=locks).consume()
        row = tx.run(query, params).single()
        if row is not None:
            raise NameTaken(row["id"])

    return claim


def _lock_id(account_id: str, key: str) -> str:
    return "name-lock:" + hashlib.sha256(f"{account_id}\x1f{key}".encode()).hexdigest()[:40]


# -- supersede ------------------------------------------------------------------------------
def _superseded(db: Any, caller: Caller, ids: Sequence[str], spec: NodeSpec) -> list[NodeSpec]:
    """The earlier facts ``spec`` replaces, as updates closing their validity; ``spec`` gains
    the SUPERSEDED_BY edges (old -> new) and, when it has none, ``validFrom`` = now."""
    if isinstance(ids, str):
        ids = [ids]
    ids = list(dict.fromkeys(ids))
    if not ids:
        return []
    if len(ids) > MAX_SUPERSEDE:
        raise ValidationError("supersede", f"at most {MAX_SUPERSEDE} node ids")
    if spec.node_id is not None and spec.node_id in ids:
        raise ValidationError("supersede", "a fact cannot supersede itself")
    start = spec.properties.get("validFrom") or now_instant()
    spec.properties = {**spec.properties, "validFrom": start}
    olds = []
    for old_id in ids:
        old = read_node(db, caller, old_id) if isinstance(old_id, str) else None
        if old is None:
            log_line("graph-write", "reject", level=logging.WARNING, reason="not-writable", field="supersede")
            raise not_writable("supersede", old_id)
        props = old["properties"]
        if props.get("validUntil") is not None:
            raise ValidationError(
                "supersede", f"{old_id!r} already stopped being true at {props['validUntil']}; nothing was written"
            )
        if props.get("validFrom") is not None and str(props["validFrom"]) >= start:
            raise ValidationError(
                "supersede",
                f"{old_id!r} was true from {props['validFrom']}, not before the new fact's validFrom {start}; "
                "give a later validFrom; nothing was written",
            )
        olds.append(NodeSpec(old["labels"], {"validUntil": start}, node_id=old_id))
        spec.edges = [*spec.edges, Edge("SUPERSEDED_BY", old_id, "in")]
    return olds


def _note_about(db: Any, caller: Caller, spec: NodeSpec) -> None:
    targets = [e.target for e in spec.edges if e.type == "ABOUT" and e.direction == "out"]
    if not targets or spec.properties.get("about") or ENTITY_LABELS.intersection(spec.labels):
        return
    guard = both(node_guard(caller, "n"), outside_community("n"))
    rows = db.read(
        f"UNWIND $ids AS id MATCH (n:Node {{nodeId: id}}) WHERE {guard.clause} AND n.name IS NOT NULL "
        "RETURN n.name AS name",
        ids=targets,
        **guard.params,
    )
    names = list(dict.fromkeys(str(r["name"]) for r in rows))
    if names:
        spec.properties = {**spec.properties, "about": ", ".join(names)}


def parse_edges(edges: object) -> list[Edge]:
    """Edges as tools and scripts give them: ``[{type, target, direction?, properties?}]``
    (direction ``out``/``outgoing`` or ``in``/``incoming``), or ``Edge`` objects."""
    if edges is None:
        return []
    if not isinstance(edges, (list, tuple)):
        raise ValidationError("edges", "a list of {type, target, direction} objects")
    return [e if isinstance(e, Edge) else _edge(i, e) for i, e in enumerate(edges)]


def _edge(i: int, e: object) -> Edge:
    where = f"edges[{i}]"
    if not isinstance(e, dict):
        raise ValidationError(where, "an object with type, target and optional direction")
    unknown = set(e) - {"type", "target", "direction", "properties"}
    if unknown:
        raise ValidationError(where, f"unknown key(s) {sorted(unknown)}; use type, target, direction, properties")
    if not isinstance(e.get("type"), str):
        raise ValidationError(f"{where}.type", "a relationship type is required")
    if not isinstance(e.get("target"), str):
        raise ValidationError(f"{where}.target", "the target's nodeId is required")
    raw = e.get("direction") or "out"
    direction = {"outgoing": "out", "incoming": "in"}.get(raw, raw)
    if direction not in ("out", "in"):
        raise ValidationError(f"{where}.direction", "'out' (this node -> target) or 'in' (target -> this node)")
    props = e.get("properties") or {}
    if not isinstance(props, dict):
        raise ValidationError(f"{where}.properties", "an object")
    return Edge(e["type"], e["target"], "in" if direction == "in" else "out", props)


def _add_provenance(spec: NodeSpec, source: str | None) -> None:
    if source is None or source == spec.node_id:
        return  # never a self-loop when the conversation (or task) itself is updated
    if not any(e.type == "PRODUCED" and e.direction == "in" and e.target == source for e in spec.edges):
        spec.edges = [Edge("PRODUCED", source, "in"), *spec.edges]  # the provenance check sees it

"""Forgetting: what ``memory-forget``, ``memory-remove-relation``, ``maxy memory forget`` and
``maxy memory unlink`` run.

- ``forget_node`` soft-deletes one node: it gets ``deletedAt`` (UTC ISO 8601), so every read
  path hides it at once (guard layer 1) and ``maxy purge`` hard-deletes it, with its
  relationships, after the grace period (7 days by default). A KnowledgeDocument is refused:
  ``memory-delete`` (attachmentId) deletes it with its sections and chunks;
- ``remove_relation`` hard-deletes the relationships of one type from a source to a target.

Both act only inside the writer's view (``maxy.graph.confine``): a node the caller cannot
read (absent, already forgotten, of another account, outside pinned scopes or agent) gets the
one ``not-writable`` refusal, so no answer tells that a hidden id exists. A pinned caller
forgets only nodes no other view sees (``is_confined``). One ``[memory] op=forget|unlink``
line is logged per call, done or refused.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any

import neo4j

from ..errors import GraphWriteError, MaxyError, ValidationError
from ..graph.allowlist import check_relationship_type, owner_of, quote
from ..graph.confine import is_confined, not_writable
from ..graph.guards import both
from ..graph.write import GraphWriter
from ..logs import log_line, short

# History written by supersession (``maxy.memory.remember``): what replaced what stays recorded.
HISTORY_TYPES = frozenset({"SUPERSEDED_BY"})


class Refused(ValidationError):
    """A refusal of a readable target, with the short reason the log line gives."""

    def __init__(self, field: str, reason: str, code: str):
        super().__init__(field, reason)
        self.code = code


def forget_node(writer: GraphWriter, node_id: str) -> dict[str, Any]:
    """Soft-delete the node ``node_id`` inside the writer's view; returns nodeId, forgotten
    (true), labels and deletedAt.

    Not idempotent: once forgotten a node is no longer readable, so forgetting it again gets
    the same ``not-writable`` refusal as an id that never existed. Forgetting a fact that
    superseded others does not bring them back (they keep their ``validUntil``).
    """
    started = time.perf_counter()
    try:
        node_id = _check_id(node_id, "nodeId")
        stamp = datetime.now(UTC).isoformat()
        row = writer.db.write_tx(lambda tx: _forget_in_tx(tx, writer, node_id, stamp))
    except MaxyError as err:
        _log("forget", writer, started, nodeId=short(str(node_id)), result="refused", reason=_reason(err))
        raise
    _log("forget", writer, started, nodeId=short(node_id), labels=row["labels"], result="forgotten")
    return {"nodeId": node_id, "forgotten": True, "labels": row["labels"], "deletedAt": stamp}


def remove_relation(writer: GraphWriter, source: str, rel_type: str, target: str) -> dict[str, Any]:
    """Delete every ``rel_type`` relationship from ``source`` to ``target`` (both nodes the
    writer can read); returns source, type, target and removed (how many).

    Relationships hold no content, so they are hard-deleted at once (no grace period). History
    edges (``SUPERSEDED_BY``) are refused: forget the superseded or superseding node instead.
    """
    started = time.perf_counter()
    fields: dict[str, Any] = {"source": short(str(source)), "type": rel_type, "target": short(str(target))}
    try:
        if rel_type in HISTORY_TYPES:
            raise Refused("type", "history edges cannot be removed; forget the node instead", "history-edge")
        rel_type = check_relationship_type(rel_type, field="type")
        source, target = _check_id(source, "source"), _check_id(target, "target")
        removed = writer.db.write_tx(lambda tx: _unlink_in_tx(tx, writer, source, rel_type, target))
    except MaxyError as err:
        _log("unlink", writer, started, **fields, result="refused", reason=_reason(err))
        raise
    _log("unlink", writer, started, **fields, removed=removed, result="removed")
    return {"source": source, "type": rel_type, "target": target, "removed": removed}


# -- in the transaction ---------------------------------------------------------------------
def _forget_in_tx(tx: neo4j.ManagedTransaction, writer: GraphWriter, node_id: str, stamp: str) -> dict[str, Any]:
    guard = writer.read_guard("n")
    record = tx.run(
        f"""
        MATCH (n:Node {{nodeId: $id}}) WHERE {guard.clause}
        RETURN [l IN labels(n) WHERE l <> 'Node'] AS labels, n.scope AS scope, n.agents AS agents,
               n.attachmentId AS attachmentId, n.protocol AS protocol
        """,
        id=node_id,
        **guard.params,
    ).single()
    if record is None:  # absent, forgotten, foreign or hidden: one answer
        raise not_writable("nodeId", node_id)
    row = record.data()
    if "KnowledgeDocument" in row["labels"]:
        raise Refused(
            "nodeId",
            f"{node_id!r} is a KnowledgeDocument: delete it with memory-delete (attachmentId "
            f"{row['attachmentId']!r}, `maxy delete --attachment`), which removes its sections and chunks too; "
            "nothing was forgotten",
            "document",
        )
    _check_owner(writer, "nodeId", node_id, row["labels"], row.pop("protocol"), "forgotten")
    if writer.caller.pinned and not is_confined(writer.caller, row["scope"], row["agents"]):
        raise Refused(
            "nodeId",
            "this node is also visible outside this server's pinned view, so it cannot be forgotten from here "
            "(an unpinned admin can); nothing was forgotten",
            "shared-outside-view",
        )
    tx.run(
        f"MATCH (n:Node {{nodeId: $id}}) WHERE {guard.clause} SET n.deletedAt = $now",
        id=node_id,
        now=stamp,
        **guard.params,
    )
    return row


def _unlink_in_tx(tx: neo4j.ManagedTransaction, writer: GraphWriter, source: str, rel_type: str, target: str) -> int:
    a, b = writer.read_guard("a"), writer.read_guard("b")
    visible = {
        r["id"]: r
        for r in tx.run(
            f"""
            MATCH (a:Node) WHERE a.nodeId IN $ids AND {a.clause}
            RETURN a.nodeId AS id, labels(a) AS labels, a.protocol AS protocol
            """,
            ids=[source, target],
            **a.params,
        )
    }
    for field, node_id in (("source", source), ("target", target)):
        if node_id not in visible:  # absent, forgotten, foreign or hidden: one answer
            raise not_writable(field, node_id)
    for field, node_id in (("source", source), ("target", target)):
        _check_owner(writer, field, node_id, visible[node_id]["labels"], visible[node_id]["protocol"], "removed")
    guard = both(a, b)
    rel = quote(rel_type)
    record = tx.run(
        f"""
        MATCH (a:Node {{nodeId: $source}})-[r:{rel}]->(b:Node {{nodeId: $target}})
        WHERE {guard.clause}
        DELETE r
        RETURN count(*) AS removed
        """,
        source=source,
        target=target,
        **guard.params,
    ).single()
    removed = int(record["removed"]) if record is not None else 0
    if removed == 0:
        reverse = tx.run(
            f"MATCH (:Node {{nodeId: $target}})-[r:{rel}]->(:Node {{nodeId: $source}}) RETURN count(r) AS n",
            source=source,
            target=target,
        ).single()
        hint = "; there is one from target to source (swap them)" if reverse and reverse["n"] else ""
        message = f"no {rel_type} relation from {source!r} to {target!r}{hint}; nothing was removed"
        raise Refused("type", message, "no-relation")
    return removed


# -- helpers --------------------------------------------------------------------------------
def _check_owner(writer: GraphWriter, field: str, node_id: str, labels: list[str], protocol: object, what: str) -> None:
    """A record only its domain writer changes (a task store's task, events, attempts ...) is
    never forgotten or unlinked by another writer: its log would no longer rebuild it."""
    owner = owner_of(labels, {"protocol": protocol})
    if owner is not None and owner != writer.owner:
        raise Refused(
            field,
            f"{node_id!r} is kept by the {owner}, which alone changes it (its event log must keep rebuilding it); "
            f"nothing was {what}",
            "owned",
        )


def _check_id(value: object, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(field, "a node id is required")
    return value.strip()


def _reason(err: MaxyError) -> str:
    if isinstance(err, Refused):
        return err.code
    if isinstance(err, GraphWriteError):
        return err.reason
    return f"invalid-{err.field}" if isinstance(err, ValidationError) else type(err).__name__


def _log(op: str, writer: GraphWriter, started: float, **fields: Any) -> None:
    refused = fields.get("result") == "refused"
    log_line(
        "memory",
        level=logging.WARNING if refused else logging.INFO,
        op=op,
        **fields,
        accountId=short(writer.caller.account_id),
        view=writer.caller.view_key or "account",
        agent=writer.created_by,
        ms=round((time.perf_counter() - started) * 1000),
    )

"""Operator audit queries over process provenance (Tasks, RAISED_DURING, PRODUCED).

* ``produced_by_conversation``: "what entities did this conversation's actions produce?"
  ``(c:Conversation {sessionId})<-[:RAISED_DURING]-(t:Task)-[:PRODUCED]->(e)``, plus what the
  conversation produced directly (the memory-write / report fallback edge
  ``(c)-[:PRODUCED]->(e)``), with the task's kind and status.
* ``tasks_by_kind``: "what did the <kind> tasks produce?" ``(t:Task {kind})-[:PRODUCED]->(r)``,
  newest first, optionally only one status.
* ``produced_ids``: the ids one Task already produced (what work-complete links only once).

Every node on every path passes the guard clauses of the caller (account, soft delete, and
any pinned scope or agent). CLI: ``maxy audit produced --conversation ID [--json]`` and
``maxy audit tasks --kind K [--status S] [--json]`` (:mod:`maxy.provenance.cli`).
"""

from __future__ import annotations

import time
from typing import Any

from ..db import Database
from ..errors import ValidationError
from ..graph.guards import Caller, generic_guard
from ..logs import log_line, short

MAX_ROWS = 1_000
_ENTITY = """{
    nodeId: e.nodeId, labels: [l IN labels(e) WHERE l <> 'Node'],
    name: coalesce(e.name, e.title, e.displayName, e.hostnameValue, e.tunnelId),
    tunnelId: e.tunnelId, hostnameValue: e.hostnameValue, createdAt: e.createdAt
}"""


def _text(value: object, field: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 256:
        raise ValidationError(field, "a non-empty value of at most 256 characters")
    return value.strip()


def produced_by_conversation(
    db: Database, caller: Caller, session_id: str, *, limit: int = 500
) -> list[dict[str, Any]]:
    """One row per (entity, task) produced during the conversation; ``via`` is "task" or "conversation"."""
    started = time.perf_counter()
    sid = _text(session_id, "conversation")
    gc, gt, ge = generic_guard(caller, "c"), generic_guard(caller, "t"), generic_guard(caller, "e")
    rows = db.read(
        f"""
        MATCH (c:Node) WHERE (c.sessionId = $sid OR c.nodeId = $sid)
          AND (c:Conversation OR c:AdminConversation) AND {gc.clause}
        CALL (c) {{
            MATCH (c)<-[:RAISED_DURING]-(t:Task)-[:PRODUCED]->(e:Node)
            WHERE {gt.clause} AND {ge.clause}
            RETURN e, t, 'task' AS via
            UNION
            MATCH (c)-[:PRODUCED]->(e:Node)
            WHERE {ge.clause}
            RETURN e, null AS t, 'conversation' AS via
        }}
        RETURN c.sessionId AS sessionId, via, t.nodeId AS taskId, t.kind AS kind, t.status AS status,
               {_ENTITY} AS entity
        ORDER BY coalesce(t.startedAt, t.createdAt, ''), entity.createdAt
        LIMIT $limit
        """,
        sid=sid,
        limit=min(max(int(limit), 1), MAX_ROWS),
        **gc.params,
    )
    out = [
        {
            "sessionId": r["sessionId"],
            "via": r["via"],
            "taskId": r["taskId"],
            "kind": r["kind"],
            "status": r["status"],
            **{k: v for k, v in r["entity"].items()},
        }
        for r in rows
    ]
    log_line(
        "audit",
        query="produced",
        accountId=short(caller.account_id),
        conversation=short(sid),
        rows=len(out),
        ms=round((time.perf_counter() - started) * 1000),
    )
    return out


def tasks_by_kind(
    db: Database, caller: Caller, kind: str, *, status: str | None = None, limit: int = 200
) -> list[dict[str, Any]]:
    """Tasks of ``kind`` (newest first) with what each produced."""
    started = time.perf_counter()
    k = _text(kind, "kind")
    st = _text(status, "status") if status is not None else None
    gt, ge = generic_guard(caller, "t"), generic_guard(caller, "e")
    rows = db.read(
        f"""
        MATCH (t:Task) WHERE t.kind = $kind AND ($status IS NULL OR t.status = $status) AND {gt.clause}
        OPTIONAL CALL (t) {{
            MATCH (t)-[:PRODUCED]->(e:Node) WHERE {ge.clause}
            RETURN collect({_ENTITY}) AS produced
        }}
        RETURN coalesce(t.taskId, t.nodeId) AS taskId, t.kind AS kind, t.status AS status, t.title AS title,
               t.startedAt AS startedAt, t.completedAt AS completedAt, coalesce(produced, []) AS produced
        ORDER BY coalesce(t.completedAt, t.startedAt, t.createdAt) DESC
        LIMIT $limit
        """,
        kind=k,
        status=st,
        limit=min(max(int(limit), 1), MAX_ROWS),
        **gt.params,
    )
    log_line(
        "audit",
        query="tasks",
        accountId=short(caller.account_id),
        kind=k,
        status=st or "any",
        rows=len(rows),
        ms=round((time.perf_counter() - started) * 1000),
    )
    return rows


def produced_ids(db: Database, caller: Caller, task_id: str) -> set[str]:
    """The ids of the nodes ``(t:Task {nodeId: task_id})-[:PRODUCED]->(e)`` that the caller can read."""
    gt, ge = generic_guard(caller, "t"), generic_guard(caller, "e")
    rows = db.read(
        f"""
        MATCH (t:Task {{nodeId: $id}}) WHERE {gt.clause}
        OPTIONAL MATCH (t)-[:PRODUCED]->(e:Node) WHERE {ge.clause}
        RETURN collect(DISTINCT e.nodeId) AS ids
        """,
        id=task_id,
        **gt.params,
    )
    return set(rows[0]["ids"]) if rows else set()

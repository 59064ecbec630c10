"""Tasks: the provenance of durable actions.

    (:Task {taskId, kind, title, status, priority, startedAt, completedAt, inputs_<field>...})
      -[:RAISED_DURING]->(:Conversation)       the conversation the action was raised in
      -[:PRODUCED]->(entity)                   every entity the action created

A task is open while its status is pending, running, blocked or waiting, and done once it is
completed, failed or cancelled. Priority is 1 (highest) to 5; the names urgent, high,
normal/medium, low and someday stand for 1 to 5. The work plugin's tools create and update
tasks; what tasks produced is queried by :mod:`maxy.provenance`.
"""

from __future__ import annotations

from typing import Any

from .db import Database
from .graph.guards import Caller, node_guard

OPEN_STATUSES = ("pending", "running", "blocked", "waiting")
DONE_STATUSES = ("completed", "failed", "cancelled")
STATUSES = OPEN_STATUSES + DONE_STATUSES
PRIORITY_NAMES = {"urgent": 1, "high": 2, "normal": 3, "medium": 3, "low": 4, "someday": 5}
DEFAULT_PRIORITY = 3


def open_tasks(db: Database, caller: Caller, *, cap: int) -> tuple[int, list[dict[str, Any]]]:
    """(how many open tasks the caller can read, the first ``cap`` of them): by priority, then
    newest first; each with taskId, title, kind, status, priority (1-5), lastStep, startedAt."""
    g = node_guard(caller, "t")
    rows = db.read(
        f"""
        MATCH (t:Task) WHERE {g.clause} AND coalesce(t.status, 'pending') IN $open
        WITH t, CASE toLower(toString(t.priority))
                  WHEN 'urgent' THEN 1 WHEN 'high' THEN 2 WHEN 'normal' THEN 3 WHEN 'medium' THEN 3
                  WHEN 'low' THEN 4 WHEN 'someday' THEN 5
                  ELSE coalesce(toIntegerOrNull(t.priority), 3) END AS rank
        ORDER BY rank ASC, coalesce(t.startedAt, t.createdAt) DESC
        WITH collect({{taskId: t.nodeId, title: coalesce(t.title, t.name, t.kind), kind: t.kind,
                       status: coalesce(t.status, 'pending'), priority: rank, lastStep: t.lastStep,
                       startedAt: coalesce(t.startedAt, t.createdAt)}}) AS tasks
        RETURN size(tasks) AS total, tasks[0..$cap] AS tasks
        """,
        open=list(OPEN_STATUSES),
        cap=cap,
        **g.params,
    )
    total = int(rows[0]["total"]) if rows else 0
    return total, (rows[0]["tasks"] if rows else [])

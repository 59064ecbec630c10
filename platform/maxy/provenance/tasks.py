"""Tasks: the provenance of durable actions.

    (:Task {taskId, kind, title, status, priority, startedAt, completedAt, inputs_<field>...})
      -[:RAISED_DURING]->(:Conversation)       the conversation the action was raised in
      -[:PRODUCED]->(entity)                   every entity the action created

A task is open while its status is pending, running, blocked or waiting, and done once it is
completed, failed or cancelled. Priority is 1 (highest) to 5; the names urgent, high,
normal/medium, low and someday stand for 1 to 5. The work plugin's tools create and update
tasks; what tasks produced is queried by :mod:`maxy.provenance`; ``list_tasks`` pages through
them for the operator console.
"""

from __future__ import annotations

import re
from typing import Any

from ..db import Database
from ..errors import ValidationError
from ..graph.guards import Caller, generic_guard
from ..graph.paging import check_page, plain

OPEN_STATUSES = ("pending", "running", "blocked", "waiting")
DONE_STATUSES = ("completed", "failed", "cancelled")
STATUSES = OPEN_STATUSES + DONE_STATUSES
PRIORITY_NAMES = {"urgent": 1, "high": 2, "normal": 3, "medium": 3, "low": 4, "someday": 5}
DEFAULT_PRIORITY = 3
KIND_RE = re.compile(r"^[a-z0-9][a-z0-9._:-]{0,63}$")  # a task's kind: a lower-case slug


def open_tasks(db: Database, caller: Caller, *, cap: int) -> tuple[int, list[dict[str, Any]]]:
    """(how many open tasks the caller can read, the first ``cap`` of them): by priority, then
    newest first; each with taskId, title, kind, status, priority (1-5), lastStep, startedAt."""
    g = generic_guard(caller, "t")
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


def list_tasks(
    db: Database,
    caller: Caller,
    *,
    status: str | None = None,
    kind: str | None = None,
    offset: int = 0,
    limit: int = 50,
) -> tuple[int, list[dict[str, Any]]]:
    """(how many tasks match, one page of them), newest first (by when they started), optionally
    of one status and one kind. Rows: taskId, nodeId, kind, status, title, priority, lastStep,
    stepCount, startedAt, completedAt, createdAt, updatedAt."""
    if status is not None and status not in STATUSES:
        raise ValidationError("status", f"one of {', '.join(STATUSES)} (got {status!r}), or omit it for every status")
    if kind is not None and (not isinstance(kind, str) or not KIND_RE.match(kind)):
        raise ValidationError("kind", f"a lower-case slug such as cloudflare-tunnel-login (got {kind!r}), or omit it")
    offset, limit = check_page(offset, limit)
    g = generic_guard(caller, "t")
    rows = db.read(
        f"""
        MATCH (t:Task) WHERE {g.clause} AND ($kind IS NULL OR t.kind = $kind)
          AND ($status IS NULL OR coalesce(t.status, 'pending') = $status)
        WITH t ORDER BY coalesce(t.startedAt, t.createdAt) DESC, t.nodeId
        WITH collect(t) AS tasks
        RETURN size(tasks) AS total, [t IN tasks[$skip..($skip + $n)] | t {{
            taskId: coalesce(t.taskId, t.nodeId), nodeId: t.nodeId, .kind, status: coalesce(t.status, 'pending'),
            title: coalesce(t.title, t.name, t.kind), .priority, .lastStep, stepCount: coalesce(t.stepCount, 0),
            .startedAt, .completedAt, .createdAt, .updatedAt
        }}] AS tasks
        """,
        kind=kind,
        status=status,
        skip=offset,
        n=limit,
        **g.params,
    )
    return int(rows[0]["total"]), plain(rows[0]["tasks"])

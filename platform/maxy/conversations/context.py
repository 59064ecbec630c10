"""The context an admin conversation carries over from earlier turns, as data.

``carried_over(db, caller, key)`` gathers, through the caller's guards: the latest briefing
(the active conversation's first, see :mod:`.compaction`), the most recent review digest (a
CreativeWork with kind or type "review-digest"), open Tasks by priority (at most 10, see
:mod:`maxy.tasks`) and unsuppressed Alerts of the last 24 hours (at most 5). The session
plugin renders it as the ``<previous-context>`` block.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from ..db import Database
from ..graph.guards import Caller, node_guard
from ..provenance.tasks import open_tasks
from .compaction import latest_briefing

OPEN_TASK_CAP = 10
ALERT_CAP = 5
ALERT_WINDOW = timedelta(hours=24)
_TS = "%Y-%m-%dT%H:%M:%S"


def latest_review_digest(db: Database, caller: Caller) -> dict[str, Any] | None:
    g = node_guard(caller, "d")
    rows = db.read(
        f"""
        MATCH (d:CreativeWork) WHERE {g.clause} AND (d.kind = 'review-digest' OR d.type = 'review-digest')
        RETURN d.nodeId AS nodeId, coalesce(d.title, d.name, d.headline) AS title,
               coalesce(d.body, d.text, d.summary, d.description, d.content) AS body,
               coalesce(d.occurredAt, d.createdAt) AS at
        ORDER BY at DESC
        LIMIT 1
        """,
        **g.params,
    )
    return rows[0] if rows else None


def recent_alerts(db: Database, caller: Caller, *, since: str, cap: int) -> list[dict[str, Any]]:
    """Alerts not suppressed, occurred at or after ``since`` (``%Y-%m-%dT%H:%M:%S``), newest first."""
    g = node_guard(caller, "a")
    return db.read(
        f"""
        MATCH (a:Alert) WHERE {g.clause}
          AND coalesce(a.suppressed, false) <> true AND a.suppressedAt IS NULL
          AND left(coalesce(a.occurredAt, a.createdAt), 19) >= $since
        RETURN a.nodeId AS nodeId, coalesce(a.title, a.name, a.headline, a.summary) AS title,
               a.severity AS severity, coalesce(a.description, a.body, a.text) AS detail,
               coalesce(a.occurredAt, a.createdAt) AS at
        ORDER BY at DESC
        LIMIT $cap
        """,
        since=since,
        cap=cap,
        **g.params,
    )


def carried_over(db: Database, caller: Caller, key: str | None) -> dict[str, Any]:
    """briefing, reviewDigest, openTasks, openTasksTotal and alerts; ``key`` names the active
    conversation (SESSION_NODE_ID, else SESSION_ID), if any."""
    since = (datetime.now(UTC) - ALERT_WINDOW).strftime(_TS)
    briefing = latest_briefing(db, caller, key)
    digest = latest_review_digest(db, caller)
    tasks_total, tasks = open_tasks(db, caller, cap=OPEN_TASK_CAP)
    alerts = recent_alerts(db, caller, since=since, cap=ALERT_CAP)
    return {
        "briefing": briefing,
        "reviewDigest": digest,
        "openTasks": tasks,
        "openTasksTotal": tasks_total,
        "alerts": alerts,
    }

"""Reports: durable workflow output (a daily briefing, an analysis), found again by keyword.

    (:Conversation | :AdminUser)-[:PRODUCED]->(:Report {title, body, keywords, keywordsText,
        sourceWorkflow, occurredAt, occurredMinute, bodyChars})

A report's nodeId is derived from (account, title, minute of occurredAt), plus the view when
the writer is pinned, so writing the same title twice in one minute lands on one node. Its
PRODUCED source is the active conversation, else the account's AdminUser. Every read passes
the caller's guards. The memory plugin's report tools write and read through this module.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from typing import Any

from .db import Database
from .graph.guards import Caller, node_guard
from .graph.write import GraphWriter, NodeSpec

_REPORT_META = """
    r.nodeId AS reportId, r.title AS title, r.keywords AS keywords, r.sourceWorkflow AS sourceWorkflow,
    r.occurredAt AS occurredAt, r.createdAt AS createdAt, coalesce(r.bodyChars, size(r.body)) AS bodyChars
"""


def report_node_id(root: str, title: str, minute: str) -> str:
    """Deterministic per (account, title, minute), and per view when pinned (``root`` is
    ``confine.id_root``): the idempotency key is the node id itself, so even two concurrent
    writes of the same report end up as one node, and a pinned writer never meets a hidden one."""
    digest = hashlib.sha256("\x1f".join(["report", root, title, minute]).encode()).digest()
    return str(uuid.UUID(bytes=digest[:16]))


def admin_user_node_id(account_id: str) -> str:
    digest = hashlib.sha256("\x1f".join(["admin-user", account_id]).encode()).digest()
    return str(uuid.UUID(bytes=digest[:16]))


def account_admin_user(db: Database, caller: Caller, system_writer: Callable[[], GraphWriter]) -> str | None:
    """The AdminUser nodeId the caller can see; an unpinned admin creates the account's (through
    ``system_writer()``, the system agent's writer) when there is none. A pinned view never
    creates one: None."""
    guard = node_guard(caller, "u")
    rows = db.read(
        f"MATCH (u:AdminUser) WHERE {guard.clause} RETURN u.nodeId AS id ORDER BY u.createdAt LIMIT 1",
        **guard.params,
    )
    if rows:
        return rows[0]["id"]
    if caller.pinned:
        return None
    result = system_writer().write(
        NodeSpec(["AdminUser"], {"name": "Account admin"}, node_id=admin_user_node_id(caller.account_id), scope="admin")
    )
    return result.node_id


def latest_reports(db: Database, caller: Caller, keyword: str, limit: int) -> list[dict[str, Any]]:
    """The newest reports tagged ``keyword`` (case-insensitive), with their bodies."""
    guard = node_guard(caller, "r")
    return db.read(
        f"""
        MATCH (r:Report) WHERE {guard.clause}
          AND any(k IN coalesce(r.keywords, []) WHERE toLower(toString(k)) = toLower($kw))
        RETURN {_REPORT_META}, r.body AS body
        ORDER BY datetime(coalesce(r.occurredAt, r.createdAt)) DESC, r.createdAt DESC
        LIMIT $n
        """,
        kw=keyword,
        n=limit,
        **guard.params,
    )


def list_reports(
    db: Database,
    caller: Caller,
    *,
    keyword: str | None,
    source_workflow: str | None,
    offset: int,
    limit: int,
) -> tuple[int, list[dict[str, Any]]]:
    """(how many reports match, one page of their metadata), newest first, without bodies."""
    guard = node_guard(caller, "r")
    rows = db.read(
        f"""
        MATCH (r:Report) WHERE {guard.clause}
          AND ($kw IS NULL OR any(k IN coalesce(r.keywords, []) WHERE toLower(toString(k)) = toLower($kw)))
          AND ($wf IS NULL OR r.sourceWorkflow = $wf)
        WITH r ORDER BY datetime(coalesce(r.occurredAt, r.createdAt)) DESC, r.createdAt DESC
        WITH collect(r) AS all_reports
        RETURN size(all_reports) AS total,
               [r IN all_reports[$skip..($skip + $n)] | r {{
                   reportId: r.nodeId, .title, .keywords, .sourceWorkflow, .occurredAt, .createdAt,
                   bodyChars: coalesce(r.bodyChars, size(r.body))
               }}] AS reports
        """,
        kw=keyword,
        wf=source_workflow,
        skip=offset,
        n=limit,
        **guard.params,
    )
    total = int(rows[0]["total"]) if rows else 0
    return total, (rows[0]["reports"] if rows else [])

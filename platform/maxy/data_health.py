"""The data's health for ``maxy status``: live nodes per label, nodes an embedding index should
hold but that have no embedding, soft-deleted nodes awaiting purge, and the audit trail's size;
for one account and for the whole database.

A few aggregate queries, each bounded by what it reports: the account's nodes through the
``node_account`` index, database totals from Neo4j's label counts, deleted nodes through the
``node_deleted_at`` index, the oldest ToolCall through ``tool_call_created``. Embeddings are
counted per account only (a database-wide count would read every node).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from .db import Database
from .graph.allowlist import ALL_LABELS, EMBEDDED_LABELS
from .graph.purge import DEFAULT_GRACE_DAYS

# Grouped by label set (few of them), so a node with two labels is one node, counted under each.
_ACCOUNT_NODES = """
MATCH (n:Node {accountId: $acc}) WHERE n.deletedAt IS NULL
RETURN [l IN labels(n) WHERE l <> 'Node'] AS labels, n.embedding IS NULL AS bare, count(*) AS nodes
"""

# Neo4j answers a count of one label from its counts store, without reading nodes.
_LABEL_COUNTS = """
CYPHER 25 UNWIND $labels AS label
CALL (label) { MATCH (n:$(label)) RETURN count(n) AS nodes }
RETURN label, nodes
"""

_DELETED = """
MATCH (n:Node) WHERE n.deletedAt IS NOT NULL
RETURN n.accountId = $acc AS mine, [l IN labels(n) WHERE l <> 'Node'] AS labels, count(*) AS nodes,
       sum(CASE WHEN datetime(n.deletedAt) < datetime($purgeable) THEN 1 ELSE 0 END) AS purgeable,
       min(n.deletedAt) AS oldest
"""

_AUDIT_ACCOUNT = "MATCH (t:ToolCall) WHERE t.accountId = $acc RETURN count(t) AS toolCalls, min(t.createdAt) AS oldest"
_AUDIT_OLDEST = (
    "MATCH (t:ToolCall) WHERE t.createdAt IS NOT NULL RETURN t.createdAt AS oldest ORDER BY t.createdAt LIMIT 1"
)


def _section() -> dict[str, Any]:
    return {"nodes": {}, "nodesTotal": 0, "deleted": {}, "deletedTotal": 0, "purgeable": 0, "oldestDeletedAt": None}


def _tally(counts: dict[str, int], labels: list[str], n: int) -> None:
    for label in labels or ["Node"]:
        counts[label] = counts.get(label, 0) + n


def _add_deleted(section: dict[str, Any], row: dict[str, Any]) -> None:
    _tally(section["deleted"], row["labels"], int(row["nodes"]))
    section["deletedTotal"] += int(row["nodes"])
    section["purgeable"] += int(row["purgeable"])
    oldest = section["oldestDeletedAt"]
    section["oldestDeletedAt"] = row["oldest"] if oldest is None else min(oldest, row["oldest"])


def collect_data_health(db: Database, account_id: str | None, now: datetime | None = None) -> dict[str, Any]:
    """``{"account": {...} | None, "total": {...}, "ms": ...}``; counts are live nodes per label."""
    started = time.perf_counter()
    acc = account_id or ""
    purgeable = ((now or datetime.now(UTC)) - timedelta(days=DEFAULT_GRACE_DAYS)).isoformat()
    account = _section() if account_id else None
    total = _section()

    deleted = db.read(_DELETED, acc=acc, purgeable=purgeable)
    for row in deleted:
        _add_deleted(total, row)
        if account is not None and row["mine"]:
            _add_deleted(account, row)

    for row in db.read(_LABEL_COUNTS, labels=sorted({*ALL_LABELS, "Node"})):
        live = int(row["nodes"]) - total["deleted"].get(row["label"], 0)
        if row["label"] == "Node":
            total["nodesTotal"] = int(row["nodes"]) - total["deletedTotal"]
        elif live:
            total["nodes"][row["label"]] = live
    oldest_call = db.read(_AUDIT_OLDEST)
    total["audit"] = {
        "toolCalls": total["nodes"].get("ToolCall", 0) + total["deleted"].get("ToolCall", 0),
        "oldest": oldest_call[0]["oldest"] if oldest_call else None,
    }

    if account is not None:
        missing: dict[str, int] = {}
        for row in db.read(_ACCOUNT_NODES, acc=acc):
            n = int(row["nodes"])
            _tally(account["nodes"], row["labels"], n)
            account["nodesTotal"] += n
            embedded = [label for label in row["labels"] if label in EMBEDDED_LABELS]
            if row["bare"] and embedded:
                _tally(missing, embedded, n)
        account["missingEmbeddings"] = missing
        account["missingEmbeddingsTotal"] = sum(missing.values())
        audit = db.read(_AUDIT_ACCOUNT, acc=acc)[0]
        account["audit"] = {"toolCalls": int(audit["toolCalls"]), "oldest": audit["oldest"]}
        account["id"] = account_id
    return {"account": account, "total": total, "ms": round((time.perf_counter() - started) * 1000)}

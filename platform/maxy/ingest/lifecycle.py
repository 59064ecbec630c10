"""Soft delete and restore of an ingested document (the purge of what stays deleted is
:mod:`maxy.graph.purge`).

``soft_delete_attachment`` stamps ``deletedAt`` (ISO 8601, UTC) on a KnowledgeDocument and
on every Section and Chunk of the same attachmentId in the same account, in one
transaction; every read path then hides them (guard layer 1). Deleting again keeps the
first timestamp, so the grace period is not restarted. Re-ingesting the attachment
replaces the hierarchy and so clears deletedAt.

``restore_attachment`` is soft delete's mirror: it removes deletedAt from a soft-deleted
KnowledgeDocument and from the Sections and Chunks of its attachmentId, in one transaction.
Only an admin view restores (``Caller.admin_view``: a public or shared view never sees what was
deleted, so it has nothing to restore).

Both reach only the caller's domain (``domain_guard``: account, pinned scopes and agent,
live or deleted; restore the deleted, finished nodes of it, ``deleted_guard``): a pinned caller
cannot delete, and so cannot probe, a document it may not read.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import neo4j

from ..db import Database
from ..errors import GraphWriteError
from ..graph.confine import not_writable
from ..graph.guards import Caller, deleted_guard, domain_guard
from ..graph.purge import iso_utc, view_of
from ..logs import log_line, short
from .identity import check_attachment_id


def _soft_delete_query(caller: Caller) -> tuple[str, dict[str, Any]]:
    d, n = domain_guard(caller, "d"), domain_guard(caller, "n")
    query = f"""
    MATCH (d:KnowledgeDocument {{accountId: $acc, attachmentId: $att}})
    WHERE {d.clause}
    WITH collect(d) AS docs
    OPTIONAL MATCH (n:Node {{accountId: $acc}})
    WHERE n.attachmentId = $att AND (n:Section OR n:Chunk) AND {n.clause}
    WITH docs, collect(n) AS parts
    WITH docs + parts AS nodes, size(docs) AS docCount
    UNWIND nodes AS n
    WITH n, docCount, n.deletedAt IS NULL AS fresh
    SET n.deletedAt = coalesce(n.deletedAt, $now)
    RETURN docCount, count(n) AS total, sum(CASE WHEN fresh THEN 1 ELSE 0 END) AS stamped,
           min(n.deletedAt) AS deletedAt
    """
    return query, d.params


def _restore_query(caller: Caller) -> tuple[str, dict[str, Any]]:
    d, n = deleted_guard(caller, "d"), deleted_guard(caller, "n")
    query = f"""
    MATCH (d:KnowledgeDocument {{accountId: $acc, attachmentId: $att}})
    WHERE {d.clause}
    WITH collect(d) AS docs
    WHERE size(docs) > 0
    OPTIONAL MATCH (n:Node {{accountId: $acc}})
    WHERE n.attachmentId = $att AND (n:Section OR n:Chunk) AND {n.clause}
    WITH docs, collect(n) AS parts
    WITH docs + parts AS nodes, size(docs) AS docCount
    UNWIND nodes AS n
    REMOVE n.deletedAt
    RETURN docCount, count(n) AS restored
    """
    return query, d.params


def soft_delete_attachment(
    db: Database,
    account_id: str,
    attachment_id: str,
    *,
    now: datetime | None = None,
    caller: Caller | None = None,
) -> int:
    """Stamp deletedAt on the document, its sections and chunks; return how many were newly stamped.

    Raises GraphWriteError(reason="not-writable") naming attachmentId when the caller's
    domain (default: the whole account) has no KnowledgeDocument with that attachmentId.
    """
    view = view_of(account_id, caller)
    attachment_id = check_attachment_id(attachment_id)
    started = time.perf_counter()
    stamp = iso_utc(now or datetime.now(UTC))
    query, params = _soft_delete_query(view)

    def work(tx: neo4j.ManagedTransaction) -> dict[str, Any] | None:
        record = tx.run(query, acc=account_id, att=attachment_id, now=stamp, **params).single()
        return record.data() if record is not None else None

    row = db.write_tx(work)
    if not row or not row.get("docCount"):
        # nothing to stamp: the transaction above changed nothing without a document, but
        # orphan sections/chunks (if any) were stamped too; report the missing document.
        if row and row.get("total"):
            log_line(
                "ingest",
                op="delete",
                accountId=short(account_id),
                attachmentId=attachment_id,
                nodes=row["stamped"],
                orphans=True,
            )
            return int(row["stamped"] or 0)
        raise not_writable("attachmentId", attachment_id, "document")
    stamped = int(row["stamped"] or 0)
    log_line(
        "ingest",
        op="delete",
        accountId=short(account_id),
        attachmentId=attachment_id,
        nodes=stamped,
        already_deleted=stamped == 0,
        deletedAt=row["deletedAt"],
        ms=round((time.perf_counter() - started) * 1000),
    )
    return stamped


def restore_attachment(db: Database, account_id: str, attachment_id: str, *, caller: Caller) -> int:
    """Remove deletedAt from the soft-deleted document of ``attachment_id``, its sections and
    chunks; return how many nodes were restored.

    Raises GraphWriteError(reason="not-writable") naming attachmentId when the caller's domain
    has no soft-deleted KnowledgeDocument with that attachmentId (absent, live, hidden or of
    another account alike: a second restore changes nothing and says so), and
    GraphWriteError(reason="not-admin") for a caller without the admin view.
    """
    view = view_of(account_id, caller)
    attachment_id = check_attachment_id(attachment_id)
    if not view.admin_view:
        raise GraphWriteError(
            "not-admin",
            "attachmentId: only an admin view (unpinned, or pinned with the admin scope) restores a deleted "
            "document; nothing was written",
        )
    started = time.perf_counter()
    query, params = _restore_query(view)

    def work(tx: neo4j.ManagedTransaction) -> dict[str, Any] | None:
        record = tx.run(query, acc=account_id, att=attachment_id, **params).single()
        return record.data() if record is not None else None

    row = db.write_tx(work)
    if not row:
        raise not_writable("attachmentId", attachment_id, "deleted document")
    restored = int(row["restored"])
    log_line(
        "ingest",
        op="restore",
        accountId=short(account_id),
        attachmentId=attachment_id,
        documents=row["docCount"],
        nodes=restored,
        ms=round((time.perf_counter() - started) * 1000),
    )
    return restored

"""The purge of what stays deleted: every node of a caller's domain soft-deleted (``deletedAt``,
ISO 8601 UTC) longer ago than the grace period (7 days by default) is hard-deleted (DETACH
DELETE), whatever wrote it (documents, memories, conversations), in batches (``CALL {...} IN
TRANSACTIONS``): safe to interrupt and run again. ``purge_preview`` says what it would delete.
It reaches only the caller's domain (``domain_guard``)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from ..db import Database
from ..errors import ValidationError
from ..logs import log_line, short
from .guards import Caller, domain_guard

DEFAULT_GRACE_DAYS = 7
PURGE_BATCH_ROWS = 1000

_EXPIRED = "n.deletedAt IS NOT NULL AND datetime(n.deletedAt) < datetime($cutoff)"


def _purge_query(caller: Caller) -> tuple[str, dict[str, Any]]:
    n = domain_guard(caller, "n")
    query = f"""
    MATCH (n:Node {{accountId: $acc}})
    WHERE {_EXPIRED} AND {n.clause}
    WITH n, [l IN labels(n) WHERE l <> 'Node'] AS labels
    CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF $rows ROWS
    UNWIND (CASE WHEN size(labels) = 0 THEN ['Node'] ELSE labels END) AS label
    RETURN label, count(*) AS count
    """
    return query, n.params


def _preview_query(caller: Caller) -> tuple[str, dict[str, Any]]:
    n = domain_guard(caller, "n")
    query = f"""
    MATCH (n:Node {{accountId: $acc}})
    WHERE {_EXPIRED} AND {n.clause}
    WITH n, [l IN labels(n) WHERE l <> 'Node'] AS labels
    UNWIND (CASE WHEN size(labels) = 0 THEN ['Node'] ELSE labels END) AS label
    WITH label, count(*) AS count,
         collect(CASE WHEN label = 'KnowledgeDocument'
                      THEN {{attachmentId: n.attachmentId, title: n.title, deletedAt: n.deletedAt}} END) AS docs
    RETURN label, count, docs[..$shown] AS docs ORDER BY label
    """
    return query, n.params


def view_of(account_id: str, caller: Caller | None) -> Caller:
    """The view a lifecycle operation reaches: ``caller``, else the whole account."""
    if not account_id:
        raise ValidationError("accountId", "a validated account id is required")
    if caller is not None and caller.account_id != account_id:
        raise ValidationError("accountId", "the caller belongs to another account")
    return caller or Caller(account_id)


def iso_utc(value: datetime) -> str:
    """``value`` in UTC, ISO 8601 (a naive one is taken as UTC)."""
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC).isoformat()


def _cutoff(grace_days: float, now: datetime | None) -> str:
    if isinstance(grace_days, bool) or not isinstance(grace_days, (int, float)) or grace_days < 0:
        raise ValidationError("graceDays", "must be a number of days >= 0")
    return iso_utc((now or datetime.now(UTC)) - timedelta(days=grace_days))


def purge_preview(
    db: Database,
    account_id: str,
    grace_days: float = DEFAULT_GRACE_DAYS,
    now: datetime | None = None,
    *,
    caller: Caller | None = None,
    shown: int = 50,
) -> dict[str, Any]:
    """What :func:`purge` would delete, deleting nothing: counts per label and the first
    ``shown`` documents (attachmentId, title, deletedAt)."""
    view = view_of(account_id, caller)
    cutoff = _cutoff(grace_days, now)
    query, params = _preview_query(view)
    rows = db.read(query, acc=account_id, cutoff=cutoff, shown=shown, **params)
    return {
        "cutoff": cutoff,
        "counts": {r["label"]: int(r["count"]) for r in rows},
        "documents": [d for r in rows for d in r["docs"]],
    }


def purge(
    db: Database,
    account_id: str,
    grace_days: float = DEFAULT_GRACE_DAYS,
    now: datetime | None = None,
    *,
    caller: Caller | None = None,
) -> dict[str, int]:
    """Hard-delete the caller's nodes (default: the account's) soft-deleted more than
    ``grace_days`` ago; counts per label.

    A node with several labels (besides the base :Node) is counted under each of them.
    """
    view = view_of(account_id, caller)
    cutoff = _cutoff(grace_days, now)
    started = time.perf_counter()
    query, params = _purge_query(view)
    rows = db.autocommit(query, acc=account_id, cutoff=cutoff, rows=PURGE_BATCH_ROWS, **params)
    counts = {r["label"]: int(r["count"]) for r in sorted(rows, key=lambda r: r["label"])}
    log_line(
        "ingest",
        op="purge",
        accountId=short(account_id),
        grace_days=grace_days,
        cutoff=cutoff,
        deleted=sum(counts.values()),
        labels=[f"{k}:{v}" for k, v in counts.items()],
        ms=round((time.perf_counter() - started) * 1000),
    )
    return counts

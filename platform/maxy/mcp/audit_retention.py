"""Audit retention: ToolCall nodes older than a cut-off go, with their relationships, in batches.

By hand, ``maxy audit prune --older-than 30d``. Automatically, ``AUDIT_RETENTION_DAYS`` (default
30; 0 keeps every ToolCall): the audit writer starts a prune in a background thread after the
first audited call of a process, then at most once an hour per account; a tool call never waits
for it. Every process that writes the audit trail (``maxy serve`` replicas, MCP servers) asks
for the account's ``audit-prune:<accountId>`` lease (:mod:`maxy.graph.leases`) first, so one
of them prunes each hour and the rest skip it. The age is ``createdAt`` (ISO 8601 UTC, written by the write primitive), compared as text
through the ``tool_call_created`` range index, so a prune reads only the nodes it deletes.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from ..db import Database
from ..errors import ValidationError
from ..graph.leases import Heartbeat, Leases, run_round
from ..logs import log_line, short

DEFAULT_RETENTION_DAYS = 30
AUTO_INTERVAL_S = 3600.0
CHECKS_PER_INTERVAL = 12  # a process asks for the lease every five minutes of an hour's interval
# A prune renews its lease every third of this; a process killed mid-prune holds it no longer, and
# the next hour's round (the lease's own interval) comes later anyway.
LEASE_TTL_S = 600.0
LEASE_PREFIX = "audit-prune:"
PRUNE_BATCH_ROWS = 1000
UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$", re.IGNORECASE)

_SELECT = "MATCH (t:ToolCall) WHERE t.createdAt < $cutoff AND t.accountId = $acc"

_COUNT_QUERY = f"""
{_SELECT}
RETURN count(t) AS nodes, sum(COUNT {{ (t)--() }}) AS relationships
"""

_DELETE_QUERY = f"""
{_SELECT}
WITH t, COUNT {{ (t)--() }} AS rels
CALL (t) {{ DETACH DELETE t }} IN TRANSACTIONS OF $rows ROWS
RETURN count(t) AS nodes, sum(rels) AS relationships
"""


def parse_duration(text: str, field: str = "--older-than") -> timedelta:
    """``12h``, ``30d``, ``2w`` (also ``90m``) as a timedelta; anything else is one clear error."""
    match = _DURATION.match(text or "")
    if not match:
        raise ValidationError(field, f"{text!r} is not a duration; give a whole number and a unit: 90m, 12h, 30d or 2w")
    amount = int(match.group(1))
    if amount == 0:
        raise ValidationError(field, f"{text!r} would delete every ToolCall; give a duration above zero, e.g. 30d")
    return timedelta(seconds=amount * UNITS[match.group(2).lower()])


def describe(age: timedelta) -> str:
    """A duration as the largest whole unit that fits, e.g. ``30d``: for log lines."""
    seconds = int(age.total_seconds())
    for unit in ("w", "d", "h", "m"):
        if seconds % UNITS[unit] == 0:
            return f"{seconds // UNITS[unit]}{unit}"
    return f"{seconds}s"


def prune_tool_calls(
    db: Database,
    account_id: str,
    older_than: timedelta,
    *,
    dry_run: bool = False,
    now: datetime | None = None,
    trigger: str = "cli",
) -> dict[str, Any]:
    """Delete (or, with ``dry_run``, count) the account's ToolCalls created more than
    ``older_than`` ago, with their relationships; one log line either way."""
    if not account_id:
        raise ValidationError("accountId", "a validated account id is required")
    if older_than <= timedelta(0):
        raise ValidationError("olderThan", "must be above zero")
    started = time.perf_counter()
    cutoff = ((now or datetime.now(UTC)).astimezone(UTC) - older_than).isoformat()
    if dry_run:
        row = db.read(_COUNT_QUERY, cutoff=cutoff, acc=account_id)[0]
    else:
        rows = db.autocommit(_DELETE_QUERY, cutoff=cutoff, acc=account_id, rows=PRUNE_BATCH_ROWS)
        row = rows[0] if rows else {"nodes": 0, "relationships": 0}
    result = {
        "accountId": account_id,
        "olderThan": describe(older_than),
        "cutoff": cutoff,
        "dryRun": dry_run,
        "toolCalls": int(row["nodes"] or 0),
        "relationships": int(row["relationships"] or 0),
        "ms": round((time.perf_counter() - started) * 1000),
    }
    log_line(
        "audit",
        "prune",
        account=short(account_id),
        trigger=trigger,
        older_than=result["olderThan"],
        cutoff=cutoff,
        dry_run=dry_run,
        tool_calls=result["toolCalls"],
        relationships=result["relationships"],
        ms=result["ms"],
    )
    return result


_lock = threading.Lock()
_last_run: dict[str, float] = {}  # account id -> time.monotonic() this process last asked for its lease
_running: list[tuple[Database, threading.Thread]] = []  # prunes started, until finish_prunes


def schedule_retention(
    db: Database, account_id: str, days: float, *, interval_s: float = AUTO_INTERVAL_S
) -> threading.Thread | None:
    """Start an automatic prune in a daemon thread when ``days`` > 0 and this process has not
    asked within a twelfth of ``interval_s``; the thread prunes when it gets the account's lease,
    which no process got within ``interval_s``. Returns the thread (None when none was started)."""
    if days <= 0 or not account_id:
        return None
    now = time.monotonic()
    with _lock:
        last = _last_run.get(account_id)
        if last is not None and now - last < interval_s / CHECKS_PER_INTERVAL:
            return None
        _last_run[account_id] = now
    thread = threading.Thread(
        target=_auto_prune,
        args=(db, account_id, timedelta(days=days), interval_s),
        name="maxy-audit-retention",
        daemon=True,
    )
    try:
        thread.start()
    except RuntimeError as err:  # no thread to be had: try again at the next interval
        log_line("audit", "warn", "prune-not-started", level=logging.WARNING, account=short(account_id), error=err)
        return None
    with _lock:
        _running[:] = [(d, t) for d, t in _running if t.is_alive()] + [(db, thread)]
    return thread


def finish_prunes(db: Database, timeout_s: float = 10.0) -> None:
    """Wait for the automatic prunes running on ``db`` before it is closed: a prune writing
    while the driver closes its connections breaks the close."""
    with _lock:
        mine = [t for d, t in _running if d is db]
        _running[:] = [(d, t) for d, t in _running if d is not db and t.is_alive()]
    deadline = time.monotonic() + timeout_s
    for thread in mine:
        thread.join(max(0.0, deadline - time.monotonic()))


def _auto_prune(db: Database, account_id: str, older_than: timedelta, interval_s: float) -> None:
    def prune(_beat: Heartbeat) -> dict[str, Any]:
        return prune_tool_calls(db, account_id, older_than, trigger="auto")

    try:
        run_round(Leases(db), LEASE_PREFIX + account_id, prune, ttl_s=LEASE_TTL_S, every_s=interval_s)
    except Exception as err:  # noqa: BLE001 - a background prune must never take the server down
        log_line(
            "audit",
            "warn",
            "prune-failed",
            level=logging.WARNING,
            account=short(account_id),
            error=f"{type(err).__name__}: {err}"[:300],
        )

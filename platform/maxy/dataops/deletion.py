"""Deleting a whole account: ``maxy account delete``.

A soft delete stamps ``deletedAt`` on every live node of the account (guard layer 1 then hides
them from every read) and moves the account's folder aside (``account_files``), so no process
can act for it any more. ``maxy account purge`` hard-deletes a deleted account's nodes and its folder
once the grace period has passed (``purge_deleted_accounts``, through the same batched purge
as single nodes), or ``--purge --yes`` does it at once.

Deleting again is harmless: it keeps the first timestamp (the grace period is not restarted)
and stamps any node a crash left unstamped.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ..db import Database
from ..errors import AccountError, ValidationError
from ..graph.leases import Leases
from ..graph.purge import DEFAULT_GRACE_DAYS, purge
from ..logs import log_line, short
from . import account_files

STAMP_BATCH_ROWS = 1000


@dataclass(frozen=True)
class DeleteResult:
    accountId: str
    deletedAt: str
    stamped: int
    alreadyDeleted: bool
    purged: bool
    purgedNodes: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def unknown_account(account_id: str) -> AccountError:
    return AccountError("unknown", f"account {account_id}: no such account (`maxy account list` shows the ids)")


def delete_account(
    db: Database,
    data_root: Path,
    account_id: str,
    *,
    active_account_id: str | None,
    force: bool = False,
    purge_now: bool = False,
    confirmed: bool = False,
) -> DeleteResult:
    """Soft-delete the account (and, with ``purge_now``, hard-delete it at once)."""
    started = time.perf_counter()
    account_id = account_files.canonical_id(account_id)
    live = (account_files.live_folder(data_root, account_id) / account_files.ACCOUNT_FILE).is_file()
    earlier = None if live else account_files.deleted_at(data_root, account_id)
    if not live and earlier is None:
        raise unknown_account(account_id)
    if live and account_id == active_account_id and not force:
        raise AccountError(
            "active",
            f"account {account_id} is the active ACCOUNT_ID: add --force to delete it anyway "
            "(then set ACCOUNT_ID to another account from `maxy account list`)",
        )
    if purge_now and not confirmed:
        raise ValidationError("--purge", f"deletes account {account_id}'s graph for good at once: add --yes")
    stamp = earlier or datetime.now(UTC).isoformat()
    stamped = stamp_nodes(db, account_id, stamp)
    if live:
        account_files.mark_deleted(data_root, account_id, stamp)
    purged_nodes = purge_account_now(db, data_root, account_id) if purge_now else 0
    result = DeleteResult(account_id, stamp, stamped, not live, purge_now, purged_nodes)
    log_line(
        "account",
        op="delete",
        accountId=short(account_id),
        nodes=stamped,
        already_deleted=not live,
        purged=purge_now,
        purged_nodes=purged_nodes,
        ms=round((time.perf_counter() - started) * 1000),
    )
    return result


def stamp_nodes(db: Database, account_id: str, stamp: str) -> int:
    """Stamp deletedAt on the account's live nodes, in batches; nodes already deleted keep theirs."""
    rows = db.autocommit(
        """
        MATCH (n:Node {accountId: $acc}) WHERE n.deletedAt IS NULL
        CALL (n) { SET n.deletedAt = $stamp } IN TRANSACTIONS OF $rows ROWS
        RETURN count(n) AS stamped
        """,
        acc=account_id,
        stamp=stamp,
        rows=STAMP_BATCH_ROWS,
    )
    return int(rows[0]["stamped"]) if rows else 0


def count_nodes(db: Database, account_id: str) -> int:
    rows = db.read("MATCH (n:Node {accountId: $acc}) RETURN count(n) AS c", acc=account_id)
    return int(rows[0]["c"])


def purge_account_now(db: Database, data_root: Path, account_id: str) -> int:
    """Hard-delete a soft-deleted account's nodes and its folder now; returns the nodes deleted."""
    # every node was stamped before now; one second covers a clock that returns the same instant
    later = datetime.now(UTC) + timedelta(seconds=1)
    before = count_nodes(db, account_id)
    purge(db, account_id, grace_days=0, now=later)
    left = count_nodes(db, account_id)
    if left:
        raise AccountError(
            "purge-incomplete",
            f"account {account_id}: {left} node(s) were not purged (written after the delete?): "
            "run `maxy account delete` on it again",
        )
    Leases(db).forget(account_id)  # its jobs' rounds (the audit prune's)
    account_files.remove_deleted(data_root, account_id)
    return before


def due_accounts(data_root: Path, grace_days: float, now: datetime | None = None) -> list[str]:
    """The deleted accounts whose grace period has passed (an unreadable deleted.json is named
    in a warning and kept)."""
    cutoff = (now or datetime.now(UTC)) - timedelta(days=grace_days)
    due = []
    for account_id, stamp in account_files.deleted_accounts(data_root).items():
        try:
            when = datetime.fromisoformat(stamp)
        except ValueError:
            log_line("account", "warn", level=logging.WARNING, reason="bad-deletedAt", accountId=account_id)
            continue
        if (when if when.tzinfo else when.replace(tzinfo=UTC)) < cutoff:
            due.append(account_id)
    return due


def purge_deleted_accounts(
    db: Database,
    data_root: Path,
    grace_days: float = DEFAULT_GRACE_DAYS,
    now: datetime | None = None,
    *,
    dry_run: bool = False,
) -> dict[str, int]:
    """Hard-delete every deleted account whose grace period has passed: its nodes, then its
    folder (kept while any node is left). Returns nodes purged (``dry_run``: held) per account id."""
    moment = now or datetime.now(UTC)
    done: dict[str, int] = {}
    for account_id in due_accounts(data_root, grace_days, moment):
        before = count_nodes(db, account_id)
        if dry_run:
            done[account_id] = before
            continue
        purge(db, account_id, grace_days=grace_days, now=moment)
        left = count_nodes(db, account_id)
        if left == 0:
            account_files.remove_deleted(data_root, account_id)
        done[account_id] = before - left
        log_line("account", op="purge", accountId=short(account_id), nodes=done[account_id], left=left)
    return done

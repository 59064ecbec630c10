"""Backfill embeddings for nodes stored without one (embedder outage, new index, new model),
and the keys the write primitive derives (``nameKey`` / ``aliasKeys`` of a named node, the
``dateText`` of a dated fact) for nodes written before it derived them.

Resumable by construction: each batch commits on its own, and a re-run picks up exactly the
nodes whose embedding is still null. A pinned caller reaches (and counts) only its own view.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..accounts import ValidatedAccount
from ..db import Database
from ..embeddings.base import Embedder, EmbeddingError
from ..errors import ValidationError
from ..graph.allowlist import INDEXED_LABELS, check_labels
from ..graph.guards import Caller, node_guard
from ..graph.names import node_keys
from ..graph.text import embedding_text
from ..graph.validity import date_text
from ..graph.write import GraphWriter
from ..logs import log_line, short


def _labels(labels: Sequence[str] | None) -> list[str]:
    if labels is None:
        return list(INDEXED_LABELS)
    checked = check_labels(labels, field="label")
    return [label for label in checked if label in INDEXED_LABELS]


def _missing(caller: Caller, tail: str) -> tuple[str, dict[str, Any]]:
    guard = node_guard(caller, "n")
    query = (
        f"MATCH (n:Node) WHERE {guard.clause} AND n.embedding IS NULL AND any(l IN labels(n) WHERE l IN $labels) {tail}"
    )
    return query, guard.params


def count_missing(
    db: Database, account_id: str, labels: Sequence[str] | None = None, *, caller: Caller | None = None
) -> int:
    query, params = _missing(caller or Caller(account_id), "RETURN count(n) AS c")
    rows = db.read(query, labels=_labels(labels), **params)
    return int(rows[0]["c"])


def reindex(
    db: Database,
    account: ValidatedAccount,
    embedder: Embedder,
    *,
    labels: Sequence[str] | None = None,
    batch_size: int = 64,
    progress: Callable[[int], None] | None = None,
    caller: Caller | None = None,
) -> dict[str, Any]:
    """Embed the caller's nodes that lack an embedding; the summary counts them, and ``left``
    (nodes with text still unembedded) with ``error`` (the embedder's) says what a re-run has to do."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValidationError("batchSize", f"must be a whole number >= 1, got {batch_size!r}")
    started = time.perf_counter()
    wanted = _labels(labels)
    account_id = account.account_id
    writer = GraphWriter(db, account, embedder, caller=caller, created_by="reindex")
    keyed = backfill_keys(db, writer.caller, batch_size=500)
    query, params = _missing(
        writer.caller,
        "AND n.nodeId > $after RETURN n.nodeId AS id, labels(n) AS labels, properties(n) AS props "
        "ORDER BY n.nodeId LIMIT $limit",
    )
    embedded = failed = skipped = 0
    error = ""
    after = ""
    while True:
        rows = db.read(query, labels=wanted, after=after, limit=batch_size, **params)
        if not rows:
            break
        after = rows[-1]["id"]
        texts = {r["id"]: embedding_text(r["labels"], r["props"]) for r in rows}
        todo = {k: v for k, v in texts.items() if v}
        skipped += len(texts) - len(todo)
        try:
            vectors = embedder.embed(list(todo.values())) if todo else []
        except EmbeddingError as err:
            failed += len(todo)
            error = str(err)[:200]
            log_line("reindex", "warn", level=logging.WARNING, reason="embed-failed", error=str(err)[:200])
            break  # the embedder is down: stop, a re-run continues from here
        embedded += writer.set_embeddings(dict(zip(todo, vectors, strict=True)))
        if progress is not None:
            progress(embedded + skipped)
    remaining = count_missing(db, account_id, labels, caller=writer.caller)
    summary: dict[str, Any] = {
        "keyed": keyed,
        "embedded": embedded,
        "skipped": skipped,
        "failed": failed,
        "remaining": remaining,
        # textless nodes never get a vector; anything beyond them is work left for a re-run
        "left": max(remaining - skipped, 0),
        "ms": round((time.perf_counter() - started) * 1000),
    }
    log_line("reindex", accountId=short(account_id), labels=len(wanted), **summary)
    if error:
        summary["error"] = error
    return summary


def backfill_keys(db: Database, caller: Caller, *, batch_size: int = 500) -> int:
    """Derive ``nameKey`` / ``aliasKeys`` and ``dateText`` where a node lacks them; returns how
    many nodes gained keys."""
    guard = node_guard(caller, "n")
    done = 0
    while True:
        rows = db.read(
            f"""
            MATCH (n:Node) WHERE {guard.clause}
              AND ((n.nameKey IS NULL AND (n.name IS NOT NULL OR n.title IS NOT NULL))
                   OR (n.dateText IS NULL AND n.validFrom IS NOT NULL))
            RETURN n.nodeId AS id, labels(n) AS labels, n.name AS name, n.title AS title,
                   n.alternateName AS alternateName, n.aliases AS aliases, n.validFrom AS validFrom
            LIMIT $limit
            """,
            limit=batch_size,
            **guard.params,
        )
        updates = [_derived(r) for r in rows]
        if not updates:
            return done
        db.write(
            f"""
            UNWIND $rows AS row MATCH (n:Node {{nodeId: row.id}}) WHERE {guard.clause}
            SET n.nameKey = coalesce(row.nameKey, n.nameKey), n.aliasKeys = coalesce(row.aliasKeys, n.aliasKeys),
                n.dateText = coalesce(row.dateText, n.dateText)
            """,
            rows=updates,
            **guard.params,
        )
        done += len(updates)
        if len(rows) < batch_size:
            return done


def _derived(row: dict[str, Any]) -> dict[str, Any]:
    """The keys of one node; '' marks a value that gives no key, so the node is not picked again."""
    key, aliases = node_keys(row["labels"], row)
    named = row["name"] is not None or row["title"] is not None
    dated = row["validFrom"] is not None
    return {
        "id": row["id"],
        "nameKey": (key or "") if named else None,
        "aliasKeys": aliases or None,
        "dateText": (date_text(row["validFrom"]) or "") if dated else None,
    }

"""What ``/health`` reports: can the server reach its database, and is its embedder answering.

``status`` is ``ok``, ``degraded`` (the embedder's breaker is open: searches are BM25-only and
writes store without a vector) or ``down`` (Neo4j is unreachable or hung: every tool call
fails). The HTTP status is 200 unless ``down`` (503). The database check is one round trip,
given up on after about ``PING_TIMEOUT_S`` plus a grace period.
"""

from __future__ import annotations

from typing import Any

from ..db import Database
from ..errors import DatabaseUnavailable


def database_health(db: Database) -> dict[str, Any]:
    try:
        return {"uri": db.uri, "reachable": True, "latencyMs": db.ping()}
    except DatabaseUnavailable as err:
        return {"uri": db.uri, "reachable": False, "error": str(err)}


def embedder_health(embedder: Any) -> dict[str, Any]:
    if embedder is None:
        return {"name": None, "breaker": None, "error": "no embedder: searches are BM25-only"}
    report: dict[str, Any] = {"name": embedder.name, "dimensions": embedder.dimensions}
    breaker = getattr(embedder, "breaker", None)  # remote embedders only: an in-process model has none
    report.update(breaker.state() if breaker is not None else {"breaker": None})
    return report


def health_report(db: Database, embedder: Any) -> dict[str, Any]:
    database = database_health(db)
    embed = embedder_health(embedder)
    if not database["reachable"]:
        status = "down"
    elif embed.get("breaker") in ("open", "half-open") or embed["name"] is None:
        status = "degraded"
    else:
        status = "ok"
    return {"ok": status != "down", "status": status, "database": database, "embedder": embed}

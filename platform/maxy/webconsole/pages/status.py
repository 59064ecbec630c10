"""Status: Neo4j, the indexes, the embedding model and, for a key that sees the whole account,
the account's counts (nodes per label, nodes missing embeddings, deletions awaiting purge).

The counts are not guarded by scope or agent, so a pinned key never gets them: it sees the
server's health and the indexes' states, which hold nothing of anyone's data."""

from __future__ import annotations

from typing import Any

from ...data_health import collect_data_health
from ...errors import MaxyError
from ...graph.purge import DEFAULT_GRACE_DAYS
from ...graph.schema import list_indexes, recorded_embedder
from ...mcp.health import health_report
from ..vendor import graph_library_ready
from ..views import Console, View


def status(console: Console, request: Any, view: View) -> Any:
    health = health_report(console.db, console.embedder)
    indexes: list[dict[str, Any]] = []
    recorded = None
    account = None
    if health["database"]["reachable"]:
        try:
            indexes = [i.as_dict() for i in list_indexes(console.db) if i.type in ("VECTOR", "FULLTEXT", "RANGE")]
            recorded = recorded_embedder(console.db)
            if view.admin:
                account = collect_data_health(console.db, view.ctx.caller.account_id)["account"]
        except MaxyError as err:
            health["database"] = dict(health["database"], reachable=False, error=str(err))
    return console.page(
        request,
        view,
        "status.html",
        health=health,
        indexes=indexes,
        recorded=recorded,
        account=account,
        grace_days=DEFAULT_GRACE_DAYS,
        graph_ready=graph_library_ready(),
    )


ROUTES = [("/status", status, ["GET"])]

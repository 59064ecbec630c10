"""``maxy status``: is everything this process needs healthy, and if not, what to do next."""

from __future__ import annotations

from typing import Any

from .accounts import validate_account
from .config import Settings
from .errors import AccountError, MaxyError
from .schema import FULLTEXT_INDEX, IndexInfo, expected_vector_indexes, list_indexes, recorded_embedder


def _embedder_status(settings: Settings, problems: list[str]) -> tuple[dict[str, Any], int | None]:
    """The embedder's report and its dimensions (None when it cannot be loaded)."""
    embed_info: dict[str, Any] = {"model": settings.EMBED_MODEL, "ok": False}
    dims: int | None = None
    try:
        from .embeddings import get_embedder

        embedder = get_embedder(settings)
        dims = embedder.dimensions
        embed_info.update(name=embedder.name, dimensions=dims)
        vec = embedder.embed(["maxy status probe"])[0]
        embed_info["ok"] = len(vec) == dims
        if not embed_info["ok"]:
            problems.append(f"embedder returned {len(vec)} dimensions, expected {dims}: check EMBED_DIMENSIONS")
    except (MaxyError, RuntimeError, ValueError) as err:
        embed_info["error"] = str(err)
        problems.append(f"embedder: {err}")
    return embed_info, dims


def _account_status(settings: Settings, problems: list[str]) -> dict[str, Any]:
    """Account validation, as a writing process would do it at start."""
    acct: dict[str, Any] = {"present": bool(settings.ACCOUNT_ID), "dataRoot": str(settings.data_root)}
    try:
        validated = validate_account(settings.data_root, settings.ACCOUNT_ID)
        acct.update(id=validated.account_id, matchesOnDisk=True)
    except AccountError as err:
        acct.update(id=settings.ACCOUNT_ID, matchesOnDisk=False, reason=err.reason)
        problems.append(str(err))
    return acct


def _neo4j_status(
    settings: Settings, problems: list[str]
) -> tuple[dict[str, Any], list[IndexInfo], dict[str, Any] | None]:
    """Neo4j's report, its indexes and the recorded embedder (none of them when unreachable)."""
    neo: dict[str, Any] = {"uri": settings.NEO4J_URI, "managed": settings.neo4j_is_managed, "reachable": False}
    if settings.neo4j_is_managed:
        try:
            from .neo4j.runtime import Neo4jRuntime

            neo["server"] = Neo4jRuntime.from_settings(settings).status()
        except Exception as err:  # status must never crash: report what failed instead
            neo["server"] = {"error": str(err)}
    try:
        from .db import Database

        with Database(settings) as db:
            neo.update(db.server_info(), reachable=True)
            indexes = list_indexes(db)
            recorded = recorded_embedder(db)
    except MaxyError as err:
        neo["error"] = str(err)
        problems.append(str(err))
        indexes = []
        recorded = None
    return neo, indexes, recorded


def _index_summary(indexes: list[IndexInfo], dims: int | None, problems: list[str]) -> dict[str, Any]:
    """Problems with the declared indexes (missing, offline, wrong dimensions) and their counts."""
    by_name = {i.name: i for i in indexes}
    declared = expected_vector_indexes()
    missing = sorted((set(declared) | {FULLTEXT_INDEX}) - set(by_name))
    if missing:
        problems.append(f"missing index(es) {', '.join(missing)}: run `maxy schema apply`")
    offline = [i.name for i in indexes if i.type in ("VECTOR", "FULLTEXT") and i.state != "ONLINE"]
    if offline:
        problems.append(f"index(es) not online: {', '.join(offline)}; wait, or check `maxy neo4j logs`")
    if dims is not None:
        wrong = [i for i in indexes if i.type == "VECTOR" and i.dimensions not in (None, dims)]
        if wrong:
            problems.append(
                f"vector index(es) {', '.join(i.name for i in wrong)} are not {dims}-dimensional: "
                "run `maxy schema apply --recreate-vector-indexes` then `maxy reindex`"
            )
    return {
        "vectorIndexes": sum(1 for i in indexes if i.type == "VECTOR"),
        "vectorIndexesOnline": sum(1 for i in indexes if i.type == "VECTOR" and i.state == "ONLINE"),
        "vectorIndexesDeclared": len(declared),
        "fulltextOnline": any(i.name == FULLTEXT_INDEX and i.state == "ONLINE" for i in indexes),
    }


def collect_status(settings: Settings) -> dict[str, Any]:
    problems: list[str] = []
    report: dict[str, Any] = {"healthy": False, "problems": problems}

    # Embedder first: its dimensions are what the indexes must match.
    embed_info, dims = _embedder_status(settings, problems)
    report["embedder"] = embed_info
    report["account"] = _account_status(settings, problems)

    # Neo4j and its indexes.
    neo, indexes, recorded = _neo4j_status(settings, problems)
    report["neo4j"] = neo
    embed_info["vectorsFrom"] = None if recorded is None else recorded.get("model")
    name = embed_info.get("name")
    if recorded is not None and name and recorded.get("model") != name:
        problems.append(
            f"stored vectors come from {recorded.get('model')} but the embedder is {name}: set EMBED_MODEL "
            "back, or run `maxy reindex --recreate` (searches are BM25-only until then)"
        )
    report["indexes"] = [i.as_dict() for i in indexes if i.type in ("VECTOR", "FULLTEXT")]
    if neo["reachable"]:
        report["summary"] = _index_summary(indexes, dims, problems)
    report["healthy"] = not problems
    return report

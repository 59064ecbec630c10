"""``maxy status``: is everything this process needs healthy, and if not, what to do next; and
the data's health (``data_health``), with notes that need no action to stay healthy."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .accounts import validate_account
from .config import Settings
from .data_health import collect_data_health
from .errors import AccountError, MaxyError
from .graph.leases import Leases
from .graph.purge import DEFAULT_GRACE_DAYS
from .graph.schema import FULLTEXT_INDEX, IndexInfo, expected_vector_indexes, list_indexes, recorded_embedder
from .neo4j.known_issues import vector_filter_bug


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
        acct.update(id=validated.account_id, name=validated.ref()["name"], matchesOnDisk=True)
    except AccountError as err:
        acct.update(id=settings.ACCOUNT_ID, matchesOnDisk=False, reason=err.reason)
        problems.append(str(err))
    return acct


def _neo4j_status(
    settings: Settings, account_id: str | None, problems: list[str]
) -> tuple[dict[str, Any], list[IndexInfo], dict[str, Any] | None, dict[str, Any] | None]:
    """Neo4j's report, its indexes, the recorded embedder and the data's health (none of them
    when unreachable)."""
    neo: dict[str, Any] = {"uri": settings.NEO4J_URI, "managed": settings.neo4j_is_managed, "reachable": False}
    console_log = None
    if settings.neo4j_is_managed:
        try:
            from .neo4j.runtime import Neo4jRuntime

            runtime = Neo4jRuntime.from_settings(settings)
            console_log = runtime.console_log
            neo["server"] = runtime.status()
        except Exception as err:  # status must never crash: report what failed instead
            neo["server"] = {"error": str(err)}
    try:
        from .db import Database

        with Database(settings) as db:
            neo.update(db.server_info(), reachable=True)
            indexes = list_indexes(db)
            recorded = recorded_embedder(db)
            data = collect_data_health(db, account_id)
            data["ingests"] = _left_ingests(db, account_id)
            data["background"] = background_rounds(db, account_id)
    except MaxyError as err:
        neo["error"] = str(err)
        problems.append(str(err))
        return neo, [], None, None
    neo["knownIssues"] = [vector_filter_bug(neo.get("version"), console_log)]
    return neo, indexes, recorded, data


def _left_ingests(db: Any, account_id: str | None) -> list[dict[str, Any]]:
    """The account's unfinished ingests of large documents (``maxy.ingest.stopped``)."""
    from .graph.guards import Caller
    from .ingest.stopped import find_left_ingests

    return [x.as_dict() for x in find_left_ingests(db, Caller(account_id))] if account_id else []


def background_rounds(db: Any, account_id: str | None) -> list[dict[str, Any]]:
    """The latest round of each periodic job (``maxy.graph.leases``): the database-wide ones and
    this account's own (a lease named ``<job>:<accountId>``), not other accounts'."""
    out = []
    for row in Leases(db).status():
        job, _, owner = row["name"].partition(":")
        if owner and owner != account_id:
            continue
        out.append(
            {
                "name": row["name"],
                "job": job,
                "round": row["round"],
                "holder": row["holder"],
                "startedAt": _iso(row["acquiredAt"]),
                "finishedAt": _iso(row["releasedAt"]),
                "outcome": row["outcome"],
                "held": bool(row["held"]),
                "secondsAgo": None if row["acquiredAt"] is None else round((row["now"] - row["acquiredAt"]) / 1000),
            }
        )
    return out


def _iso(epoch_ms: int | None) -> str | None:
    return None if epoch_ms is None else datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="seconds")


def background_line(rounds: list[dict[str, Any]]) -> str:
    """``rounds    negotiation-sweep round 12 by host:pid:id 40 s ago (done); ...``: a round still
    ``running`` on a lapsed lease is one whose process stopped in the middle of it."""
    told = [
        f"{r['job']}{' (this account)' if r['name'] != r['job'] else ''} round {r['round']:,} by {r['holder']} "
        f"{r['secondsAgo']:,} s ago ({'stopped mid-round' if r['outcome'] == 'running' and not r['held'] else r['outcome']})"
        for r in rounds
        if r["round"]
    ]
    return "rounds    " + ("; ".join(told) or "none yet")


def _ingest_warnings(data: dict[str, Any] | None, warnings: list[str], notes: list[str]) -> None:
    """A stopped ingest's hidden nodes are a warning (they take room, and only an ingest or a
    purge removes them); a running one is a note."""
    from .ingest.stopped import running_note, status_line

    left = (data or {}).get("ingests", [])
    line = status_line(left)
    if line:
        warnings.append(line)
    note = running_note(left)
    if note:
        notes.append(note)


def _index_summary(indexes: list[IndexInfo], dims: int | None, problems: list[str]) -> dict[str, Any]:
    """Problems with the declared indexes (missing, offline, wrong dimensions) and their counts."""
    by_name = {i.name: i for i in indexes}
    declared = expected_vector_indexes()
    missing = sorted((set(declared) | {FULLTEXT_INDEX}) - set(by_name))
    if missing:
        problems.append(f"missing index(es) {', '.join(missing)}: run `maxy schema apply`")
    failed = [i.name for i in indexes if i.state == "FAILED"]
    if failed:
        problems.append(
            f"index(es) FAILED: {', '.join(failed)}; `maxy neo4j logs` says why, then DROP INDEX each "
            "and run `maxy schema apply`"
        )
    offline = [
        f"{i.name} ({i.state} {i.population_percent or 0:.0f}%)"
        for i in indexes
        if i.type in ("VECTOR", "FULLTEXT") and i.state not in ("ONLINE", "FAILED")
    ]
    if offline:
        problems.append(f"index(es) not online yet: {', '.join(offline)}; wait, or check `maxy neo4j logs`")
    if dims is not None:
        wrong = [i for i in indexes if i.type == "VECTOR" and i.dimensions not in (None, dims)]
        if wrong:
            problems.append(
                f"vector index(es) {', '.join(i.name for i in wrong)} are not {dims}-dimensional: "
                "run `maxy schema apply --recreate-vector-indexes` then `maxy reindex`"
            )
    states: dict[str, int] = {}
    for i in indexes:
        states[i.state] = states.get(i.state, 0) + 1
    return {
        "indexStates": states,
        "vectorIndexes": sum(1 for i in indexes if i.type == "VECTOR"),
        "vectorIndexesOnline": sum(1 for i in indexes if i.type == "VECTOR" and i.state == "ONLINE"),
        "vectorIndexesDeclared": len(declared),
        "fulltextOnline": any(i.name == FULLTEXT_INDEX and i.state == "ONLINE" for i in indexes),
    }


def _data_notes(data: dict[str, Any] | None, neo: dict[str, Any], notes: list[str]) -> None:
    """Advice that does not make the system unhealthy: backlogs and known server log noise."""
    account = (data or {}).get("account")
    if account and account["missingEmbeddingsTotal"]:
        notes.append(
            f"{account['missingEmbeddingsTotal']} node(s) of account {account['id']} have no embedding, so vector "
            "search misses them: run `maxy reindex`"
        )
    if account and account["purgeable"]:
        notes.append(
            f"{account['purgeable']} deleted node(s) of account {account['id']} are past the "
            f"{DEFAULT_GRACE_DAYS}-day grace period: run `maxy purge`"
        )
    notes.extend(((neo.get("server") or {}).get("memory") or {}).get("fit", {}).get("notes", []))  # memory.py
    for issue in neo.get("knownIssues", []):
        logged = issue["loggedSinceStart"]
        if issue["knownOnThisVersion"] and logged:
            notes.append(
                f"the Neo4j log's {logged} ERROR line(s) '...ExecutionFailed]: Index 33554431 out of bounds for "
                f"length N' since start are a known Neo4j {neo.get('version')} bug in filtered vector search; Maxy "
                f"answered those searches from an exact scan, results are complete ({issue['doc']})"
            )


def collect_status(settings: Settings) -> dict[str, Any]:
    problems: list[str] = []
    notes: list[str] = []
    warnings: list[str] = []  # healthy, but something wants doing
    report: dict[str, Any] = {"healthy": False, "problems": problems, "warnings": warnings, "notes": notes}

    # Embedder first: its dimensions are what the indexes must match.
    embed_info, dims = _embedder_status(settings, problems)
    report["embedder"] = embed_info
    report["account"] = _account_status(settings, problems)
    account_id = report["account"]["id"] if report["account"].get("matchesOnDisk") else None

    # Neo4j, its indexes and the data.
    neo, indexes, recorded, data = _neo4j_status(settings, account_id, problems)
    report["neo4j"] = neo
    embed_info["vectorsFrom"] = None if recorded is None else recorded.get("model")
    name = embed_info.get("name")
    report["embeddingModel"] = {
        "recorded": embed_info["vectorsFrom"],
        "configured": settings.EMBED_MODEL,
        "embedder": name,
        "matches": None if recorded is None or not name else recorded.get("model") == name,
    }
    if data is not None:
        data["auditRetentionDays"] = settings.AUDIT_RETENTION_DAYS
    report["data"] = data
    _data_notes(data, neo, notes)
    _ingest_warnings(data, warnings, notes)
    if recorded is not None and name and recorded.get("model") != name:
        problems.append(
            f"stored vectors come from {recorded.get('model')} but the embedder is {name}: set EMBED_MODEL "
            "back, or run `maxy reindex --recreate` (searches are BM25-only until then)"
        )
    report["indexes"] = [i.as_dict() for i in indexes if i.type in ("VECTOR", "FULLTEXT")]
    if neo["reachable"]:
        report["summary"] = _index_summary(indexes, dims, problems)
    report["healthy"] = not problems
    report["state"] = "unhealthy" if problems else "warning" if warnings else "healthy"
    return report


def _counts(section: dict[str, Any], top: int = 6) -> str:
    ranked = sorted(section["nodes"].items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ", ".join(f"{label} {n:,}" for label, n in ranked[:top])
    more = f", {len(ranked) - top} more label(s)" if len(ranked) > top else ""
    return f"{section['nodesTotal']:,} nodes ({shown or 'none'}{more})"


def _audit(section: dict[str, Any]) -> str:
    audit = section["audit"]
    since = f" since {audit['oldest'][:10]}" if audit["oldest"] else ""
    return f"audit {audit['toolCalls']:,} ToolCall(s){since}"


def data_lines(report: dict[str, Any]) -> list[str]:
    """The data section of ``maxy status`` as text lines (the same facts as ``--json``)."""
    data = report.get("data")
    if data is None:
        return []
    lines = []
    account = data["account"]
    if account is not None:
        lines.append(
            f"data      account {account['id']}: {_counts(account)}; "
            f"{account['missingEmbeddingsTotal']:,} without embedding; "
            f"{account['deletedTotal']:,} deleted awaiting purge; {_audit(account)}"
        )
    total = data["total"]
    retention = data["auditRetentionDays"]
    lines.append(
        f"data      all accounts: {_counts(total)}; {total['deletedTotal']:,} deleted awaiting purge; "
        f"{_audit(total)} (kept {f'{retention} days' if retention else 'forever'})"
    )
    model = report["embeddingModel"]
    lines.append(
        f"vectors   from {model['recorded'] or '(none recorded)'}; embedder {model['embedder'] or '-'} "
        f"(EMBED_MODEL={model['configured']})"
    )
    lines.append(background_line(data.get("background") or []))
    states = (report.get("summary") or {}).get("indexStates") or {}
    lines.append("indexes   " + (", ".join(f"{n} {state}" for state, n in sorted(states.items())) or "none"))
    return lines

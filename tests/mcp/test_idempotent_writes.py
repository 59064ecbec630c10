"""The writes annotated idempotent really are, through the SDK's client against the real Neo4j:
work-complete links each produced node once and a repeat writes nothing and answers the same;
memory-report-write keeps one report per title and minute, a repeat changes nothing and a
changed body updates the report and says so."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from maxy.config import load_settings
from maxy.mcp.server import create_mcp_server, pinned_context
from maxy.plugins.discovery import discover_plugins
from mcp import Client

from tests.plugins_fixture.helpers import text


@pytest.fixture()
def server(db, account, data_root, embedder) -> Any:
    settings = load_settings(DATA_ROOT=data_root, ACCOUNT_ID=account.account_id)
    ctx = pinned_context(settings, "admin", account, db=db, embedder=embedder)
    return create_mcp_server(discover_plugins(["memory", "work"]), "admin", lambda plugin, headers: ctx, audit=False)


def _run(server: Any, work: Any) -> Any:
    async def run() -> Any:
        async with Client(server) as client:

            async def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
                result = await client.call_tool(name, args)
                assert not result.is_error, f"{name}: {text(result)}"
                return result.structured_content or {}

            return await work(call)

    return anyio.run(run)


def _node(db: Any, node_id: str) -> dict[str, Any]:
    rows = db.read(
        "MATCH (n:Node {nodeId: $id}) OPTIONAL MATCH (n)-[p:PRODUCED]->(e) "
        "RETURN properties(n) AS props, collect(e.nodeId) AS produced",
        id=node_id,
    )
    props = dict(rows[0]["props"])
    props.pop("embedding", None)
    return {"props": props, "produced": sorted(rows[0]["produced"])}


def test_work_complete_twice_changes_nothing_and_answers_the_same(db, server) -> None:
    async def work(call: Any) -> dict[str, Any]:
        task = await call("work-create", {"kind": "site-publish"})
        a = await call("memory-write", {"labels": ["Note"], "properties": {"name": "page a"}})
        b = await call("memory-write", {"labels": ["Note"], "properties": {"name": "page b"}})
        tid, done = task["taskId"], {"taskId": task["taskId"], "producedNodeIds": [a["nodeId"]]}
        out: dict[str, Any] = {"ids": (tid, a["nodeId"], b["nodeId"])}
        out["first"] = await call("work-complete", done)
        out["after_first"] = _node(db, tid)
        out["second"] = await call("work-complete", done)
        out["after_second"] = _node(db, tid)
        out["more"] = await call("work-complete", done | {"producedNodeIds": [a["nodeId"], b["nodeId"]]})
        out["after_more"] = _node(db, tid)
        out["more_again"] = await call("work-complete", done | {"producedNodeIds": [b["nodeId"], a["nodeId"]]})
        out["after_more_again"] = _node(db, tid)
        out["failed"] = await call("work-complete", {"taskId": tid, "status": "failed"})
        return out

    out = _run(server, work)
    tid, a, b = out["ids"]
    first = out["first"]
    assert first == {
        "taskId": tid,
        "status": "completed",
        "completedAt": first["completedAt"],
        "produced": [a],
        "producedCount": 1,
    }
    assert out["second"] == first, "a repeat answers the same"
    assert out["after_second"] == out["after_first"], "a repeat writes nothing (not even updatedAt)"
    assert out["after_first"]["produced"] == [a] and out["after_first"]["props"]["producedCount"] == 1

    assert out["more"]["producedCount"] == 2 and out["more"]["completedAt"] == first["completedAt"]
    assert out["after_more"]["produced"] == sorted([a, b]) and out["after_more"]["props"]["producedCount"] == 2
    assert out["after_more_again"] == out["after_more"] and out["more_again"]["producedCount"] == 2

    assert out["failed"]["status"] == "failed" and out["failed"]["completedAt"] != first["completedAt"]
    assert out["failed"]["producedCount"] == 2 and out["failed"]["produced"] == []


def test_report_rewrite_same_body_is_a_repeat_and_a_new_body_updates(db, account, server) -> None:
    report = {
        "title": "Nightly digest",
        "body": "3 new leads.",
        "keywords": ["nightly-digest"],
        "sourceWorkflow": "nightly",
        "occurredAt": "2026-05-07T06:00:05Z",
    }

    async def work(call: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"first": await call("memory-report-write", report)}
        rid = out["first"]["reportId"]
        out["stored_first"] = _node(db, rid)
        out["repeat"] = await call("memory-report-write", report | {"occurredAt": "2026-05-07T06:00:40Z"})
        out["stored_repeat"] = _node(db, rid)
        new_body = {
            "title": report["title"],
            "body": "4 new leads (one came in late).",
            "occurredAt": "2026-05-07T06:00:59Z",
        }
        out["rewrite"] = await call("memory-report-write", new_body)
        out["stored_rewrite"] = _node(db, rid)
        out["rewrite_again"] = await call("memory-report-write", new_body)
        out["retag"] = await call("memory-report-write", new_body | {"keywords": ["digest"]})
        out["stored_retag"] = _node(db, rid)
        out["latest"] = await call("memory-report-read-latest", {"keyword": "digest"})
        out["next_minute"] = await call("memory-report-write", report | {"occurredAt": "2026-05-07T06:01:00Z"})
        return out

    out = _run(server, work)
    first, rid = out["first"], out["first"]["reportId"]
    assert first["created"] is True and first["updated"] is False and first["idempotent"] is False
    assert out["repeat"] == first | {"created": False, "idempotent": True}
    assert out["stored_repeat"] == out["stored_first"], "the same body again writes nothing"

    assert out["rewrite"] == first | {"created": False, "updated": True}
    stored = out["stored_rewrite"]["props"]
    assert stored["body"] == "4 new leads (one came in late)." and stored["bodyChars"] == len(stored["body"])
    assert stored["keywords"] == ["nightly-digest"] and stored["sourceWorkflow"] == "nightly", "omitted: kept"
    assert stored["occurredAt"] == out["stored_first"]["props"]["occurredAt"]
    assert out["rewrite_again"]["idempotent"] is True and out["rewrite_again"]["updated"] is False

    assert out["retag"]["updated"] is True and out["stored_retag"]["props"]["keywords"] == ["digest"]
    [latest] = out["latest"]["reports"]
    assert latest["reportId"] == rid and latest["body"] == "4 new leads (one came in late)."

    assert out["next_minute"]["created"] is True and out["next_minute"]["reportId"] != rid
    reports = db.read("MATCH (r:Report) WHERE r.accountId = $acc RETURN count(r) AS n", acc=account.account_id)
    assert reports[0]["n"] == 2

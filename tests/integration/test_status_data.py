"""``maxy status`` reports the data's health: known nodes written into a fresh account are
counted exactly (live nodes per label, missing embeddings, deleted awaiting purge, the audit)."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

from maxy.data_health import collect_data_health
from maxy.graph.guards import Caller
from maxy.graph.write import GraphWriter, NodeSpec
from maxy.mcp.audit import ToolCallRecord, record_tool_call
from maxy.plugins.api import ToolContext

from tests.cli_inprocess import maxy
from tests.plugins_fixture.helpers import child_env, seed_conversation


def _status(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``maxy status ARGS`` as an operator runs it."""
    return maxy(["status", *args], env)


def _soft_delete(db, node_id: str, ago: timedelta) -> str:
    at = (datetime.now(UTC) - ago).isoformat()
    db.write("MATCH (n:Node {nodeId: $id}) SET n.deletedAt = $at", id=node_id, at=at)
    return at


def _seed(db, settings, account, embedder, make_account) -> dict[str, str]:
    bare = GraphWriter(db, account, None)  # no embedder: stored without an embedding
    notes = [bare.write(NodeSpec(["Note"], {"name": f"note {i}", "text": "harbour log"})).node_id for i in range(3)]
    embedded = GraphWriter(db, account, embedder)
    people = [embedded.write(NodeSpec(["Person"], {"name": name})).node_id for name in ("Ada Byron", "Grace Hopper")]
    seed_conversation(db, account)  # one node, two labels: Conversation and AdminConversation
    s = settings.model_copy(update={"ACCOUNT_ID": account.account_id, "AUDIT_RETENTION_DAYS": 0})
    ctx = ToolContext(
        settings=s, role="admin", caller=Caller(account.account_id), account=account, embedder=None, _db=db
    )
    now = datetime.now(UTC)
    for name in ("memory-search", "memory-write"):
        assert record_tool_call(ctx, ToolCallRecord(name, "memory", {}, "ok", False, now, now))
    old = _soft_delete(db, notes[2], timedelta(days=10))  # past the 7-day grace: purgeable
    _soft_delete(db, people[1], timedelta(hours=1))  # deleted, still in its grace period
    other = make_account("elsewhere")
    GraphWriter(db, other, None).write(NodeSpec(["Note"], {"name": "someone else's"}))
    return {"oldestDeleted": old}


def test_known_nodes_are_counted_exactly(db, settings, account, embedder, make_account, data_root: Path) -> None:
    seeded = _seed(db, settings, account, embedder, make_account)
    report = collect_data_health(db, account.account_id)
    mine = report["account"]
    assert mine["id"] == account.account_id
    assert mine["nodes"] == {"Note": 2, "Person": 1, "Conversation": 1, "AdminConversation": 1, "ToolCall": 2}
    assert mine["nodesTotal"] == 6  # the conversation is one node under two labels
    assert mine["missingEmbeddings"] == {"Note": 2, "Conversation": 1}  # not the deleted note, not ToolCalls
    assert mine["missingEmbeddingsTotal"] == 3
    assert mine["deleted"] == {"Note": 1, "Person": 1} and mine["deletedTotal"] == 2
    assert mine["purgeable"] == 1 and mine["oldestDeletedAt"] == seeded["oldestDeleted"]
    tool_calls = db.read("MATCH (t:ToolCall {accountId: $acc}) RETURN min(t.createdAt) AS o", acc=account.account_id)
    assert mine["audit"] == {"toolCalls": 2, "oldest": tool_calls[0]["o"]}

    total = report["total"]  # the whole database: at least this account's (others write beside us)
    for label, n in mine["nodes"].items():
        assert total["nodes"][label] >= n
    assert total["nodesTotal"] >= mine["nodesTotal"] + 1  # + the other account's note
    assert total["deletedTotal"] >= 2 and total["purgeable"] >= 1
    assert total["audit"]["toolCalls"] >= 2 and total["audit"]["oldest"] <= mine["audit"]["oldest"]

    empty = collect_data_health(db, None)
    assert empty["account"] is None and empty["total"]["nodesTotal"] >= 7


def test_maxy_status_reports_the_data_for_an_account(
    db, settings, account, embedder, make_account, data_root: Path
) -> None:
    _seed(db, settings, account, embedder, make_account)
    env = child_env(data_root)
    env.pop("ACCOUNT_ID", None)

    run = _status(env, "--json", "--account", account.account_id)
    report = json.loads(run.stdout)
    data = report["data"]
    assert data["account"]["id"] == account.account_id
    assert data["account"]["nodesTotal"] == 6 and data["account"]["missingEmbeddingsTotal"] == 3
    assert data["auditRetentionDays"] == settings.AUDIT_RETENTION_DAYS
    assert report["embeddingModel"]["matches"] is True
    assert report["embeddingModel"]["recorded"] == report["embedder"]["name"]
    assert set(report["summary"]["indexStates"]) <= {"ONLINE", "POPULATING", "FAILED"}
    assert sum(report["summary"]["indexStates"].values()) >= report["summary"]["vectorIndexesDeclared"] + 1
    assert any("3 node(s)" in note and "maxy reindex" in note for note in report["notes"])
    assert any("1 deleted node(s)" in note and "maxy purge" in note for note in report["notes"])
    issue = report["neo4j"]["knownIssues"][0]
    assert issue["issue"] == "vector-filter-search" and "33554431" in issue["logLine"]

    text = _status(env, "--account", account.account_id)
    assert f"data      account {account.account_id}: 6 nodes (" in text.stdout
    assert "3 without embedding; 2 deleted awaiting purge; audit 2 ToolCall(s) since" in text.stdout
    assert "note: 3 node(s) of account" in text.stdout


def test_an_account_that_is_not_on_disk_is_the_account_problem(db, data_root: Path) -> None:
    env = child_env(data_root)
    run = _status(env, "--json", "--account", "no such account")
    assert run.returncode == 1 and "Traceback" not in run.stderr
    report = json.loads(run.stdout)
    assert report["account"]["matchesOnDisk"] is False and report["data"]["account"] is None
    assert report["data"]["total"]["nodesTotal"] >= 0
    assert any(p.startswith("ACCOUNT_ID=no such account: ") and "maxy account" in p for p in report["problems"])

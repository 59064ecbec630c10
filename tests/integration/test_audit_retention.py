"""Audit retention against the real Neo4j: ``maxy audit prune`` and the automatic prune the audit
writer starts in the background (AUDIT_RETENTION_DAYS)."""

from __future__ import annotations

import json
import logging
import subprocess
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from maxy.graph.guards import Caller
from maxy.mcp import audit_retention
from maxy.mcp.audit import ToolCallRecord, record_tool_call
from maxy.mcp.audit_retention import prune_tool_calls, schedule_retention
from maxy.plugins.api import ToolContext

from tests.cli_inprocess import maxy
from tests.plugins_fixture.helpers import child_env, run_at_once, seed_conversation


def _ctx(settings, db, account, *, days: int, session: str | None = None) -> ToolContext:
    s = settings.model_copy(update={"ACCOUNT_ID": account.account_id, "AUDIT_RETENTION_DAYS": days})
    return ToolContext(
        settings=s,
        role="admin",
        caller=Caller(account.account_id),
        account=account,
        embedder=None,
        session_node_id=session,
        _db=db,
    )


def _call(ctx: ToolContext, name: str) -> str:
    now = datetime.now(UTC)
    node_id = record_tool_call(ctx, ToolCallRecord(name, "memory", {"q": name}, "ok", False, now, now))
    assert node_id is not None
    return node_id


def _age(db, node_id: str, days: float) -> None:
    """Make a ToolCall look as if it was written ``days`` ago (the writer stamps now)."""
    then = (datetime.now(UTC) - timedelta(days=days)).isoformat()
    db.write("MATCH (t:ToolCall {nodeId: $id}) SET t.createdAt = $then", id=node_id, then=then)


def _names(db, account_id: str) -> list[str]:
    rows = db.read("MATCH (t:ToolCall {accountId: $acc}) RETURN t.toolName AS n ORDER BY n", acc=account_id)
    return [r["n"] for r in rows]


def _invoked(db, account_id: str) -> int:
    rows = db.read(
        "MATCH (:Conversation {accountId: $acc})-[r:INVOKED]->(:ToolCall) RETURN count(r) AS c", acc=account_id
    )
    return int(rows[0]["c"])


def _retention_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "maxy-audit-retention"]


def _join_retention() -> None:
    for thread in _retention_threads():
        thread.join(timeout=60)


@pytest.fixture()
def linked(settings, db, account):
    """Four ToolCalls invoked from a Conversation: two 40 days old, one 10 days, one new."""
    conversation, session = seed_conversation(db, account)
    ctx = _ctx(settings, db, account, days=0, session=session)  # 0: no automatic prune here
    ids = {name: _call(ctx, name) for name in ("old-a", "old-b", "recent", "new")}
    for name, days in (("old-a", 40), ("old-b", 40), ("recent", 10)):
        _age(db, ids[name], days)
    assert _invoked(db, account.account_id) == 4
    return conversation, ids


def test_dry_run_counts_and_prune_deletes_only_what_is_older_with_its_relationships(
    db, account, make_account, settings, linked, caplog
) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    conversation, _ = linked
    other = make_account("other")
    other_ctx = _ctx(settings, db, other, days=0)
    _age(db, _call(other_ctx, "other-old"), 40)  # another account's old ToolCall is not ours to prune

    dry = prune_tool_calls(db, account.account_id, timedelta(days=30), dry_run=True)
    assert (dry["toolCalls"], dry["relationships"], dry["dryRun"]) == (2, 2, True)
    assert _names(db, account.account_id) == ["new", "old-a", "old-b", "recent"]  # nothing deleted

    done = prune_tool_calls(db, account.account_id, timedelta(days=30))
    assert (done["toolCalls"], done["relationships"], done["dryRun"]) == (2, 2, False)
    assert _names(db, account.account_id) == ["new", "recent"]
    assert _invoked(db, account.account_id) == 2
    assert db.read("MATCH (c:Conversation {nodeId: $id}) RETURN count(c) AS c", id=conversation)[0]["c"] == 1
    assert _names(db, other.account_id) == ["other-old"]

    again = prune_tool_calls(db, account.account_id, timedelta(days=30))
    assert again["toolCalls"] == 0  # idempotent

    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("[audit] prune ")]
    assert len(lines) == 3
    assert "dry-run=true tool-calls=2 relationships=2" in lines[0]
    assert "trigger=cli older-than=30d" in lines[1] and "dry-run=false tool-calls=2" in lines[1]


def test_prune_deletes_in_batches(db, account, settings, monkeypatch) -> None:
    ctx = _ctx(settings, db, account, days=0)
    for i in range(7):
        _age(db, _call(ctx, f"old-{i}"), 3)
    _call(ctx, "new")
    monkeypatch.setattr(audit_retention, "PRUNE_BATCH_ROWS", 2)  # four transactions of at most two
    result = prune_tool_calls(db, account.account_id, timedelta(hours=12))
    assert result["toolCalls"] == 7
    assert _names(db, account.account_id) == ["new"]


def test_the_audit_writer_prunes_in_the_background_at_most_once_an_interval(
    db, account, settings, linked, caplog
) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    _join_retention()
    ctx = _ctx(settings, db, account, days=30)
    _call(ctx, "trigger")  # the first audited call of this account in this process starts a prune
    _join_retention()
    assert _names(db, account.account_id) == ["new", "recent", "trigger"]
    auto = [
        r for r in caplog.records if r.getMessage().startswith("[audit] prune ") and "trigger=auto" in r.getMessage()
    ]
    assert len(auto) == 1 and "tool-calls=2" in auto[0].getMessage()
    assert auto[0].threadName == "maxy-audit-retention"  # not the thread that served the call

    # Within the hour a second call starts nothing: a ToolCall aged now stays until the next run.
    _age(db, _call(ctx, "aged-later"), 40)
    _call(ctx, "second")
    assert not _retention_threads()
    _join_retention()
    assert "aged-later" in _names(db, account.account_id)
    thread = schedule_retention(db, account.account_id, 30, interval_s=0)  # the hour has passed
    assert thread is not None
    audit_retention.finish_prunes(db, timeout_s=60)  # what a server does before closing its database
    assert not thread.is_alive()
    assert "aged-later" not in _names(db, account.account_id)


def test_retention_zero_keeps_every_tool_call(db, account, settings, linked) -> None:
    ctx = _ctx(settings, db, account, days=0)
    _call(ctx, "trigger")
    _join_retention()
    assert schedule_retention(db, account.account_id, 0, interval_s=0) is None
    assert _names(db, account.account_id) == ["new", "old-a", "old-b", "recent", "trigger"]


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return maxy([*args], env, check=False)


def test_maxy_audit_prune_command(db, account, data_root: Path, linked) -> None:
    env = child_env(data_root, ACCOUNT_ID=account.account_id)
    bad = _cli(["audit", "prune", "--older-than", "30x"], env)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr  # a bad flag is a usage error
    assert bad.stderr.strip().splitlines() == [
        "error: --older-than: '30x' is not a duration; give a whole number and a unit: 90m, 12h, 30d or 2w"
    ]

    dry = _cli(["--verbose", "audit", "prune", "--older-than", "2w", "--dry-run", "--json"], env)
    assert dry.returncode == 0, dry.stderr
    report = json.loads(dry.stdout)
    assert report["toolCalls"] == 2 and report["dryRun"] is True and report["olderThan"] == "2w"
    assert report["account"] == account.ref()
    assert "[audit] prune " in dry.stderr and "dry-run=true" in dry.stderr
    assert len(_names(db, account.account_id)) == 4

    done = _cli(["audit", "prune", "--older-than", "1w"], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"deleted 3 ToolCall(s) of {account.label()} older than 1w")
    assert _names(db, account.account_id) == ["new"]

    pinned = _cli(["audit", "prune", "--older-than", "1d"], dict(env, ALLOWED_SCOPES="public"))
    assert pinned.returncode == 1
    assert [line for line in pinned.stderr.splitlines() if line.startswith("error:")] == [
        "error: maxy audit prune: the audit trail belongs to the whole account; "
        "unset ALLOWED_SCOPES and AGENT_SLUG to prune it"
    ]


_REPLICA_PRUNE = """
import sys, time
from maxy.db import Database
from maxy.logs import configure
from maxy.mcp.audit_retention import finish_prunes, schedule_retention

configure("INFO")
db = Database()
db.read("RETURN 1 AS one")
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
schedule_retention(db, sys.argv[1], 30)
finish_prunes(db, timeout_s=60)
"""


def test_replicas_asking_at_once_prune_an_account_once(db, account, data_root: Path, linked) -> None:
    outs = run_at_once(_REPLICA_PRUNE, [account.account_id], 3, data_root)
    errs = [err for _, _, err in outs]
    name = f"audit-prune:{account.account_id}"
    try:
        assert all(code == 0 for code, _, _ in outs), errs
        pruned = [line for err in errs for line in err.splitlines() if line.startswith("[audit] prune ")]
        assert len(pruned) == 1 and "trigger=auto" in pruned[0] and "tool-calls=2" in pruned[0], errs
        rounds = [line for err in errs for line in err.splitlines() if line.startswith(f"[lease] round name={name} ")]
        assert len(rounds) == 1 and " round=1 " in rounds[0] and "outcome=done" in rounds[0]
        assert _names(db, account.account_id) == ["new", "recent"]
        assert db.read("MATCH (l:Lease {name: $n}) RETURN l.round AS r", n=name) == [{"r": 1}]
    finally:
        db.write("MATCH (l:Lease|LeaseRound {name: $n}) DETACH DELETE l", n=name)

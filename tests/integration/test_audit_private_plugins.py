"""The audit trail of a community call keeps who called which tool, when, its argument names
and whether it failed, never the values or the answer: a member's profile, intent or negotiation
turn is readable only through the community tools, and the audit trail is not one of them."""

from __future__ import annotations

from datetime import UTC, datetime

from maxy.graph.guards import Caller
from maxy.mcp.audit import PRIVATE_OUTPUT, ToolCallRecord, record_tool_call
from maxy.provenance.audit_trail import list_tool_calls

from tests.integration.test_plugin_tools import make_ctx

TURN = "Ada would rather not share her salary band of 140k with anyone yet"


def test_a_community_call_is_audited_without_its_contents(settings, db, account) -> None:
    quiet = settings.model_copy(update={"AUDIT_RETENTION_DAYS": 0})
    ctx = make_ctx(quiet, db, account, None, plugin="community")
    now = datetime.now(UTC)
    args = {"negotiationId": "neg-1", "action": "counter", "message": TURN}
    assert record_tool_call(ctx, ToolCallRecord("respond_to_negotiation", "community", args, TURN, False, now, now))
    assert record_tool_call(
        ctx, ToolCallRecord("memory-search", "memory", {"query": "salary"}, "found 1", False, now, now)
    )
    _, rows = list_tool_calls(db, Caller(account.account_id))
    by_tool = {r["toolName"]: r for r in rows}
    private, ordinary = by_tool["respond_to_negotiation"], by_tool["memory-search"]
    assert private["pluginName"] == "community" and private["isError"] is False
    assert "salary" not in private["input"] and "140k" not in private["output"]
    assert all(name in private["input"] for name in args)  # what was passed is still auditable
    assert private["output"] == PRIVATE_OUTPUT
    assert "salary" in ordinary["input"] and ordinary["output"] == "found 1"

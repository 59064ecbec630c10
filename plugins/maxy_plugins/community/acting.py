"""Who a community tool acts as: the server's view (the account's, narrowed to its pinned
member), the community's writer inside it, and an answer carrying the call's trace events."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from maxy.community import MemberView, community_writer, trace
from maxy.graph.write import GraphWriter
from maxy.plugins import ToolContext, ToolError


def member_view(ctx: ToolContext, member_id: str | None = None) -> MemberView:
    """The reader this server is: the account view narrowed to its pinned member, if any (a
    ``member_id`` other than the pinned one is refused as an unknown member)."""
    ctx.refuse_widening({"memberId": member_id})
    return MemberView(ctx.caller, ctx.member_id)


def acting_member(ctx: ToolContext, member_id: str | None) -> str:
    """The member a call acts for: the pinned one (another is refused as unknown), else the one
    the admin names."""
    chosen = MemberView(ctx.caller, ctx.member_id).resolve(member_id)
    if chosen is None:
        raise ToolError("memberId: name the member (this server acts for the account's admin, not for one member)")
    return chosen


def member_writer(ctx: ToolContext) -> GraphWriter:
    """The community's writer inside this server's view (refused on a read-only server)."""
    ctx.writer()  # refuses the public role and an unvalidated account, as every writing tool does
    assert ctx.account is not None
    return community_writer(ctx.db, ctx.account, ctx.embedder, ctx.caller, created_by=f"agent:{ctx.plugin or 'mcp'}")


def traced(run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``run()``'s answer with the trace events of the call."""
    with trace.collecting():
        out = run()
        return {**out, "trace": trace.collected()}

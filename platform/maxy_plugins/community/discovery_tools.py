"""The community plugin's discovery tool: opportunities for a member from a query, one of their
intents, or with a named member (``maxy.discovery``). Each answer carries its trace events."""

from __future__ import annotations

from typing import Annotated, Any

from maxy.discovery import discover_opportunities
from maxy.discovery.pipeline import MAX_LIMIT, MAX_QUERY
from maxy.plugins import ToolContext, tool, tool_errors
from pydantic import Field

from .acting import member_view, member_writer, traced
from .intent_tools import MemberArg


@tool(
    "discover_opportunities",
    title="Discover opportunities",
    description="""\
Find members worth meeting, only among those who share a network with you: from a `query` (what
you are looking for) or one of your intents (`intentId`), through search lenses and hypothetical
matches over profiles and intents; or with one named member (`targetMemberId`, the direct path).
Each pair is scored 0-100 (90+ must meet, 70-89 should meet, below 70 left out) with reasoning and
roles (agent: they can do something for you; patient: they need something you have; peer), and
kept ones become opportunities. Without a model the score is the similarity, and the answer says
so (degraded, reason).

By default (negotiate=true) each kept match is then negotiated between the two members' agents
before anyone is asked to accept it: the opportunity is stored negotiating, the system negotiator
takes its members' turns at once (a few model calls per match), and a member whose profile says
negotiationMode personal gets its turn parked for their own agent to pick up. Each opportunity
in the answer carries its `negotiation` (negotiationId, state, outcome once over) and its status
after it: pending (both sides agreed: the member can accept it), rejected, stalled, or still
negotiating while a personal agent's turn waits. negotiate=false only lists and stores the
matches as latent (cheaper; send_opportunity or a later discovery with negotiate=true moves them
on).""",
)
@tool_errors
def discover_opportunities_tool(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="What you are looking for.", max_length=MAX_QUERY)] = None,
    intentId: Annotated[str | None, Field(description="One of your active intents.", max_length=128)] = None,
    targetMemberId: Annotated[str | None, Field(description="A member to consider directly.", max_length=128)] = None,
    networkId: Annotated[str | None, Field(description="Only this one of your networks.", max_length=128)] = None,
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = 10,
    negotiate: Annotated[
        bool,
        Field(
            description="Negotiate each kept match between the two members' agents (default); false: keep them latent."
        ),
    ] = True,
    memberId: MemberArg = None,
) -> dict[str, Any]:
    view, w = member_view(ctx, memberId), member_writer(ctx)
    return traced(
        lambda: discover_opportunities(
            w,
            view,
            ctx.settings,
            member_id=memberId,
            query=query,
            intent_id=intentId,
            target_member_id=targetMemberId,
            network_id=networkId,
            limit=limit,
            trigger="orchestrator" if ctx.session_id else "ambient",
            negotiate=negotiate,
        )
    )

"""The community plugin's discovery tool: opportunities for a member from a query, one of their
intents, or with a named member (``maxy.discovery``). Each answer carries its trace events."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from maxy.community.discovery import discover_opportunities
from maxy.community.discovery.pipeline import MAX_LIMIT, MAX_QUERY
from maxy.plugins import ToolContext, ToolOutput, tool, tool_errors
from pydantic import Field

from .acting import member_view, member_writer, traced
from .intent_tools import MemberArg
from .negotiation_tools import Kind, Outcome
from .opportunity_tools import Opportunity, Role, Trace


class Lens(ToolOutput):
    label: str = Field(description="The kind of counterpart looked for.")
    corpus: Literal["profiles", "intents"] = Field(description="What the lens searches.")
    cached: bool = Field(description="True when its hypothetical match was already in the graph.")


class Explain(ToolOutput):
    similarity: float = Field(description="The best cosine similarity behind the match.")
    via: str = Field(description="profile, profile-hyde, intent or direct: what matched.")
    lens: str | None = Field(default=None, description="The lens that found it.")
    relevancy: float = Field(description="How relevant the source intent is to the network (0-1).")


class FoundOpportunity(Opportunity):
    deduplicated: bool = Field(description="True when it was there already (reported, not made again).")


class NegotiationSummary(ToolOutput):
    negotiationId: str
    state: Literal["working", "waiting_for_agent", "claimed", "finalizing", "completed"] = Field(
        description="completed, or waiting_for_agent (a personal agent's turn) with waitingMemberId."
    )
    sourceKind: Kind
    candidateKind: Kind
    turnCount: int
    waitingMemberId: str | None = Field(default=None, description="Whose agent's turn it is, while parked.")
    outcome: Outcome | None = Field(default=None, description="Once it is over.")
    continuing: bool = Field(
        default=False, description="True when it goes on in the background (the call's negotiating time ran out)."
    )


class Found(ToolOutput):
    candidateMemberId: str
    networkId: str = Field(description="The network the two share.")
    score: float = Field(description="The evaluator's score, 0-100 (the similarity when degraded).")
    band: Literal["must-meet", "should-meet"]
    reasoning: str
    sourceRole: Role = Field(description="Your member's role.")
    candidateRole: Role = Field(description="agent: they can do something for you; patient: they need you; peer.")
    candidateIntentId: str | None = Field(default=None, description="The candidate's intent that matched, if one did.")
    explain: Explain
    opportunity: FoundOpportunity | None = Field(default=None, description="The stored opportunity.")
    negotiation: NegotiationSummary | None = Field(
        default=None, description="With negotiate: its negotiation (null when the opportunity was already settled)."
    )


class Discovery(ToolOutput):
    memberId: str = Field(description="The member discovering.")
    path: Literal["query", "intent", "direct"]
    intentId: str | None = Field(default=None, description="The source intent, on the intent path.")
    scope: list[str] = Field(description="The member's networks searched (candidates share one of them).")
    lenses: list[Lens]
    lensesCached: bool | None = Field(default=None, description="True when the lenses came from the graph.")
    considered: int = Field(description="Members evaluated.")
    opportunities: list[Found] = Field(description="Best first.")
    persisted: bool
    negotiated: bool
    continuing: list[str] = Field(
        default=[], description="The negotiations left to go on in the background (negotiationIds)."
    )
    degraded: bool = Field(description="True when the evaluator fell back to the similarity.")
    reason: str | None = Field(description="Which steps fell back and why, or why nothing was searched.")
    trace: list[dict[str, Any]] | None = Trace


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
negotiating while a personal agent's turn waits. The call negotiates for a minute at most
(MAXY_DISCOVERY_NEGOTIATE_S): negotiations not over by then go on in the background (the
server's negotiation sweep), listed in `continuing`; get_negotiation shows how they end.
negotiate=false only lists and stores the matches as latent (cheaper; send_opportunity or a
later discovery with negotiate=true moves them on).""",
    output=Discovery,
)
@tool_errors
def discover_opportunities_tool(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="What you are looking for.", max_length=MAX_QUERY)] = None,
    intentId: Annotated[str | None, Field(description="One of your active intents.", max_length=128)] = None,
    targetMemberId: Annotated[str | None, Field(description="A member to consider directly.", max_length=128)] = None,
    networkId: Annotated[str | None, Field(description="Only this one of your networks.", max_length=128)] = None,
    limit: Annotated[
        int, Field(description=f"At most this many opportunities (1-{MAX_LIMIT}).", ge=1, le=MAX_LIMIT)
    ] = 10,
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

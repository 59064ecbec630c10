"""The community plugin's opportunity tools: list, read, send, accept and reject a member's
opportunities (``maxy.opportunities``). A server pinned to a member sees only the opportunities
that name it; the account's admin sees all. Each answer carries the call's trace events."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from maxy.community.opportunities import decide_opportunity, get_opportunity, list_opportunities, send_opportunity
from maxy.community.opportunities.records import no_opportunity
from maxy.community.opportunities.statuses import STATUSES
from maxy.plugins import ToolContext, ToolOutput, tool, tool_errors
from pydantic import Field

from .acting import member_view, member_writer, traced

OpportunityId = Annotated[
    str, Field(description="The opportunity's id (list_opportunities lists them).", min_length=1, max_length=128)
]
Status = Literal[STATUSES]  # type: ignore[valid-type]
Role = Literal["agent", "patient", "peer"]
Trace = Field(default=None, description="The call's trace events (graph and agent runs with durations).")


class Opportunity(ToolOutput):
    opportunityId: str
    sourceMemberId: str = Field(description="The member it was found for.")
    candidateMemberId: str = Field(description="The member it was found with.")
    networkId: str = Field(description="The network the two share.")
    score: float = Field(description="The evaluator's score, 0-100.")
    reasoning: str
    sourceRole: Role
    candidateRole: Role
    trigger: Literal["ambient", "orchestrator"]
    status: Status
    statusAt: str | None = None
    negotiationId: str | None = Field(default=None, description="Its latest negotiation, once one started.")
    agreedRoles: list[dict[str, str]] | None = Field(
        default=None, description="The roles a negotiation agreed on: each member's memberId and role."
    )


class OpportunityChange(Opportunity):
    changed: bool = Field(description="False when it already had that status (a repeat changes nothing).")
    trace: list[dict[str, Any]] | None = Trace


class Opportunities(ToolOutput):
    opportunities: list[Opportunity] = Field(description="Most recently changed first.")
    count: int
    trace: list[dict[str, Any]] | None = Trace


@tool(
    "list_opportunities",
    title="List opportunities",
    description="""\
The member's opportunities, both those found for them and those naming them as the candidate,
most recently changed first: status (latent, draft, negotiating, pending, accepted, rejected,
stalled, expired), score, reasoning, each side's role and, after a negotiation, the agreed roles.
""",
    output=Opportunities,
    read_only=True,
    idempotent=True,
)
@tool_errors
def list_opportunities_tool(
    ctx: ToolContext,
    status: Annotated[Status | None, Field(description="Only opportunities in this status.")] = None,
    limit: Annotated[int, Field(description="At most this many (1-500).", ge=1, le=500)] = 50,
) -> dict[str, Any]:
    def listed() -> dict[str, Any]:
        found = list_opportunities(ctx.db, member_view(ctx), status, limit)
        return {"opportunities": found, "count": len(found)}

    return traced(listed)


@tool(
    "get_opportunity",
    title="Read an opportunity",
    description="One opportunity the member is part of.",
    output=Opportunity,
    read_only=True,
    idempotent=True,
)
@tool_errors
def get_opportunity_tool(ctx: ToolContext, opportunityId: OpportunityId) -> dict[str, Any]:
    found = get_opportunity(ctx.db, member_view(ctx), opportunityId)
    if found is None:
        raise no_opportunity(opportunityId)
    return found


@tool(
    "send_opportunity",
    title="Send an opportunity",
    description="Promote a latent or draft opportunity to pending: the other member is asked to accept it.",
    output=OpportunityChange,
    destructive=True,
)
@tool_errors
def send_opportunity_tool(ctx: ToolContext, opportunityId: OpportunityId) -> dict[str, Any]:
    w, view = member_writer(ctx), member_view(ctx)
    return traced(lambda: send_opportunity(w, view, opportunityId))


@tool(
    "accept_opportunity",
    title="Accept an opportunity",
    description="Accept a pending opportunity (one of its two members). Accepting it again changes nothing.",
    output=OpportunityChange,
    destructive=True,
    idempotent=True,
)
@tool_errors
def accept_opportunity_tool(ctx: ToolContext, opportunityId: OpportunityId) -> dict[str, Any]:
    return decide_opportunity(member_writer(ctx), member_view(ctx), opportunityId, "accept")


@tool(
    "reject_opportunity",
    title="Reject an opportunity",
    description="Reject a pending opportunity (one of its two members). Rejecting it again changes nothing.",
    output=OpportunityChange,
    destructive=True,
    idempotent=True,
)
@tool_errors
def reject_opportunity_tool(ctx: ToolContext, opportunityId: OpportunityId) -> dict[str, Any]:
    return decide_opportunity(member_writer(ctx), member_view(ctx), opportunityId, "reject")

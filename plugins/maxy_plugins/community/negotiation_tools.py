"""The community plugin's negotiation tools: read a negotiation, list those waiting for the
member's agent, and answer a turn (``maxy.negotiation``). Personal agents running in the
background follow the server instructions' negotiation turn mode."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from maxy.community import MemberView, trace
from maxy.community.negotiation import Negotiations
from maxy.community.negotiation.parked import respond_as_member
from maxy.errors import ValidationError
from maxy.plugins import ToolContext, ToolError, ToolOutput, tool, tool_errors
from pydantic import Field

NegotiationId = Annotated[
    str, Field(description="The negotiation's id (list_negotiations lists them).", min_length=1, max_length=128)
]
Role = Literal["agent", "patient", "peer"]
Kind = Literal["system", "personal"]


class Outcome(ToolOutput):
    hasOpportunity: bool
    agreedRoles: list[dict[str, Any]] = Field(description="Each side's role for its own member, from its last turn.")
    reasoning: str
    turnCount: int
    status: str | None = Field(description="Where the opportunity went: pending, rejected or stalled.")
    reason: str | None = Field(default=None, description="turn_cap or timeout when no side accepted.")


class Negotiation(ToolOutput):
    negotiationId: str
    opportunityId: str
    state: Literal["working", "waiting_for_agent", "claimed", "finalizing", "completed"]
    sourceMemberId: str
    candidateMemberId: str
    sourceKind: Kind
    candidateKind: Kind
    turnCap: int | None = Field(description="6 system-system, 8 mixed, none personal-personal (24-hour timeout).")
    turnCount: int
    turns: list[dict[str, Any]] = Field(description="Each turn: side, action, assessment, message, by.")
    seedAssessment: dict[str, Any]
    conversationSessionId: str = Field(description="The conversation holding every turn as a message.")
    taskId: str = Field(description="The negotiation's task; its outcome is the task's artifact.")
    startedAt: str
    waitingMemberId: str | None = Field(default=None, description="Whose agent's turn it is, while parked.")
    fallbackAt: str | None = Field(default=None, description="When the system negotiator takes the parked turn.")
    claimDeadline: str | None = None
    outcome: Outcome | None = None
    endedAt: str | None = None


class NegotiationTurn(Negotiation):
    trace: list[dict[str, Any]] = Field(description="The call's trace events (turns, outcome, session end).")


class NegotiationList(ToolOutput):
    negotiations: list[Negotiation] = Field(description="Newest first.")
    count: int


def _negotiations(ctx: ToolContext) -> Negotiations:
    if ctx.account is None:
        raise ToolError("ACCOUNT_ID was not validated at start: negotiations are not available")
    return Negotiations(ctx.db, ctx.account, ctx.settings, embedder=ctx.embedder)


@tool(
    "get_negotiation",
    title="Read a negotiation",
    description="""\
A negotiation the member is part of: its state, the seed assessment, every turn (action,
assessment.reasoning, assessment.suggestedRoles, message) and, once over, the outcome.
""",
    output=Negotiation,
    read_only=True,
    idempotent=True,
)
@tool_errors
def get_negotiation(ctx: ToolContext, negotiationId: NegotiationId) -> dict[str, Any]:
    negotiations = _negotiations(ctx)
    return negotiations.describe(negotiations.load(negotiationId, MemberView(ctx.caller, ctx.member_id)))


@tool(
    "list_negotiations",
    title="List negotiations",
    description="""\
The member's negotiations, newest first; with status waiting_for_agent only those whose turn is
the member's agent's to take (parked or claimed).
""",
    output=NegotiationList,
    read_only=True,
    idempotent=True,
)
@tool_errors
def list_negotiations(
    ctx: ToolContext,
    status: Annotated[Literal["waiting_for_agent"] | None, Field(description="waiting_for_agent: your turns.")] = None,
    limit: Annotated[int, Field(description="At most this many (1-500).", ge=1, le=500)] = 50,
) -> dict[str, Any]:
    found = _negotiations(ctx).list(
        MemberView(ctx.caller, ctx.member_id), waiting_only=status == "waiting_for_agent", limit=limit
    )
    return {"negotiations": found, "count": len(found)}


@tool(
    "respond_to_negotiation",
    title="Answer a negotiation turn",
    description="""\
Take the member's turn in a negotiation (the member's own server only): counter (specific
objections), accept (the match genuinely serves your member), reject (it does not), question (a
clarifying question for the other side; not in turn mode), or propose on the first turn. Give
your reasoning and the roles you suggest for your member (ownUser) and the other (otherUser). A
turn claimed by your member's agent is answered for it; one still waiting is claimed and answered.
""",
    output=NegotiationTurn,
    destructive=True,
)
@tool_errors
def respond_to_negotiation(
    ctx: ToolContext,
    negotiationId: NegotiationId,
    action: Annotated[
        Literal["propose", "counter", "accept", "reject", "question"],
        Field(description="propose (first turn only), counter, accept, reject, or question (not in turn mode)."),
    ],
    reasoning: Annotated[str, Field(description="Why you take this action.", min_length=1, max_length=4_000)],
    ownUser: Annotated[Role, Field(description="The role your member should play.")],
    otherUser: Annotated[Role, Field(description="The role the other member should play.")],
    message: Annotated[str | None, Field(description="A note to the other side.", max_length=4_000)] = None,
) -> dict[str, Any]:
    ctx.writer()  # refuses the public role
    if ctx.member_id is None:
        raise ValidationError("memberId", "only a member's own server takes its turns (MEMBER_ID, or a key's --member)")
    payload: dict[str, Any] = {
        "action": action,
        "assessment": {"reasoning": reasoning, "suggestedRoles": {"ownUser": ownUser, "otherUser": otherUser}},
    }
    if message is not None:
        payload["message"] = message
    with trace.collecting():
        out = respond_as_member(_negotiations(ctx), ctx.member_id, negotiationId, payload)
        return {**out, "trace": trace.collected()}

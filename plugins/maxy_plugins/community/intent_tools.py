"""The community plugin's intent tools: create, read, update and delete a member's intents, and
assign one to a network (``maxy.intents``). A server pinned to a member (MEMBER_ID, or a key's
``--member``) acts for that member only; the account's admin names the member. Each answer
carries the call's trace events under ``trace``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from maxy.community import MemberView
from maxy.community.discovery import discover_opportunities
from maxy.community.intents import assign_intent_network, create_intents, delete_intent, read_intents, update_intent
from maxy.community.intents.pipeline import MAX_CONTENT, MAX_INTENTS
from maxy.community.intents.store import MAX_DESCRIPTION, MAX_LIST
from maxy.errors import ValidationError
from maxy.graph.write import GraphWriter
from maxy.plugins import ToolContext, ToolError, ToolOutput, tool, tool_errors
from pydantic import BaseModel, Field

from .acting import member_view, member_writer, traced
from .opportunity_tools import Trace

MemberArg = Annotated[
    str | None,
    Field(description="The member acting (only for the account's admin; a member's own server acts for it)."),
]
AUTO_DISCOVER_INTENTS = 3  # fresh intents a create_intent call discovers from, at most
AUTO_DISCOVER_LIMIT = 5  # matches kept per intent

IntentId = Annotated[str, Field(description="The intent's id (read_intents lists them).", min_length=1, max_length=128)]


IntentType = Literal["seeking", "offering"]


class IntentArg(BaseModel):
    description: str = Field(description="What is sought or offered, one sentence.", max_length=MAX_DESCRIPTION)
    type: IntentType = Field(description="seeking (the member needs it) or offering (the member gives it).")


class Assignment(ToolOutput):
    networkId: str
    assigned: bool = Field(description="True when the intent is now in the network.")
    method: Literal["direct", "open", "indexer"] = Field(
        description="direct (named), open (a network without prompts) or indexer (scored against the prompts)."
    )
    score: float | None = Field(description="0-1: 1.0 direct or open; the indexer's final score; null unscored.")
    indexScore: float | None = Field(default=None, description="The intent against the network's prompt, 0-1.")
    memberScore: float | None = Field(default=None, description="The intent against the member's prompt, 0-1.")
    reasoning: str | None = None
    degraded: bool | None = Field(default=None, description="True when the indexer could not run.")
    reason: str | None = Field(default=None, description="Why the indexer could not run (no-key, timeout ...).")


class Verification(ToolOutput):
    verified: bool | None = Field(default=None, description="False when stored as written, without the verifier.")
    speechAct: str | None = Field(default=None, description="COMMISSIVE, DIRECTIVE or DECLARATION (kept ones).")
    felicityAuthority: int | None = Field(default=None, description="0-100.")
    felicitySincerity: int | None = Field(default=None, description="0-100.")
    felicityClarity: int | None = Field(default=None, description="0-100.")
    entropy: float | None = Field(default=None, description="0-1; above 0.75 (or clarity below 40) is vague.")
    source: str | None = Field(default=None, description="explicit (given as written) or inferred (from content).")
    enrichedFrom: str | None = Field(default=None, description="The vague words a profile-specific one replaced.")


class IntentRecord(Verification):
    intentId: str
    memberId: str
    description: str
    type: IntentType
    status: Literal["active", "expired"]


class CreatedIntent(IntentRecord):
    networks: list[Assignment] = Field(default=[], description="Each of the member's networks, taken or not.")


class InNetwork(ToolOutput):
    networkId: str
    name: str | None = None
    score: float | None = None
    method: str | None = None


class Intent(IntentRecord):
    networks: list[InNetwork] = Field(description="The networks it is in that you can see.")
    createdAt: str | None = None
    updatedAt: str | None = None


class Proposed(Verification):
    description: str
    type: IntentType
    reasoning: str | None = Field(default=None, description="The verifier's reading.")


class Dropped(ToolOutput):
    description: str
    type: IntentType
    speechAct: str = Field(description="ASSERTIVE or EXPRESSIVE: a belief or feeling, not an intent.")
    reasoning: str


class Match(ToolOutput):
    candidateMemberId: str
    score: float = Field(description="0-100.")
    band: Literal["must-meet", "should-meet"]
    reasoning: str
    opportunityId: str
    status: str = Field(description="The opportunity's status (latent when new).")


class IntentMatches(ToolOutput):
    intentId: str
    opportunities: list[Match] = Field(description="Best first.")
    degraded: bool = Field(default=False, description="True when a model step fell back (reason says which).")
    reason: str | None = None


class IntentChanges(ToolOutput):
    memberId: str
    mode: Literal["create", "update", "delete", "propose"]
    created: list[CreatedIntent] | None = Field(default=None, description="New intents (not with propose).")
    updated: list[IntentRecord] | None = Field(default=None, description="Intents changed in place.")
    expired: list[str] | None = Field(default=None, description="Ids of the intents expired.")
    proposed: list[Proposed] | None = Field(default=None, description="propose=true: what would be stored.")
    dropped: list[Dropped] = Field(description="Utterances that are not intents.")
    degraded: bool = Field(description="True when a model step could not run.")
    reason: str | None = Field(description="Which steps could not run and why.")
    discovery: list[IntentMatches] | None = Field(
        default=None, description="create_intent: the matches of each new intent (the first 3)."
    )
    trace: list[dict[str, Any]] | None = Trace


class Intents(ToolOutput):
    memberId: str | None = Field(description="Whose intents (null: every member's, for the admin).")
    intents: list[Intent] = Field(description="Most recent first.")


class AssignmentMade(Assignment):
    intentId: str
    trace: list[dict[str, Any]] | None = Trace


@tool(
    "create_intent",
    title="Create intents",
    description="""\
Record what a member is seeking or offering. Give `content` (their words: the model reads the
explicit intents in it) or `intents` ([{description, type: seeking|offering}] as they are). Each
intent is verified (speech act; felicity: authority, sincerity, clarity; a vague one is made
specific from the profile and checked again; beliefs and feelings are dropped), reconciled with the
member's active intents (create, update, expire) and stored. With networkId it is put in that
network directly; otherwise in each of the member's networks that takes it (by the network's and
member's prompts). Without a model, intents given as `intents` are stored as written, unverified.
propose=true checks them and stores nothing.

Each new intent (the first 3) is then matched at once (discover=true, the default): the answer's
`discovery` lists, per intent, the members worth meeting (up to 5, scored as
discover_opportunities does), stored as latent opportunities and not negotiated, so it stays
quick. To have them negotiated, call discover_opportunities with that intentId (its search
is cached by then). discover=false records only.""",
    output=IntentChanges,
)
@tool_errors
def create_intent_tool(
    ctx: ToolContext,
    content: Annotated[str | None, Field(description="The member's own words.", max_length=MAX_CONTENT)] = None,
    intents: Annotated[list[IntentArg] | None, Field(description="Intents as written.", max_length=MAX_INTENTS)] = None,
    networkId: Annotated[str | None, Field(description="Put the new intents in this network directly.")] = None,
    propose: Annotated[bool, Field(description="Verify only; store nothing.")] = False,
    discover: Annotated[
        bool, Field(description="Match each new intent at once (latent opportunities, no negotiation).")
    ] = True,
    memberId: MemberArg = None,
) -> dict[str, Any]:
    view, w = member_view(ctx, memberId), member_writer(ctx)
    if content is None and not intents:
        raise ToolError("content: give the member's words (content) or the intents themselves (intents)")

    def run() -> dict[str, Any]:
        out = create_intents(
            w,
            view,
            ctx.settings,
            member_id=memberId,
            content=content,
            intents=[i.model_dump() for i in intents] if intents else None,
            network_id=networkId,
            propose=propose,
        )
        if discover and not propose:
            fresh = out.get("created") or []
            member = view.resolve(memberId)
            out["discovery"] = [_discover(ctx, view, w, member, i["intentId"]) for i in fresh[:AUTO_DISCOVER_INTENTS]]
        return out

    return traced(run)


def _discover(ctx: ToolContext, view: MemberView, w: GraphWriter, member: str | None, intent_id: str) -> dict[str, Any]:
    """The quick matches of a fresh intent (create_intent's discovery): stored latent."""
    try:
        found = discover_opportunities(
            w,
            view,
            ctx.settings,
            member_id=member,
            intent_id=intent_id,
            limit=AUTO_DISCOVER_LIMIT,
            trigger="orchestrator" if ctx.session_id else "ambient",
        )
    except ValidationError as err:  # the intent is stored; say why it was not matched
        return {"intentId": intent_id, "opportunities": [], "reason": str(err)}
    return {
        "intentId": intent_id,
        "opportunities": [
            {
                "candidateMemberId": o["candidateMemberId"],
                "score": o["score"],
                "band": o["band"],
                "reasoning": o["reasoning"],
                "opportunityId": o["opportunity"]["opportunityId"],
                "status": o["opportunity"]["status"],
            }
            for o in found["opportunities"]
        ],
        "degraded": found["degraded"],
        "reason": found["reason"],
    }


@tool(
    "read_intents",
    title="Read intents",
    description="""\
A member's intents, most recent first, each with the networks it is in. Your own, or another
member's as far as you share a network with them (only the intents in those networks).""",
    output=Intents,
    read_only=True,
    idempotent=True,
)
@tool_errors
def read_intents_tool(
    ctx: ToolContext,
    ownerMemberId: Annotated[
        str | None, Field(description="Whose intents (default: your own; the admin: everyone's).")
    ] = None,
    status: Annotated[
        Literal["active", "expired"] | None, Field(description="Default active; null for all.")
    ] = "active",
    limit: Annotated[int, Field(description=f"At most this many (1-{MAX_LIST}).", ge=1, le=MAX_LIST)] = 50,
) -> dict[str, Any]:
    view = MemberView(ctx.caller, ctx.member_id)
    whose = ownerMemberId or ctx.member_id
    return {"memberId": whose, "intents": read_intents(ctx.db, view, whose, status=status, limit=limit)}


@tool(
    "update_intent",
    title="Update an intent",
    description="""\
Rewrite one of your active intents: from `content` (the model reads the new intent in it) or a new
`description` and/or `type`. It is verified again, then updated in place or expired and replaced
as the reconciler decides (without a model: in place, unverified).""",
    output=IntentChanges,
    destructive=True,
)
@tool_errors
def update_intent_tool(
    ctx: ToolContext,
    intentId: IntentId,
    content: Annotated[
        str | None, Field(description="The member's words for the new intent.", max_length=MAX_CONTENT)
    ] = None,
    description: Annotated[
        str | None, Field(description="The new description, one sentence.", max_length=MAX_DESCRIPTION)
    ] = None,
    type: Annotated[  # noqa: A002 - the field's name
        IntentType | None, Field(description="seeking or offering (default: as it was).")
    ] = None,
) -> dict[str, Any]:
    view, w = member_view(ctx), member_writer(ctx)
    return traced(
        lambda: update_intent(
            w, view, ctx.settings, intentId, content=content, description=description, intent_type=type
        )
    )


@tool(
    "delete_intent",
    title="Delete an intent",
    description="Expire one of your intents: it stays on record but is no longer active or found by discovery.",
    output=IntentChanges,
    destructive=True,
    idempotent=True,
)
@tool_errors
def delete_intent_tool(ctx: ToolContext, intentId: IntentId) -> dict[str, Any]:
    view, w = member_view(ctx), member_writer(ctx)
    return traced(lambda: delete_intent(w, view, intentId))


@tool(
    "assign_intent_network",
    title="Put an intent in a network",
    description="""\
Put one of your active intents in a network you are in: directly (direct=true, score 1.0), or
scored against the network's prompt and your prompt for it (0.6 / 0.4 when both exist; assigned
at 0.7 or more). A network without prompts takes it as it is.""",
    output=AssignmentMade,
)
@tool_errors
def assign_intent_network_tool(
    ctx: ToolContext,
    intentId: IntentId,
    networkId: Annotated[str, Field(description="One of your networks.", min_length=1, max_length=128)],
    direct: Annotated[bool, Field(description="Put it in directly (score 1.0), without the indexer.")] = False,
) -> dict[str, Any]:
    view, w = member_view(ctx), member_writer(ctx)
    return traced(lambda: assign_intent_network(w, view, ctx.settings, intentId, networkId, direct=direct))

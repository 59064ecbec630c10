"""The community plugin's profile tools: create, update and read members' profiles
(``maxy.community.members``). A server pinned to a member (MEMBER_ID, or a key's ``--member``)
writes only that member's profile and reads the profiles of the members it shares a network
with; the account's admin names any member. Each answer carries the call's trace events."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from maxy.community import MemberView, get_profile, list_profiles, upsert_profile
from maxy.community.members import MAX_ATTRIBUTE, MAX_ATTRIBUTES, MAX_NAME, MAX_TEXT
from maxy.identifiers import unknown_member
from maxy.plugins import ToolContext, ToolError, ToolOutput, tool, tool_errors
from pydantic import Field

from .acting import acting_member, member_view, member_writer, traced

MemberArg = Annotated[
    str | None,
    Field(description="The member (the account's admin names one; a member's own server acts for it).", max_length=64),
]
Attributes = Annotated[
    list[Annotated[str, Field(max_length=MAX_ATTRIBUTE)]] | None,
    Field(description=f"Short entries, at most {MAX_ATTRIBUTES}.", max_length=MAX_ATTRIBUTES),
]


class Hyde(ToolOutput):
    text: str = Field(description="What a good match for this member looks like (matched against others).")
    generatedBy: str = Field(description="model, or template when no model answered.")
    cached: bool = Field(description="True when the profile's text was unchanged and the document was kept.")
    degradedReason: str | None = Field(default=None, description="Why the model was not used (no-key, timeout ...).")


class Profile(ToolOutput):
    memberId: str
    name: str
    bio: str | None = None
    location: str | None = None
    narrative: str | None = None
    skills: list[str] = []
    interests: list[str] = []
    negotiationMode: str = Field(
        default="system", description="Who takes the member's negotiation turns: system, or personal (their own agent)."
    )


class ProfileWritten(Profile):
    nodeId: str
    created: bool = Field(description="False when the member's profile existed and was replaced.")
    embedded: bool = Field(description="False when the embedder failed (maxy reindex embeds it later).")
    hyde: Hyde
    trace: list[dict[str, Any]] = Field(description="The call's trace events (graph and agent runs with durations).")


class Profiles(ToolOutput):
    profiles: list[Profile] = Field(description="Your own, and those of members you share a network with.")
    count: int


def _write(ctx: ToolContext, member: str, fields: dict[str, Any], negotiation_mode: str | None) -> dict[str, Any]:
    """Write the member's profile from ``fields`` (skills or interests not given: none) with the call's trace."""
    writer = member_writer(ctx)
    fields = {**fields, "skills": fields["skills"] or (), "interests": fields["interests"] or ()}
    return traced(
        lambda: upsert_profile(writer, member, settings=ctx.settings, negotiation_mode=negotiation_mode, **fields)
    )


def _fields(
    name: str | None, bio: str | None, location: str | None, narrative: str | None, skills: Any, interests: Any
) -> dict[str, Any]:
    return {
        "name": name,
        "bio": bio,
        "location": location,
        "narrative": narrative,
        "skills": skills,
        "interests": interests,
    }


Name = Annotated[str, Field(description="The member's name.", min_length=1, max_length=MAX_NAME)]
Bio = Annotated[str | None, Field(description="A short bio.", max_length=MAX_TEXT)]
Location = Annotated[str | None, Field(description="Where the member is.", max_length=MAX_NAME)]
Narrative = Annotated[
    str | None, Field(description="Their context in their own words: what they do, want, offer.", max_length=MAX_TEXT)
]
NegotiationMode = Annotated[
    Literal["system", "personal"] | None,
    Field(
        description="Who takes the member's turns when a match is negotiated: system (default: the system "
        "negotiator, at once) or personal (the member's own agent polls for its turns; a turn left 24 hours "
        "falls back to the system negotiator)."
    ),
]


@tool(
    "create_user_profile",
    title="Create a member's profile",
    description="""\
Create the member's profile (identity, narrative, skills and interests); the member exists from
then on. The profile is embedded, and beside it a document describing what a good match for
this member looks like (by the model, or a template without one) is embedded too.
negotiationMode says who takes the member's negotiation turns (system by default; personal when
the member's own agent polls for them). A member that already has a profile is refused: use
update_user_profile.""",
    output=ProfileWritten,
)
@tool_errors
def create_user_profile(
    ctx: ToolContext,
    name: Name,
    bio: Bio = None,
    location: Location = None,
    narrative: Narrative = None,
    skills: Attributes = None,
    interests: Attributes = None,
    negotiationMode: NegotiationMode = None,
    memberId: MemberArg = None,
) -> dict[str, Any]:
    member = acting_member(ctx, memberId)
    if get_profile(ctx.db, MemberView(ctx.caller), member) is not None:
        raise ToolError(f"memberId: {member!r} already has a profile; update_user_profile changes it")
    return _write(ctx, member, _fields(name, bio, location, narrative, skills, interests), negotiationMode or "system")


@tool(
    "update_user_profile",
    title="Update a member's profile",
    description="""\
Change the member's profile: the fields given replace the stored ones, the others are kept. The
match document is written again only when the profile's text changed. negotiationMode switches
who takes the member's negotiation turns (system, or personal: their own agent polls for them).""",
    output=ProfileWritten,
    destructive=True,
    idempotent=True,
)
@tool_errors
def update_user_profile(
    ctx: ToolContext,
    name: Annotated[str | None, Field(description="The member's name.", max_length=MAX_NAME)] = None,
    bio: Bio = None,
    location: Location = None,
    narrative: Narrative = None,
    skills: Attributes = None,
    interests: Attributes = None,
    negotiationMode: NegotiationMode = None,
    memberId: MemberArg = None,
) -> dict[str, Any]:
    member = acting_member(ctx, memberId)
    current = get_profile(ctx.db, member_view(ctx), member)
    if current is None:
        raise unknown_member(member)
    given = _fields(name, bio, location, narrative, skills, interests)
    merged = {k: (v if v is not None else current.get(k)) for k, v in given.items()}
    return _write(ctx, member, merged, negotiationMode)


@tool(
    "read_user_profiles",
    title="Read members' profiles",
    description="""\
The profiles you can see: your own, and those of the members you share a network with (the
account's admin sees every member's). Name members to read only theirs.""",
    output=Profiles,
    read_only=True,
    idempotent=True,
)
@tool_errors
def read_user_profiles(
    ctx: ToolContext,
    memberIds: Annotated[
        list[Annotated[str, Field(max_length=64)]] | None, Field(description="Only these members.", max_length=100)
    ] = None,
) -> dict[str, Any]:
    found = list_profiles(ctx.db, member_view(ctx), memberIds)
    return {"profiles": found, "count": len(found)}

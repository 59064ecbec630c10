"""The community plugin's network tools: create, join, add a member to, leave and list networks
(``maxy.community.networks``). Open networks (join policy ``anyone``) are joined by anyone and
any member invites others; invite-only ones are seen only by their members and invitees, and
only their owner invites. An invitation is accepted by joining and declined by leaving. A
network you cannot see answers like one that does not exist."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from maxy.community import add_member, create_network, join_network, leave_network, list_networks
from maxy.community.networks import MAX_NAME, MAX_PROMPT
from maxy.plugins import ToolContext, ToolOutput, tool, tool_errors
from pydantic import Field

from .acting import acting_member, member_view, member_writer
from .profile_tools import MemberArg

NetworkId = Annotated[
    str, Field(description="The network's id (list_networks lists them).", min_length=1, max_length=128)
]
MemberPrompt = Annotated[
    str | None, Field(description="What this member is in the network for (helps match them).", max_length=MAX_PROMPT)
]


class _NetworkFields(ToolOutput):
    networkId: str
    name: str
    prompt: str | None = None
    joinPolicy: Literal["anyone", "invite"]
    ownerMemberId: str


class Network(_NetworkFields):
    joined: bool = Field(description="False for a network you are invited to or an open one you could join.")
    invited: bool = Field(description="You are invited to it: join_network accepts, leave_network declines.")
    members: list[str] | None = Field(default=None, description="Its members (only for networks you are in).")


class Networks(ToolOutput):
    networks: list[Network] = Field(
        description="Yours first, then those you are invited to, then the open ones you could join."
    )
    count: int


class Created(_NetworkFields):
    members: list[str]


class Membership(ToolOutput):
    networkId: str
    memberId: str
    status: Literal["active", "invited", "left"] = Field(
        description="active: in the network; invited: asked in, until they join; left: out of it."
    )
    joined: bool | None = Field(default=None, description="False when the member was in it already.")
    added: bool | None = Field(
        default=None, description="True when the admin put the member in by this call; an invitation is False."
    )


@tool(
    "create_network",
    title="Create a network",
    description="""\
Create a network (a community's group whose members are matched with each other), owned and
joined by the member. joinPolicy anyone: any member joins and invites others; invite: only you
invite members, and others do not see it. prompt says what the network is for.""",
    output=Created,
)
@tool_errors
def create_network_tool(
    ctx: ToolContext,
    name: Annotated[str, Field(description="The network's name.", min_length=1, max_length=MAX_NAME)],
    prompt: Annotated[str | None, Field(description="What the network is for.", max_length=MAX_PROMPT)] = None,
    joinPolicy: Annotated[Literal["anyone", "invite"], Field(description="Who may join.")] = "anyone",
    memberId: MemberArg = None,
) -> dict[str, Any]:
    writer = member_writer(ctx)
    return create_network(writer, acting_member(ctx, memberId), name=name, prompt=prompt, join_policy=joinPolicy)


@tool(
    "join_network",
    title="Join a network",
    description="""\
Join an open network (join policy anyone), or accept an invitation to any network (list_networks
shows yours). Joining again changes nothing but memberPrompt, when you give one.""",
    output=Membership,
    idempotent=True,
)
@tool_errors
def join_network_tool(
    ctx: ToolContext, networkId: NetworkId, memberPrompt: MemberPrompt = None, memberId: MemberArg = None
) -> dict[str, Any]:
    writer = member_writer(ctx)
    return join_network(writer, acting_member(ctx, memberId), networkId, member_prompt=memberPrompt)


@tool(
    "add_network_member",
    title="Invite a member to a network",
    description="""\
Invite another member to a network you are in: to an open one as any member, to an invite-only
one only as its owner. They are in it once they join (join_network); until then nothing of theirs
is shown to its members. The answer is the same whether or not the id names a member. The
account's admin (a server acting for no member) adds anyone to any network at once.""",
    output=Membership,
    idempotent=True,
)
@tool_errors
def add_network_member_tool(
    ctx: ToolContext,
    networkId: NetworkId,
    newMemberId: Annotated[str, Field(description="The member to invite.", min_length=1, max_length=64)],
    memberPrompt: MemberPrompt = None,
) -> dict[str, Any]:
    writer = member_writer(ctx)
    return add_member(writer, ctx.member_id, networkId, newMemberId, member_prompt=memberPrompt)


@tool(
    "leave_network",
    title="Leave a network",
    description="""\
Leave a network (its owner cannot), or decline an invitation to it; its members no longer see
your profile or intents through it.""",
    output=Membership,
    destructive=True,
)
@tool_errors
def leave_network_tool(ctx: ToolContext, networkId: NetworkId, memberId: MemberArg = None) -> dict[str, Any]:
    writer = member_writer(ctx)
    return leave_network(writer, acting_member(ctx, memberId), networkId)


@tool(
    "list_networks",
    title="List networks",
    description="The networks you are in, with their members, then those you are invited to and the open ones you could join.",
    output=Networks,
    read_only=True,
    idempotent=True,
)
@tool_errors
def list_networks_tool(ctx: ToolContext) -> dict[str, Any]:
    found = list_networks(ctx.db, member_view(ctx))
    return {"networks": found, "count": len(found)}

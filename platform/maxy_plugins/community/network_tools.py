"""The community plugin's network tools: create, join, add a member to, leave and list networks
(``maxy.community.networks``). Open networks (join policy ``anyone``) are joined by anyone and
any member adds others; invite-only ones are seen only by their members and only their owner
adds members. A network you cannot see answers like one that does not exist."""

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
    joined: bool = Field(description="False for an open network you could join.")
    members: list[str] | None = Field(default=None, description="Its members (only for networks you are in).")


class Networks(ToolOutput):
    networks: list[Network] = Field(description="Yours first, then the open networks you could join.")
    count: int


class Created(_NetworkFields):
    members: list[str]


class Membership(ToolOutput):
    networkId: str
    memberId: str
    status: Literal["active", "left"]
    joined: bool | None = Field(default=None, description="False when the member was in it already.")
    added: bool | None = Field(default=None, description="False when the member was in it already.")


@tool(
    "create_network",
    title="Create a network",
    description="""\
Create a network (a community's group whose members are matched with each other), owned and
joined by the member. joinPolicy anyone: any member joins and adds others; invite: only you add
members, and others do not see it. prompt says what the network is for.""",
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
    description="Join an open network (join policy anyone); an invite-only one is joined when its owner adds you.",
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
    title="Add a member to a network",
    description="""\
Add another member to a network you are in: to an open one as any member, to an invite-only one
only as its owner. The account's admin adds anyone to any network.""",
    output=Membership,
    idempotent=True,
)
@tool_errors
def add_network_member_tool(
    ctx: ToolContext,
    networkId: NetworkId,
    newMemberId: Annotated[str, Field(description="The member to add.", min_length=1, max_length=64)],
    memberPrompt: MemberPrompt = None,
) -> dict[str, Any]:
    writer = member_writer(ctx)
    return add_member(writer, ctx.member_id, networkId, newMemberId, member_prompt=memberPrompt)


@tool(
    "leave_network",
    title="Leave a network",
    description="Leave a network (its owner cannot); its members no longer see your profile or intents through it.",
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
    description="The networks you are in, with their members, then the open networks you could join.",
    output=Networks,
    read_only=True,
    idempotent=True,
)
@tool_errors
def list_networks_tool(ctx: ToolContext) -> dict[str, Any]:
    found = list_networks(ctx.db, member_view(ctx))
    return {"networks": found, "count": len(found)}

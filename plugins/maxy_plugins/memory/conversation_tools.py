"""The memory plugin's conversation write tool: conversation-append, one turn of a conversation
stored as a Message (``maxy.conversations.append.append_turn``) through the write primitive
(``ctx.writer``), so a pinned server's turns stay in its view.

A server pinned to a session (SESSION_ID) appends to that session; another sessionId is
refused like conversation-search refuses it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from maxy.conversations.append import MAX_CONTENT, append_turn
from maxy.conversations.store import MAX_SESSION_ID
from maxy.plugins import ISO_DATE, ToolContext, ToolError, ToolOutput, tool, tool_errors
from pydantic import Field


class Appended(ToolOutput):
    messageId: str = Field(description="The turn's id (yours, or one made up for it).")
    nodeId: str = Field(description="The Message node.")
    sessionId: str
    conversationId: str | None = Field(description="The Conversation node; null until the session's second turn.")
    seq: int = Field(description="The turn's position in the session, from 0.")
    created: bool = Field(description="True for a new turn, false when messageId updated an existing one.")
    embedded: bool


@tool(
    "conversation-append",
    description="""
Store one turn of a conversation as a message, so conversation-search finds it later. The same
messageId again updates that turn.
""",
    title="Append a conversation turn",
    output=Appended,
    destructive=True,  # the same messageId again replaces that turn
)
@tool_errors
def conversation_append(
    ctx: ToolContext,
    content: Annotated[str, Field(description="The turn's text.", min_length=1, max_length=MAX_CONTENT)],
    role: Annotated[Literal["user", "assistant", "system"], Field(description="Who spoke (default user).")] = "user",
    speaker: Annotated[str | None, Field(description='The speaker\'s name, stored as "<speaker>: <text>".')] = None,
    sessionId: Annotated[
        str | None,
        Field(
            description="The conversation (required unless this server is pinned to a session, which it must match).",
            max_length=MAX_SESSION_ID,
        ),
    ] = None,
    timestamp: Annotated[str | None, Field(description=f"When it was said (default now): {ISO_DATE}.")] = None,
    messageId: Annotated[
        str | None, Field(description="Your id for the turn; the same id again updates that turn.")
    ] = None,
) -> dict[str, Any]:
    w = ctx.writer()  # refuses the public role before anything else
    ctx.refuse_widening({"sessionId": sessionId})
    if ctx.session_id and sessionId is not None and sessionId != ctx.session_id:
        raise ToolError("sessionId: SESSION_ID is pinned for this server; a tool argument cannot change it")
    session = ctx.session_id or sessionId
    if session is None:
        raise ToolError("sessionId: which conversation this turn belongs to is required (no SESSION_ID is pinned)")
    return append_turn(
        w,
        session,
        role=role,
        content=content,
        speaker=speaker,
        timestamp=timestamp,
        message_id=messageId,
    )

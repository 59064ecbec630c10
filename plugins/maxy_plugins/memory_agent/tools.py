"""The memory-agent plugin's tools: a conversation's durable memory (``maxy.memoryagent``).

A *memory* (``memoryId``) is a named space inside the server's account, one per user or per
thread; the *vault* is the account itself, so ``vaultId``, when given, must be the pinned
ACCOUNT_ID. Every read and write stays in the server's view: a pinned view has memories of its
own, and another view's memory reads as an empty one. The domain checks each argument and logs
the ``[memory-agent]`` line; a tool only shapes the answer.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from maxy.conversations.store import MAX_SESSION_ID
from maxy.memoryagent import add_entry, await_consistency, check_memory, get_context, list_entries, put_context
from maxy.memoryagent.consistency import MAX_TIMEOUT_S
from maxy.memoryagent.contexts import MAX_CONTENT
from maxy.memoryagent.entries import MAX_LIST, MAX_MESSAGE_ID, MAX_RAW_ENTRY, MAX_SUMMARY, MAX_TAG, MAX_TAGS
from maxy.memoryagent.spaces import MAX_MEMORY
from maxy.plugins import ToolContext, ToolError, ToolOutput, tool, tool_errors
from pydantic import Field

MemoryId = Annotated[
    str,
    Field(
        description="The memory: a name of your choosing, per user or per thread (1-128 letters, digits or . _ : @ -).",
        min_length=1,
        max_length=MAX_MEMORY,
    ),
]
VaultId = Annotated[
    str | None, Field(description="The vault: this server's account id (ACCOUNT_ID); omit it to use that account.")
]
SessionArg = Annotated[
    str | None,
    Field(
        description="The conversation session the message belongs to (default: the server's pinned session, "
        "which it must match).",
        max_length=MAX_SESSION_ID,
    ),
]


class EntryAdded(ToolOutput):
    entryId: str = Field(description="The entry's node id (memory-get reads it).")
    nodeId: str
    memory: str
    seq: int = Field(description="The entry's place in the memory, from 0 (a re-added message keeps its own).")
    created: bool = Field(description="False when the same message was recorded before and its entry was updated.")
    embedded: bool = Field(description="False when the embedder failed: await_consistency embeds it.")
    message: str | None = Field(description="The Message node it records, when that turn is stored.")


class Entry(ToolOutput):
    entryId: str
    summary: str
    rawEntry: str
    tags: list[str]
    role: str | None
    sessionId: str | None
    messageId: str | None
    seq: int
    createdAt: str


class Entries(ToolOutput):
    memory: str
    entries: list[Entry] = Field(description="Most recent first.")


class Context(ToolOutput):
    memory: str
    found: bool = Field(description="False when the memory has no context yet.")
    contextId: str | None = None
    version: int | None = Field(default=None, description="1 for the first context; each put adds one.")
    content: str | None = None
    sessionId: str | None = None
    createdAt: str | None = None


class ContextPut(ToolOutput):
    contextId: str
    version: int
    memory: str
    createdAt: str | None
    written: bool = Field(description="False when the content was the latest version's already: nothing was added.")


class Consistency(ToolOutput):
    consistent: bool = Field(description="True when every entry written before the call is found by search.")
    entries: int = Field(description="The memory's entries.")
    reembedded: int = Field(description="Entries stored without a vector that were embedded now.")
    waitedMs: int
    unembedded: int | None = Field(default=None, description="Entries still without a vector (the embedder is down).")
    error: str | None = Field(default=None, description="Why it is not consistent, and the fix when there is one.")


def _memory(ctx: ToolContext, memory_id: str, vault_id: str | None) -> str:
    """The memory named by ``memoryId``, in the server's own vault (its account). The vault
    refusal is the same for any other id, an account that exists or not."""
    if ctx.role != "admin":  # the manifest keeps these tools off public servers; this holds if it did not
        raise ToolError("the memory-agent tools are not available to the public role")
    if vault_id is not None and vault_id != ctx.caller.account_id:
        raise ToolError("vaultId: ACCOUNT_ID is pinned for this server; a tool argument cannot change it")
    return check_memory(memory_id, "memoryId")


def _session(ctx: ToolContext, session_id: str | None) -> str | None:
    ctx.refuse_widening({"sessionId": session_id})
    if ctx.session_id and session_id is not None and session_id != ctx.session_id:
        raise ToolError("sessionId: SESSION_ID is pinned for this server; a tool argument cannot change it")
    return session_id or ctx.session_id


@tool(
    "add_entry",
    title="Record a message in a memory",
    description="""\
Record one message of a conversation (a user's or the assistant's) as an entry of a memory:
summary (what a later search finds it by: standalone, names and dates resolved), rawEntry (the
message as written) and tags. With messageId (and sessionId) the entry is linked to that stored
turn and its conversation, and the same message again updates its entry instead of adding one.
The rules for each field are the prompts entry_capture_prompt and summary_prompt.""",
    output=EntryAdded,
    destructive=True,  # the same messageId again replaces that entry
)
@tool_errors
def add_entry_tool(
    ctx: ToolContext,
    memoryId: MemoryId,
    summary: Annotated[str, Field(description="The entry's standalone summary.", min_length=1, max_length=MAX_SUMMARY)],
    rawEntry: Annotated[str, Field(description="The message as written.", min_length=1, max_length=MAX_RAW_ENTRY)],
    tags: Annotated[
        list[Annotated[str, Field(max_length=MAX_TAG)]] | dict[str, Annotated[str, Field(max_length=MAX_TAG)]] | None,
        Field(description=f"Short labels (a list), or key: value pairs; at most {MAX_TAGS}."),
    ] = None,
    role: Annotated[Literal["user", "assistant", "system"] | None, Field(description="Who wrote the message.")] = None,
    sessionId: SessionArg = None,
    messageId: Annotated[
        str | None, Field(description="The message's id in its session.", max_length=MAX_MESSAGE_ID)
    ] = None,
    vaultId: VaultId = None,
) -> dict[str, Any]:
    w = ctx.writer()  # refuses the public role before anything else
    return add_entry(
        w,
        _memory(ctx, memoryId, vaultId),
        summary=summary,
        raw_entry=rawEntry,
        tags=tags,
        role=role,
        session_id=_session(ctx, sessionId),
        message_id=messageId,
    )


@tool(
    "list_entries",
    title="List a memory's recent entries",
    description="The memory's entries, most recent first (at most limit).",
    output=Entries,
    read_only=True,
    idempotent=True,
)
@tool_errors
def list_entries_tool(
    ctx: ToolContext,
    memoryId: MemoryId,
    limit: Annotated[int, Field(description="At most this many entries.", ge=1, le=MAX_LIST)] = 10,
    vaultId: VaultId = None,
) -> dict[str, Any]:
    memory = _memory(ctx, memoryId, vaultId)
    return {"memory": memory, "entries": list_entries(ctx.db, ctx.caller, memory, limit=limit)}


@tool(
    "get_context",
    title="Read a memory's context document",
    description="The memory's latest context document (what a new session starts from); found is false when "
    "none was put yet.",
    output=Context,
    read_only=True,
    idempotent=True,
)
@tool_errors
def get_context_tool(ctx: ToolContext, memoryId: MemoryId, vaultId: VaultId = None) -> dict[str, Any]:
    memory = _memory(ctx, memoryId, vaultId)
    latest = get_context(ctx.db, ctx.caller, memory)
    return {"memory": memory, "found": latest is not None, **(latest or {})}


@tool(
    "put_context",
    title="Save a memory's context document",
    description="""\
Save a new version of the memory's context document, synthesised from the whole conversation
and the previous context (the rules are the prompt context_prompt). Earlier versions are kept;
get_context reads the latest.""",
    output=ContextPut,
)
@tool_errors
def put_context_tool(
    ctx: ToolContext,
    memoryId: MemoryId,
    content: Annotated[str, Field(description="The context document.", min_length=1, max_length=MAX_CONTENT)],
    sessionId: SessionArg = None,
    vaultId: VaultId = None,
) -> dict[str, Any]:
    w = ctx.writer()
    return put_context(w, _memory(ctx, memoryId, vaultId), content, session_id=_session(ctx, sessionId))


@tool(
    "await_consistency",
    title="Wait until a memory is searchable",
    description="""\
Wait until every entry written to the memory before this call is found by search (its indexes
have caught up; entries stored while the embedder failed are embedded now), at most timeoutS
seconds. consistent is false when that did not happen in time.""",
    output=Consistency,
    idempotent=True,
)
@tool_errors
def await_consistency_tool(
    ctx: ToolContext,
    memoryId: MemoryId,
    timeoutS: Annotated[float, Field(description="Seconds to wait at most.", gt=0, le=MAX_TIMEOUT_S)] = 10.0,
    vaultId: VaultId = None,
) -> dict[str, Any]:
    w = ctx.writer()
    return await_consistency(w, _memory(ctx, memoryId, vaultId), timeout_s=timeoutS)

"""The memory plugin's search tools: memory-search (the knowledge graph) and
conversation-search (past conversation messages).

Both run the platform's search pipeline (``maxy.search``) with the caller's guards;
conversation-search restricts it to Message nodes (``maxy.conversations.search_messages``).
Each answers with the rendered text and, as structuredContent, the hits as JSON
(``maxy.search.format.to_json`` for memory-search).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any, Literal

from maxy.conversations import search_messages
from maxy.conversations.search import MAX_LIMIT as MESSAGE_LIMIT
from maxy.conversations.search import MAX_QUERY_CHARS as MESSAGE_QUERY_CHARS
from maxy.memory.recall import recall
from maxy.plugins import (
    ISO_DATE,
    Label,
    OneOrMany,
    Rendered,
    ToolContext,
    ToolError,
    ToolOutput,
    require,
    tool,
    tool_errors,
)
from maxy.search import (
    MESSAGE_SEARCH,
    OUTPUT_BUDGET,
    SearchConfig,
    SearchRequest,
    render,
)
from maxy.search.classifier import RETRIEVAL_CLASSES
from maxy.search.format import NO_RELEVANT_RESULTS, to_json
from maxy.search.request import MAX_LIMIT, MAX_QUERY_CHARS
from pydantic import Field

MESSAGE_CONTENT_CHARS = 4_000

if TYPE_CHECKING:
    RetrievalClass = str
else:
    RetrievalClass = Literal[RETRIEVAL_CLASSES]

Relevance = Annotated[
    float | None,
    Field(description="A calibrated probability, from 0 to 1, that the hit is relevant to the query.", ge=0, le=1),
]
After = Annotated[str | None, Field(description=f"Only what happened at or after this time: {ISO_DATE}.")]
Before = Annotated[str | None, Field(description=f"Only what happened before this time: {ISO_DATE}.")]


class RelatedNode(ToolOutput):
    type: str = Field(description="The relationship type.")
    direction: str = Field(description="outgoing (hit -> related) or incoming (related -> hit).")
    labels: list[str]
    properties: dict[str, Any]


class SearchHit(ToolOutput):
    nodeId: str
    labels: list[str]
    score: float = Field(description="The ranking score; compare it only within one search.")
    relevance: Relevance = None
    properties: dict[str, Any]
    related: list[RelatedNode] = Field(default_factory=list, description="Nodes one hop away (expandHops 1).")


class NearestMiss(ToolOutput):
    """The best hit the relevance cut left out, when it left out every hit."""

    nodeId: str | None = None
    labels: list[str] | None = None
    score: float | None = None
    relevance: Relevance = None
    properties: dict[str, Any] | None = None


class SearchResults(ToolOutput):
    hits: list[SearchHit] = Field(description="Best first; what the text shows, as data.")
    nearestMiss: NearestMiss | None = Field(
        default=None, description="When no hit cleared the relevance cut: the closest one."
    )
    warnings: list[str] = Field(default_factory=list, description="What the search could not do (e.g. no embedder).")


class MessageHit(ToolOutput):
    messageId: str
    nodeId: str
    role: str | None
    content: str | None
    timestamp: str | None
    sessionId: str | None
    speaker: str | None
    score: float = Field(description="The ranking score; compare it only within one search.")
    relevance: Relevance = None


class MessageResults(ToolOutput):
    hits: list[MessageHit] = Field(description="Messages, best first.")
    nearestMiss: NearestMiss | None = Field(
        default=None, description="When no message cleared the relevance cut: the closest one."
    )


# ---------------------------------------------------------------------------------------
# memory-search
@tool(
    "memory-search",
    description="""
Search the memory by meaning and by words: people, facts, notes, and the passages of ingested
documents (each with its source file and heading path). Hits come best first as text blocks
`[Labels] (id: ...)` with their properties and related nodes; "No relevant results" with the
nearest miss when nothing is close. Use memory-get to read a hit's neighbourhood.
""",
    title="Search memory",
    output=SearchResults,
    read_only=True,
    idempotent=True,
)
@tool_errors
def memory_search(
    ctx: ToolContext,
    query: Annotated[
        str,
        Field(
            description="What to find: a question, a name or keywords.",
            min_length=1,
            max_length=MAX_QUERY_CHARS,
        ),
    ],
    limit: Annotated[int, Field(description="At most this many hits (default 10).", ge=1, le=MAX_LIMIT)] = 10,
    labels: Annotated[
        Annotated[list[Label], Field(min_length=1)] | None,
        OneOrMany,
        Field(description="Only nodes with one of these labels (omitted: every searchable label)."),
    ] = None,
    fields: Annotated[
        list[str] | None,
        Field(
            description="Return only these property names ([] for none; related.<name> narrows related nodes). "
            "Omitted: every property except bookkeeping."
        ),
    ] = None,
    expandHops: Annotated[
        Literal[0, 1], Field(description="1 (default): attach related nodes; 0: the hits alone, compact.")
    ] = 1,
    retrievalClass: Annotated[
        RetrievalClass | None,
        Field(description="Route the search when routing is on (omitted: the query classifier decides)."),
    ] = None,
    asOf: Annotated[str | None, Field(description=f"What was true at this time: {ISO_DATE}.")] = None,
    includeHistory: Annotated[
        bool, Field(description="Also find superseded and expired facts (default false).")
    ] = False,
    after: After = None,
    before: Before = None,
    minRelevance: Annotated[
        float | None,
        Field(
            description="Keep only hits whose relevance is at least this, from 0 to 1 (0 keeps every hit). "
            "Omitted: every hit, or none and the nearest miss when nothing is close.",
            ge=0,
            le=1,
        ),
    ] = None,
) -> str:
    if isinstance(labels, str):
        labels = [labels]
    require(labels is None or isinstance(labels, list), "labels", "a list of node labels")
    require(fields is None or isinstance(fields, list), "fields", "a list of property names")
    req = SearchRequest(
        query,
        limit=limit,
        labels=tuple(labels) if labels else None,
        fields=tuple(fields) if fields is not None else None,
        expand_hops=expandHops,
        retrieval_class=retrievalClass,
        as_of=asOf,
        include_history=includeHistory,
        after=after,
        before=before,
        min_relevance=minRelevance,
    )
    response = recall(ctx.db, ctx.caller, ctx.embedder, ctx.settings, req, keywords=ctx.knowledge_keywords)
    hits = response.hits
    miss = response.nearest_miss  # set by the relevance cut when it left out every hit
    text = render(hits, OUTPUT_BUDGET, fields=req.fields, nearest_miss=miss)
    if response.warnings:
        text = "\n".join(f"(note: {w})" for w in response.warnings) + "\n" + text
    data: dict[str, Any] = {"hits": to_json(hits), "warnings": list(response.warnings)}
    if miss is not None:
        data["nearestMiss"] = to_json([miss])[0]
    return Rendered(text, data)


# ---------------------------------------------------------------------------------------
# conversation-search
def _render_messages(rows: list[dict[str, Any]], nearest_miss: dict[str, Any] | None = None) -> str:
    if not rows:
        if nearest_miss is not None:
            return NO_RELEVANT_RESULTS + "\n" + _message_block(nearest_miss)
        return "No matching messages."
    blocks = [_message_block(r) for r in rows]
    text = "\n---\n".join(blocks)
    while len(text) > OUTPUT_BUDGET and len(blocks) > 1:
        blocks.pop()
        text = "\n---\n".join(blocks) + "\n--- [more messages left out to fit the output budget]"
    return text[:OUTPUT_BUDGET]


def _message_block(r: dict[str, Any]) -> str:
    content = r.get("content") or ""
    if not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False, default=str)
    if len(content) > MESSAGE_CONTENT_CHARS:
        content = content[:MESSAGE_CONTENT_CHARS] + f"… [{len(content) - MESSAGE_CONTENT_CHARS} more chars]"
    speaker = f" speaker: {r['speaker']}" if r.get("speaker") else ""
    rank = f"(relevance: {r['relevance']:.2f})" if r.get("relevance") is not None else f"(score: {r['score']:.3f})"
    head = f"[{r.get('role') or 'unknown'}] {r.get('timestamp') or '-'} (session: {r.get('sessionId') or '-'}) {rank}{speaker}"
    return head + "\n  " + content.replace("\n", "\n  ")


@tool(
    "conversation-search",
    description="""
Search past conversation messages by meaning and by words; each hit has the message's role,
text, time and session, best first. A server pinned to a session searches only that one.
""",
    title="Search conversations",
    output=MessageResults,
    read_only=True,
    idempotent=True,
)
@tool_errors
def conversation_search(
    ctx: ToolContext,
    query: Annotated[
        str,
        Field(
            description="What was said, in words: a question or keywords.",
            min_length=1,
            max_length=MESSAGE_QUERY_CHARS,
        ),
    ],
    limit: Annotated[int, Field(description="At most this many messages (default 10).", ge=1, le=MESSAGE_LIMIT)] = 10,
    sessionId: Annotated[
        str | None,
        Field(description="Only this conversation (a server pinned to a session searches only its own)."),
    ] = None,
    after: After = None,
    before: Before = None,
) -> str:
    ctx.refuse_widening({"sessionId": sessionId})
    if ctx.session_id and sessionId is not None and sessionId != ctx.session_id:
        raise ToolError("sessionId: SESSION_ID is pinned for this server; a tool argument cannot change it")
    session = ctx.session_id or sessionId
    rows = search_messages(
        ctx.db,
        ctx.caller,
        ctx.embedder,
        query,
        session_id=session,
        limit=limit,
        after=after,
        before=before,
        config=SearchConfig.from_settings(ctx.settings, base=MESSAGE_SEARCH),
    )
    data: dict[str, Any] = {"hits": [_message_data(r) for r in rows]}
    if rows.nearest_miss is not None:
        data["nearestMiss"] = _message_data(rows.nearest_miss)
    return Rendered(_render_messages(rows, rows.nearest_miss), data)


def _message_data(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != "mode" and not (k == "relevance" and v is None)}

"""The memory plugin's search tools: memory-search (the knowledge graph) and
conversation-search (past conversation messages).

Both run the platform's search pipeline (``maxy.search``) with the caller's guards;
conversation-search restricts it to Message nodes (``maxy.conversations.search_messages``).
"""

from __future__ import annotations

import json
from typing import Any

from maxy.conversations import search_messages
from maxy.memory.recall import recall
from maxy.plugins import ToolContext, ToolError, require, tool, tool_errors
from maxy.search import (
    MESSAGE_SEARCH,
    OUTPUT_BUDGET,
    SearchConfig,
    SearchRequest,
    render,
)

MESSAGE_CONTENT_CHARS = 4_000


# ---------------------------------------------------------------------------------------
# memory-search
@tool(
    "memory-search",
    description="""
Search the knowledge graph (hybrid: semantic vector search + BM25 keywords, one-hop graph
expansion). Returns text blocks `[Labels] (id: nodeId) (score: 0.xxx)` with properties and
related nodes, separated by `---`, within an 80,000-character budget; an ingested document found
at several levels is one block (its path and best passage).
Arguments: query (text); limit (1-500, default 10); labels (only these node labels);
fields (return only these property names, bookkeeping such as createdAt included; [] for none;
`related.name` narrows related nodes too); expandHops (1: related nodes, 0: compact);
retrievalClass (entity | temporal | event | general | none: routes the search when routing is on;
omitted: the query classifier decides, or no routing). Time: superseded and expired facts are
left out unless includeHistory is true; asOf (ISO 8601) returns what was true then; after /
before (ISO 8601) keep what happened in that window (a fact's validFrom, a message's timestamp,
else when it was recorded). A query that is exactly a node's name puts that node first.
""",
    read_only=True,
    idempotent=True,
)
@tool_errors
def memory_search(
    ctx: ToolContext,
    query: str,
    limit: int = 10,
    labels: list[str] | None = None,
    fields: list[str] | None = None,
    expandHops: int = 1,
    retrievalClass: str | None = None,
    asOf: str | None = None,
    includeHistory: bool = False,
    after: str | None = None,
    before: str | None = None,
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
    )
    response = recall(ctx.db, ctx.caller, ctx.embedder, ctx.settings, req, keywords=ctx.knowledge_keywords)
    hits = response.hits
    text = render(hits, OUTPUT_BUDGET, fields=req.fields)
    if response.warnings:
        text = "\n".join(f"(note: {w})" for w in response.warnings) + "\n" + text
    return text


# ---------------------------------------------------------------------------------------
# conversation-search
def _render_messages(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No matching messages."
    blocks = []
    for r in rows:
        content = r.get("content") or ""
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False, default=str)
        if len(content) > MESSAGE_CONTENT_CHARS:
            content = content[:MESSAGE_CONTENT_CHARS] + f"… [{len(content) - MESSAGE_CONTENT_CHARS} more chars]"
        speaker = f" speaker: {r['speaker']}" if r.get("speaker") else ""
        head = (
            f"[{r.get('role') or 'unknown'}] {r.get('timestamp') or '-'} "
            f"(session: {r.get('sessionId') or '-'}) (score: {r['score']:.3f}){speaker}"
        )
        blocks.append(head + "\n  " + content.replace("\n", "\n  "))
    text = "\n---\n".join(blocks)
    while len(text) > OUTPUT_BUDGET and len(blocks) > 1:
        blocks.pop()
        text = "\n---\n".join(blocks) + "\n--- [more messages left out to fit the output budget]"
    return text[:OUTPUT_BUDGET]


@tool(
    "conversation-search",
    description="""
Semantic search over past conversation messages. Returns each message's role, content,
timestamp, session and relevance score, best first. When this server is pinned to a session
(SESSION_ID), only that conversation is searched; admin servers search all conversations, or
one session with sessionId. after / before (ISO 8601 date or date-time) keep messages sent in
that window.
""",
    read_only=True,
    idempotent=True,
)
@tool_errors
def conversation_search(
    ctx: ToolContext,
    query: str,
    limit: int = 10,
    sessionId: str | None = None,
    after: str | None = None,
    before: str | None = None,
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
    return _render_messages(rows)

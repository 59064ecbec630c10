"""Conversations: the sessions this view holds, each one's messages in order, and conversation
search (the conversation-search tool's pipeline)."""

from __future__ import annotations

from typing import Any

from ...conversations.listing import list_conversations, session_messages
from ...conversations.search import search_messages
from ..paging import PAGE_SIZE, page_of, pager
from ..views import Console, NotFound, View

SEARCH_LIMIT = 20


def conversations(console: Console, request: Any, view: View) -> Any:
    query = (request.query_params.get("q") or "").strip()
    if query:
        hits = search_messages(console.db, view.ctx.caller, console.embedder, query, limit=SEARCH_LIMIT)
        return console.page(
            request, view, "conversations.html", q=query, hits=hits, miss=hits.nearest_miss, rows=[], pager=None
        )
    page, offset = page_of(request.query_params)
    total, rows = list_conversations(console.db, view.ctx.caller, offset=offset, limit=PAGE_SIZE)
    return console.page(
        request, view, "conversations.html", q="", hits=None, miss=None, rows=rows, pager=pager(request, total, page)
    )


def conversation(console: Console, request: Any, view: View) -> Any:
    session_id = request.path_params["session_id"]
    page, offset = page_of(request.query_params)
    total, rows = session_messages(console.db, view.ctx.caller, session_id, offset=offset, limit=PAGE_SIZE)
    if total == 0:
        raise NotFound("conversation with this session id")
    return console.page(
        request, view, "conversation.html", session_id=session_id, rows=rows, pager=pager(request, total, page)
    )


ROUTES = [
    ("/conversations", conversations, ["GET"]),
    ("/conversations/{session_id:path}", conversation, ["GET"]),
]

"""Conversations and their messages.

    (:Conversation {sessionId})-[:HAS_MESSAGE]->(:Message {role, content, timestamp, sessionId, speaker})

- ``store``: find a conversation by its session (or nodeId), check a session id;
- ``search``: ``search_messages``, the hybrid search pipeline restricted to Message nodes;
- ``importing``: ``maxy conversation import`` (JSONL to Conversation and Message nodes);
- ``compaction``: the briefing stored on a conversation for the next turn;
- ``context``: what an admin conversation carries over (briefing, review digest, open
  tasks, recent alerts);
- ``append``: ``append_turn``, one turn from the agent (the Conversation appears at the second);
- ``listing``: ``list_conversations`` and ``session_messages``, paged, for the operator console;
- ``cli``: ``maxy conversation import|search|append``.
"""

from .listing import list_conversations, session_messages
from .search import search_messages
from .store import check_session_id, find_conversation

__all__ = ["check_session_id", "find_conversation", "list_conversations", "search_messages", "session_messages"]

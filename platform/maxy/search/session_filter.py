"""The Cypher that keeps a search inside one conversation session (message search)."""

# A node of the session: its own sessionId, or a HAS_MESSAGE from that session's Conversation.
SESSION_CLAUSE = (
    "AND (n.sessionId = $sessionId OR EXISTS { MATCH (c:Conversation)-[:HAS_MESSAGE]->(n) "
    "WHERE c.sessionId = $sessionId AND c.accountId = $g_accountId AND c.deletedAt IS NULL })"
)


def session_clause(session_id: str | None) -> str:
    return SESSION_CLAUSE if session_id else ""

"""A memory's context document: what an agent reads first when a session starts.

    (:MemorySpace)-[:HAS_CONTEXT]->(:MemoryContext {memory, version, content, sessionId})

Every put of new content adds a new version (1, 2, ...); the old ones are kept, and the latest
is the one with the highest version. Two processes putting at the same instant take two
versions, numbered in turn under the space's lock (``spaces.commit_next``). A put of the latest
version's own content writes nothing and answers with that version (``written: false``), so a
flush with nothing new, such as a session's end right after its last flush, adds no copy.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from ..conversations.store import check_session_id
from ..db import Database
from ..errors import ValidationError
from ..graph.confine import record_scope
from ..graph.guards import Caller, node_guard
from ..graph.write import Edge, GraphWriter, NodeSpec
from ..logs import log_line, short
from .spaces import (
    CONTEXT_LABEL,
    MAX_TRIES,
    SpaceMoved,
    check_memory,
    commit_next,
    kept_changing,
    space_lock,
    space_node_id,
    space_spec,
)

MAX_CONTENT = 100_000


def _latest(db: Database, caller: Caller, memory: str) -> dict[str, Any] | None:
    space, context = node_guard(caller, "s"), node_guard(caller, "c")
    rows = db.read(
        f"""
        MATCH (s:Node {{nodeId: $space}}) WHERE {space.clause}
        MATCH (s)-[:HAS_CONTEXT]->(c:{CONTEXT_LABEL}) WHERE {context.clause}
        RETURN c.nodeId AS contextId, c.version AS version, c.content AS content, c.sessionId AS sessionId,
               c.createdAt AS createdAt
        ORDER BY c.version DESC, c.createdAt DESC
        LIMIT 1
        """,
        space=space_node_id(caller, memory),
        **space.params,
    )
    return dict(rows[0]) if rows else None


def _content(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("content", "a non-empty context document is required")
    if len(value) > MAX_CONTENT:
        raise ValidationError("content", f"at most {MAX_CONTENT:,} characters (got {len(value):,}); condense it")
    return value.strip()


def put_context(writer: GraphWriter, memory: str, content: str, *, session_id: str | None = None) -> dict[str, Any]:
    """Store ``content`` as the memory's next context version. Returns {"contextId", "version",
    "memory", "createdAt", "written"}: the latest version itself, with ``written`` false, when its
    content is ``content`` already. Bad input raises ValidationError naming the field; nothing
    is written."""
    started = time.perf_counter()
    name = check_memory(memory)
    text = _content(content)
    sid = check_session_id(session_id) if session_id is not None else None
    caller = writer.caller
    node_id = f"memcontext-{uuid.uuid4().hex[:24]}"
    with space_lock(caller, name):
        latest = _latest(writer.db, caller, name)
        if latest is not None and latest["content"] == text:
            return _put_result(writer, name, latest, written=False, chars=len(text), sid=sid, started=started)
        context = NodeSpec(
            [CONTEXT_LABEL],
            {"memory": name, "version": 1, "content": text, "sessionId": sid},  # numbered under the lock
            edges=[Edge("HAS_CONTEXT", space_node_id(caller, name), "in")],
            node_id=node_id,
            scope=record_scope(caller),
        )
        for tries in range(MAX_TRIES):
            if latest is None or tries:  # perhaps a new space: it is there before it is locked
                writer.write(space_spec(writer, name))
            prepared = writer.prepare([space_spec(writer, name), context])
            try:
                _, version = commit_next(
                    writer, name, prepared, records="HAS_CONTEXT", number="version", node_id=node_id, first=1
                )
            except SpaceMoved:
                continue
            break
        else:
            raise kept_changing(name)
        stored = _latest(writer.db, caller, name)
    created_at = stored["createdAt"] if stored and stored["contextId"] == node_id else None
    written = {"contextId": node_id, "version": version, "createdAt": created_at}
    return _put_result(writer, name, written, written=True, chars=len(text), sid=sid, started=started)


def _put_result(
    writer: GraphWriter,
    memory: str,
    context: dict[str, Any],
    *,
    written: bool,
    chars: int,
    sid: str | None,
    started: float,
) -> dict[str, Any]:
    log_line(
        "memory-agent",
        op="put-context",
        accountId=short(writer.account.account_id),
        memory=memory,
        version=context["version"],
        written=written,
        chars=chars,
        session=short(sid) if sid else None,
        ms=round((time.perf_counter() - started) * 1000),
    )
    return {
        "contextId": context["contextId"],
        "version": int(context["version"]),
        "memory": memory,
        "createdAt": context["createdAt"],
        "written": written,
    }


def get_context(db: Database, caller: Caller, memory: str) -> dict[str, Any] | None:
    """The memory's latest context in the caller's view: {"contextId", "version", "content",
    "sessionId", "createdAt"}; None when it has none yet (or it is another view's memory)."""
    started = time.perf_counter()
    name = check_memory(memory)
    latest = _latest(db, caller, name)
    log_line(
        "memory-agent",
        op="get-context",
        accountId=short(caller.account_id),
        memory=name,
        version=latest["version"] if latest else None,
        ms=round((time.perf_counter() - started) * 1000),
    )
    return latest

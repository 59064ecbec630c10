"""Memory entries: one per message of a conversation, with the summary a search finds it by.

    (:MemorySpace)-[:HAS_ENTRY]->(:MemoryEntry {memory, summary, rawEntry, tags, role, sessionId, messageId, seq})
    (:MemoryEntry)-[:RECORDS]->(:Message)         the turn it records, when it is in the writer's view
    (:MemoryEntry)-[:IN_SESSION]->(:Conversation) the session's Conversation, when there is one

An entry is embedded and BM25-searched by its ``summary``. With a ``message_id`` the entry's id
derives from (view, memory, session, message id): the same message again updates its entry,
keeping its ``seq``, so a resumed thread never records a message twice. A session's
Conversation appears at its second turn; an entry written before then is linked to it by the
next entry of that session.
"""

from __future__ import annotations

import time
import unicodedata
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from ..conversations.append import ROLES
from ..conversations.importing import message_node_id
from ..conversations.store import check_session_id, find_conversation
from ..db import Database
from ..errors import ValidationError
from ..graph.confine import id_root, record_scope
from ..graph.guards import Caller, generic_guard, node_guard
from ..graph.write import Edge, GraphWriter, NodeSpec
from ..logs import log_line, short
from .spaces import (
    ENTRY_LABEL,
    MAX_TRIES,
    SpaceMoved,
    check_memory,
    commit_next,
    derived_id,
    kept_changing,
    space_lock,
    space_node_id,
    space_spec,
)

MAX_SUMMARY = 4_000
MAX_RAW_ENTRY = 20_000
MAX_TAGS = 32
MAX_TAG = 200
MAX_MESSAGE_ID = 128
MAX_LIST = 100
MAX_LINK = 50  # earlier entries of the session linked to its Conversation in one add
_BREAKS = ("Cc", "Zl", "Zp")  # control characters and the line and paragraph separators

_COLUMNS = (
    "e.nodeId AS entryId, e.summary AS summary, e.rawEntry AS rawEntry, e.tags AS tags, e.role AS role, "
    "e.sessionId AS sessionId, e.messageId AS messageId, e.seq AS seq, e.createdAt AS createdAt"
)


# ---------------------------------------------------------------------------------------
# validation
def _text(value: object, field: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(field, "a non-empty string is required")
    if len(value) > limit:
        raise ValidationError(field, f"at most {limit:,} characters (got {len(value):,}); shorten it")
    return value.strip()


def _one_line(value: object, field: str, limit: int) -> str:
    text = _text(value, field, limit)
    if any(unicodedata.category(ch) in _BREAKS for ch in text):
        raise ValidationError(field, "control characters (line breaks, tabs) are not allowed")
    return text


def check_tags(tags: object) -> list[str]:
    """Tags as stored: a mapping becomes ``key:value`` strings, a list stays a list of strings."""
    if tags is None:
        return []
    if isinstance(tags, (Mapping, Sequence)) and not isinstance(tags, str) and len(tags) > MAX_TAGS:
        raise ValidationError("tags", f"at most {MAX_TAGS} tags (got {len(tags)})")
    if isinstance(tags, Mapping):
        items = [f"{_one_line(k, 'tags', MAX_TAG)}:{_one_line(v, f'tags.{k}', MAX_TAG)}" for k, v in tags.items()]
    elif isinstance(tags, Sequence) and not isinstance(tags, str):
        items = [_one_line(t, f"tags[{i}]", MAX_TAG) for i, t in enumerate(tags)]
    else:
        raise ValidationError(
            "tags", f"a list of strings or an object of strings is required (got {type(tags).__name__})"
        )
    return list(dict.fromkeys(items))


def check_role(value: object) -> str:
    role = value.strip().lower() if isinstance(value, str) else ""
    if role not in ROLES:
        raise ValidationError("role", f"one of {', '.join(ROLES)} (got {value!r})")
    return role


def check_limit(value: object, field: str = "limit") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIST:
        raise ValidationError(field, f"an integer from 1 to {MAX_LIST} (got {value!r})")
    return value


# ---------------------------------------------------------------------------------------
def entry_node_id(caller: Caller, memory: str, session_id: str | None, message_id: str) -> str:
    return derived_id("mementry", id_root(caller), memory, session_id or "", message_id)


def has_entry(db: Database, caller: Caller, memory: str, session_id: str, message_id: str) -> bool:
    """Whether the caller's view holds the entry of this message (``add_entry`` with its ids)."""
    guard = node_guard(caller, "e")
    rows = db.read(
        f"MATCH (e:{ENTRY_LABEL}:Node {{nodeId: $id}}) WHERE {guard.clause} RETURN count(e) AS n",
        id=entry_node_id(caller, memory, session_id, message_id),
        **guard.params,
    )
    return bool(rows and rows[0]["n"])


def _space_state(writer: GraphWriter, memory: str, node_id: str, session_id: str | None) -> dict[str, Any]:
    """The space's highest seq, this entry's own seq when it exists, and the session's entries
    not yet linked to a Conversation."""
    space, entry = node_guard(writer.caller, "s"), node_guard(writer.caller, "e")
    rows = writer.db.read(
        f"""
        OPTIONAL MATCH (s:Node {{nodeId: $space}}) WHERE {space.clause}
        OPTIONAL MATCH (s)-[:HAS_ENTRY]->(e:{ENTRY_LABEL}) WHERE {entry.clause}
        WITH e
        RETURN max(e.seq) AS maxSeq,
               head(collect(CASE WHEN e.nodeId = $id THEN e.seq END)) AS ownSeq,
               [x IN collect(CASE WHEN $sid IS NOT NULL AND e.sessionId = $sid AND e.nodeId <> $id
                                   AND NOT EXISTS {{ (e)-[:IN_SESSION]->() }} THEN e.nodeId END)][..$cap] AS unlinked
        """,
        space=space_node_id(writer.caller, memory),
        id=node_id,
        sid=session_id,
        cap=MAX_LINK,
        **space.params,
    )
    return rows[0] if rows else {}


def _message_in_view(writer: GraphWriter, node_id: str) -> bool:
    guard = generic_guard(writer.caller, "m")
    rows = writer.db.read(
        f"MATCH (m:Message:Node {{nodeId: $id}}) WHERE {guard.clause} RETURN count(m) AS n", id=node_id, **guard.params
    )
    return bool(rows and rows[0]["n"])


def _entry_specs(
    writer: GraphWriter,
    memory: str,
    node_id: str,
    props: dict[str, Any],
    sid: str | None,
    message: str | None,
    state: dict[str, Any],
) -> list[NodeSpec]:
    """The space (touched), the entry (linked to its Message when the view holds it), and, once
    the session's Conversation exists, the entry and the session's earlier entries linked to it."""
    caller = writer.caller
    conversation = find_conversation(writer.db, caller, sid) if sid is not None else None
    edges = [Edge("HAS_ENTRY", space_node_id(caller, memory), "in")]
    if message is not None:
        edges.append(Edge("RECORDS", message))
    if conversation is not None:
        edges.append(Edge("IN_SESSION", conversation["nodeId"]))
    entry = NodeSpec([ENTRY_LABEL], props, edges=edges, node_id=node_id, scope=record_scope(caller))
    specs = [space_spec(writer, memory), entry]
    if conversation is not None:
        specs += [
            NodeSpec([ENTRY_LABEL], {}, edges=[Edge("IN_SESSION", conversation["nodeId"])], node_id=other)
            for other in state.get("unlinked") or []
        ]
    return specs


def add_entry(
    writer: GraphWriter,
    memory: str,
    *,
    summary: str,
    raw_entry: str,
    tags: Mapping[str, str] | Sequence[str] | None = None,
    role: str | None = None,
    session_id: str | None = None,
    message_id: str | None = None,
) -> dict[str, Any]:
    """Record one message in ``memory`` (see the module docstring). Returns {"entryId",
    "nodeId", "memory", "seq", "created", "embedded", "message" (the Message's nodeId or None)}.
    Bad input raises ValidationError naming the field; nothing is written."""
    started = time.perf_counter()
    name = check_memory(memory)
    props: dict[str, Any] = {
        "memory": name,
        "summary": _text(summary, "summary", MAX_SUMMARY),
        "rawEntry": _text(raw_entry, "rawEntry", MAX_RAW_ENTRY),
        "tags": check_tags(tags) or None,
        "role": check_role(role) if role is not None else None,
    }
    sid = check_session_id(session_id) if session_id is not None else None
    mid = _one_line(message_id, "messageId", MAX_MESSAGE_ID) if message_id is not None else None
    props["sessionId"], props["messageId"] = sid, mid
    caller = writer.caller
    node_id = entry_node_id(caller, name, sid, mid) if mid is not None else f"mementry-{uuid.uuid4().hex[:24]}"
    message = message_node_id(id_root(caller), sid, mid) if sid is not None and mid is not None else None
    if message is not None and not _message_in_view(writer, message):
        message = None
    with space_lock(caller, name):
        for tries in range(MAX_TRIES):
            state = _space_state(writer, name, node_id, sid)
            own, top = state.get("ownSeq"), state.get("maxSeq")
            props["seq"] = int(own) if own is not None else (0 if top is None else int(top) + 1)
            if top is None or tries:  # perhaps a new space: it is there before it is locked
                writer.write(space_spec(writer, name))
            specs = _entry_specs(writer, name, node_id, props, sid, message, state)
            try:
                if own is not None:  # an entry written again keeps its seq: nothing to number
                    results = writer.write_many(specs)
                else:
                    prepared = writer.prepare(specs)
                    results, props["seq"] = commit_next(
                        writer, name, prepared, records="HAS_ENTRY", number="seq", node_id=node_id, first=0
                    )
            except SpaceMoved:
                continue
            break
        else:
            raise kept_changing(name)
    mine = next(r for r in results if r.node_id == node_id)
    out = {
        "entryId": node_id,
        "nodeId": node_id,
        "memory": name,
        "seq": props["seq"],
        "created": mine.created,
        "embedded": mine.embedded,
        "message": message,
    }
    log_line(
        "memory-agent",
        op="add-entry",
        accountId=short(writer.account.account_id),
        memory=name,
        entry=short(node_id, 17),
        seq=out["seq"],
        created=mine.created,
        embedded=mine.embedded,
        message=short(message, 12) if message else None,
        session=short(sid) if sid else None,
        ms=round((time.perf_counter() - started) * 1000),
    )
    return out


def list_entries(db: Database, caller: Caller, memory: str, *, limit: int = 10) -> list[dict[str, Any]]:
    """The memory's entries in the caller's view, most recent first (highest seq), at most
    ``limit`` (1-100). A memory with no entries, or one of another view, gives []."""
    started = time.perf_counter()
    name = check_memory(memory)
    limit = check_limit(limit)
    space, entry = node_guard(caller, "s"), node_guard(caller, "e")
    rows = db.read(
        f"""
        MATCH (s:Node {{nodeId: $space}}) WHERE {space.clause}
        MATCH (s)-[:HAS_ENTRY]->(e:{ENTRY_LABEL}) WHERE {entry.clause}
        RETURN {_COLUMNS}
        ORDER BY e.seq DESC, e.createdAt DESC
        LIMIT $limit
        """,
        space=space_node_id(caller, name),
        limit=limit,
        **space.params,
    )
    out = [{**r, "tags": list(r["tags"] or [])} for r in rows]
    log_line(
        "memory-agent",
        op="list-entries",
        accountId=short(caller.account_id),
        memory=name,
        limit=limit,
        entries=len(out),
        ms=round((time.perf_counter() - started) * 1000),
    )
    return out

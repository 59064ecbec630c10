"""Conversation turns from the agent: ``append_turn`` (the ``conversation-append`` tool and
``maxy conversation append``).

A turn is a Message written through the write primitive, shaped like an imported one
(``importing``): ``content`` is ``"<speaker>: <text>"`` (the text alone without a speaker) and
``summary`` folds in the neighbouring turns (``CONTEXT_BEFORE`` before, ``CONTEXT_AFTER``
after), which is what gets embedded and BM25-searched. Later turns are unknown when a turn
arrives, so each append also rewrites (and re-embeds) the summaries of the earlier turns whose
window now holds it.

    (:Conversation {sessionId})-[:HAS_MESSAGE]->(:Message {sessionId, seq, role, speaker, content, summary, timestamp})
    (:Message)-[:NEXT]->(:Message)

- Turns are ordered by ``timestamp`` (UTC ISO 8601 text, default: now), then ``seq`` (append
  order within the session; an imported turn's ``position`` stands in for it). A turn appended
  with an earlier timestamp than the last one takes its place in the summaries; its NEXT edge
  comes from the turn before it, and existing NEXT edges are left as they are.
- The Conversation is created at the session's second turn (a lone first turn carries the
  sessionId only), with the id ``compaction.conversation_node_id`` derives, so two appends at
  once MERGE into one node. An existing Conversation of the session in the writer's view (from
  compaction or an import) is used instead. Turns without one are linked to it (HAS_MESSAGE).
- The same ``message_id`` again updates that turn in place (content, role, speaker, timestamp
  when given), keeping its ``seq`` and its NEXT edges.
- Ids derive from ``confine.id_root``, and a session's turns are the ones written in the
  writer's own view, so a pinned view keeps its own chain and Conversation. A community writer's
  turns (a negotiation's) are community records with ids of their own: a generic append to the
  same session id starts a separate chain, and neither side reads the other's turns (``_side``).

Appends to one session are serialised within a process; across processes two appends at the
same instant may share a ``seq`` (ties then fall back to write time).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..errors import ValidationError
from ..graph.allowlist import COMMUNITY_RECORD
from ..graph.confine import default_visibility, id_root, record_scope
from ..graph.guards import Guard
from ..graph.validity import now_instant, to_instant
from ..graph.write import Edge, GraphWriter, NodeSpec
from ..logs import log_line, short
from .compaction import conversation_node_id
from .importing import (
    CONTEXT_AFTER,
    CONTEXT_BEFORE,
    context_summary,
    imported_conversation_id,
    message_node_id,
    transcript_text,
)
from .store import CONVERSATION_LABELS, check_session_id

ROLES = ("user", "assistant", "system")
MAX_CONTENT = 20_000
MAX_SPEAKER = 200
MAX_MESSAGE_ID = 128
# Turns read on each side of the new one: enough to rebuild every summary that holds it.
WINDOW = CONTEXT_BEFORE + CONTEXT_AFTER
# Unlinked turns linked to the Conversation in one append (only races leave more than one).
MAX_LINK = 50

_LOCKS = tuple(threading.Lock() for _ in range(64))


@dataclass(frozen=True)
class _Turn:
    node_id: str
    line: str
    summary: str | None


@dataclass(frozen=True)
class _Session:
    others: int  # turns of the session besides this one
    max_seq: int | None
    first_at: str | None
    own: dict[str, Any] | None  # this message's timestamp and seq when it already exists
    unlinked: list[str]  # other turns without a Conversation


# ---------------------------------------------------------------------------------------
# validation
def _text(value: object, field: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(field, "a non-empty string is required")
    if len(value) > limit:
        raise ValidationError(field, f"at most {limit:,} characters (got {len(value):,})")
    return value.strip()


def _name(value: object, field: str, limit: int) -> str:
    text = _text(value, field, limit)
    if any(ord(ch) < 32 for ch in text):
        raise ValidationError(field, "control characters (line breaks, tabs) are not allowed")
    return text


def _role(value: object) -> str:
    role = value.strip().lower() if isinstance(value, str) else ""
    if role not in ROLES:
        raise ValidationError("role", f"one of {', '.join(ROLES)} (got {value!r})")
    return role


# ---------------------------------------------------------------------------------------
# reads: the session's turns in the writer's own view
def _id_root(writer: GraphWriter) -> str:
    """The root of the ids of the turns and the Conversation this writer makes: a community
    writer's (a negotiation's) never meet the memory's, so neither takes over the other's."""
    root = id_root(writer.caller)
    return f"{root}\x1fcommunity" if writer.community else root


def _side(writer: GraphWriter, var: str) -> Guard:
    """The guards, and the writer's side of a session: a community writer reads only its own
    records (``COMMUNITY_RECORD``), any other writer never one (``read_guard``)."""
    guard = writer.read_guard(var)
    return Guard(f"{guard.clause} AND {var}:{COMMUNITY_RECORD}", guard.params) if writer.community else guard


def _own_view(writer: GraphWriter, var: str) -> Guard:
    """The guards plus the visibility this writer gives the turns it creates: the session's
    turns are the ones written in this view, not those of a wider or narrower one."""
    scope, agents = default_visibility(writer.caller, None, None)
    guard = _side(writer, var)
    parts = [guard.clause, f"{var}.scope IS NULL" if scope is None else f"{var}.scope = $v_scope"]
    parts.append(f"{var}.agents IS NULL" if agents is None else f"{var}.agents = $v_agents")
    return Guard(" AND ".join(parts), {**guard.params, "v_scope": scope, "v_agents": agents})


def _conversation_of(writer: GraphWriter, session_id: str) -> str | None:
    """The session's Conversation in the writer's view: one with a derived id first (this
    module's and compaction's, or an import's), else the oldest with that sessionId."""
    root = _id_root(writer)
    derived = [conversation_node_id(root, session_id), imported_conversation_id(root, session_id)]
    guard = _side(writer, "c")
    rows = writer.db.read(
        f"""
        MATCH (c:Node) WHERE c.sessionId = $sid AND {CONVERSATION_LABELS} AND {guard.clause}
        RETURN c.nodeId AS nodeId
        ORDER BY CASE WHEN c.nodeId IN $derived THEN 0 ELSE 1 END, c.createdAt
        LIMIT 1
        """,
        sid=session_id,
        derived=derived,
        **guard.params,
    )
    return str(rows[0]["nodeId"]) if rows else None


def _session_state(writer: GraphWriter, session_id: str, node_id: str) -> _Session:
    view = _own_view(writer, "m")
    rows = writer.db.read(
        f"""
        MATCH (m:Message {{sessionId: $sid}}) WHERE {view.clause}
        WITH m, m.nodeId = $id AS isOwn
        RETURN sum(CASE WHEN isOwn THEN 0 ELSE 1 END) AS others,
               max(coalesce(m.seq, m.position)) AS maxSeq,
               min(m.timestamp) AS firstAt,
               head([x IN collect(CASE WHEN isOwn THEN m END) | {{timestamp: x.timestamp, seq: coalesce(x.seq, x.position)}}]) AS own,
               [x IN collect(CASE WHEN NOT isOwn AND NOT EXISTS {{ ()-[:HAS_MESSAGE]->(m) }} THEN m.nodeId END)][..$cap] AS unlinked
        """,
        sid=session_id,
        id=node_id,
        cap=MAX_LINK,
        **view.params,
    )
    row = rows[0] if rows else {}
    return _Session(
        int(row.get("others") or 0),
        row.get("maxSeq"),
        row.get("firstAt"),
        row.get("own"),
        list(row.get("unlinked") or []),
    )


def _neighbours(
    writer: GraphWriter, session_id: str, node_id: str, timestamp: str, seq: int
) -> tuple[list[_Turn], list[_Turn]]:
    """Up to ``WINDOW`` turns before (timestamp, seq) and after it, each in session order."""
    view = _own_view(writer, "m")
    ts, seq_of = "coalesce(m.timestamp, '')", "coalesce(m.seq, m.position, -1)"
    before = f"({ts} < $ts OR ({ts} = $ts AND {seq_of} < $seq))"
    rows = writer.db.read(
        f"""
        CALL () {{
          MATCH (m:Message {{sessionId: $sid}}) WHERE {view.clause} AND m.nodeId <> $id AND {before}
          WITH m ORDER BY {ts} DESC, {seq_of} DESC, m.createdAt DESC LIMIT $n
          RETURN m, true AS isBefore
          UNION ALL
          MATCH (m:Message {{sessionId: $sid}}) WHERE {view.clause} AND m.nodeId <> $id AND NOT {before}
          WITH m ORDER BY {ts}, {seq_of}, m.createdAt LIMIT $n
          RETURN m, false AS isBefore
        }}
        RETURN m.nodeId AS nodeId, m.content AS content, m.summary AS summary, isBefore
        """,
        sid=session_id,
        id=node_id,
        ts=timestamp,
        seq=seq,
        n=WINDOW,
        **view.params,
    )
    turns = [(r["isBefore"], _Turn(r["nodeId"], str(r["content"] or ""), r["summary"])) for r in rows]
    earlier = [t for is_before, t in turns if is_before]
    later = [t for is_before, t in turns if not is_before]
    return earlier[::-1], later


# ---------------------------------------------------------------------------------------
# the write
def _neighbour_specs(
    earlier: list[_Turn], me: _Turn, later: list[_Turn], conversation: str | None, unlinked: list[str]
) -> list[NodeSpec]:
    """Updates of the turns whose summary window holds the new one, and HAS_MESSAGE for turns
    not yet in the Conversation."""
    turns = [*earlier, me, *later]
    lines = [t.line for t in turns]
    i = len(earlier)
    specs: dict[str, NodeSpec] = {}
    for j in range(max(0, i - CONTEXT_AFTER), min(len(turns), i + CONTEXT_BEFORE + 1)):
        summary = context_summary(lines, j)
        if j != i and summary is not None and summary != turns[j].summary:
            specs[turns[j].node_id] = NodeSpec(["Message"], {"summary": summary}, node_id=turns[j].node_id)
    if conversation is not None:
        for node_id in unlinked:
            spec = specs.setdefault(node_id, NodeSpec(["Message"], {}, node_id=node_id))
            spec.edges = [Edge("HAS_MESSAGE", conversation, "in")]
    return list(specs.values())


@contextmanager
def _session_lock(root: str, session_id: str) -> Iterator[None]:
    with _LOCKS[hash((root, session_id)) % len(_LOCKS)]:
        yield


def append_turn(
    writer: GraphWriter,
    session_id: str,
    *,
    role: str,
    content: str,
    speaker: str | None = None,
    timestamp: str | None = None,
    message_id: str | None = None,
) -> dict[str, Any]:
    """Store one turn of ``session_id`` as a Message in the writer's view (see the module
    docstring). Returns {"messageId", "nodeId", "sessionId", "conversationId" (None while the
    session has one turn), "seq", "created", "embedded"}. Bad input raises ValidationError
    naming the field; nothing is written."""
    started = time.perf_counter()
    sid = check_session_id(session_id)
    role = _role(role)
    text = _text(content, "content", MAX_CONTENT)
    who = _name(speaker, "speaker", MAX_SPEAKER) if speaker is not None else None
    at = to_instant(timestamp, "timestamp") if timestamp is not None else None
    mid = _name(message_id, "messageId", MAX_MESSAGE_ID) if message_id is not None else uuid.uuid4().hex
    root = _id_root(writer)
    node_id = message_node_id(root, sid, mid)
    with _session_lock(root, sid):
        out, updated, new_conversation = _append_locked(writer, sid, node_id, mid, role, text, who, at)
    log_line(
        "conversation",
        op="append",
        accountId=short(writer.account.account_id),
        session=short(sid),
        messageId=short(mid),
        seq=out["seq"],
        created=out["created"],
        conversation=short(out["conversationId"]) if out["conversationId"] else None,
        new_conversation=new_conversation,
        neighbours=updated,
        embedded=out["embedded"],
        ms=round((time.perf_counter() - started) * 1000),
    )
    return out


def _append_locked(
    writer: GraphWriter,
    sid: str,
    node_id: str,
    mid: str,
    role: str,
    text: str,
    speaker: str | None,
    at: str | None,
) -> tuple[dict[str, Any], int, bool]:
    state = _session_state(writer, sid, node_id)
    own = state.own
    if own is not None and own.get("seq") is not None:
        seq = int(own["seq"])  # a re-append keeps its place
    else:
        seq = 0 if state.max_seq is None else int(state.max_seq) + 1
    at = at or (own or {}).get("timestamp") or now_instant()
    conversation = _conversation_of(writer, sid)
    specs: list[NodeSpec] = []
    new_conversation = conversation is None and state.others > 0  # the session's second turn
    if new_conversation:
        conversation = conversation_node_id(_id_root(writer), sid)
        first = min(t for t in (state.first_at, at) if t)
        specs.append(
            NodeSpec(
                ["Conversation"],
                {"sessionId": sid, "title": f"Conversation {sid[:8]}", "startedAt": first},
                node_id=conversation,
                scope=record_scope(writer.caller),
            )
        )
    earlier, later = _neighbours(writer, sid, node_id, at, seq)
    line = transcript_text(speaker, text)
    me = _Turn(node_id, line, None)
    props: dict[str, Any] = {
        "messageId": mid,
        "sessionId": sid,
        "role": role,
        "speaker": speaker,
        "content": line,
        "timestamp": at,
        "seq": seq,
        "summary": context_summary([t.line for t in (*earlier, me, *later)], len(earlier)),
    }
    edges = [Edge("HAS_MESSAGE", conversation, "in")] if conversation else []
    if own is None and earlier:
        edges.append(Edge("NEXT", earlier[-1].node_id, "in"))
    neighbours = _neighbour_specs(earlier, me, later, conversation, state.unlinked)
    specs.append(NodeSpec(["Message"], props, edges=edges, node_id=node_id))
    specs.extend(neighbours)
    results = writer.write_many(specs)
    mine = next(r for r in results if r.node_id == node_id)
    out = {
        "messageId": mid,
        "nodeId": node_id,
        "sessionId": sid,
        "conversationId": conversation,
        "seq": seq,
        "created": mine.created,
        "embedded": mine.embedded,
    }
    return out, len(neighbours), new_conversation

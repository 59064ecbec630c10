"""A thread's state, kept in the graph so that any process can pick the thread up where the
last one stopped (a crash, a restart, another worker):

    (:AgentThread {threadId, memory, control, history, toProcess, step, msgCount, unflushed, updatedAt})

- ``history`` (JSON) holds what the thread has retrieved (the memory's context and recent
  entries, read at the session's start, the context replaced by each one the agent writes) and
  the last ``HISTORY_TURNS`` turns, each cut to ``TURN_CHARS``: a long thread stays bounded,
  and the full turns live on as Messages and entries.
- ``toProcess`` (JSON) is the message the last call was recording and ``step`` how far it got:
  ``received`` (written before anything else), ``recorded`` (its entry is written; a flush is
  still due) or ``done``. A message that arrives while the same one is pending resumes it.
- ``msgCount`` counts the messages recorded in the thread, which the invoker's flush cadence
  reads; ``unflushed`` those recorded since the thread last wrote a context (a session's end
  with none writes no context).

The node's id derives from the view, the memory and the thread id; it is read through the
guards and written through the write primitive like every node.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..conversations.store import check_session_id
from ..db import Database
from ..graph.confine import id_root, record_scope
from ..graph.guards import Caller, node_guard
from ..graph.write import GraphWriter, NodeSpec
from .control import ChatMessage, ControlState
from .spaces import check_memory, derived_id

THREAD_LABEL = "AgentThread"
HISTORY_TURNS = 40
TURN_CHARS = 2000
RETRIEVED_CHARS = 40_000
# Steps of the message a thread is recording (``step``)
RECEIVED, RECORDED, DONE = "received", "recorded", "done"


def thread_node_id(caller: Caller, memory: str, thread_id: str) -> str:
    return derived_id("agentthread", id_root(caller), memory, thread_id)


def _clipped(message: ChatMessage, limit: int) -> ChatMessage:
    if len(message.content) <= limit:
        return message
    return ChatMessage(
        message.role, message.content[: limit - 1] + "…", message.speaker, message.message_id, message.timestamp
    )


@dataclass
class ThreadState:
    thread_id: str
    memory: str
    retrieved: dict[str, ChatMessage] = field(default_factory=dict)  # "context", "entries"
    turns: list[ChatMessage] = field(default_factory=list)
    to_process: ChatMessage | None = None
    control: ControlState | None = None
    step: str = DONE
    msg_count: int = 0
    unflushed: int = 0

    @property
    def history(self) -> list[ChatMessage]:
        """What the model reads: the retrieved blocks, then the kept turns."""
        return [*self.retrieved.values(), *self.turns]

    def retrieve(self, kind: str, content: str) -> None:
        self.retrieved[kind] = _clipped(ChatMessage("system", content), RETRIEVED_CHARS)

    def add_turn(self, message: ChatMessage) -> None:
        self.turns = [*self.turns, _clipped(message, TURN_CHARS)][-HISTORY_TURNS:]

    def pending(self, message: ChatMessage) -> ChatMessage | None:
        """The pending message ``message`` repeats (same id, or no id and the same turn), if any:
        the call that was recording it stopped before it was done."""
        held = self.to_process
        if held is None or self.step == DONE:
            return None
        if message.message_id is not None:
            return held if held.message_id == message.message_id else None
        same = (held.role, held.content, held.speaker, held.timestamp)
        return held if same == (message.role, message.content, message.speaker, message.timestamp) else None

    def recorded(self, message_id: str | None) -> bool:
        """True when a finished message of the kept turns has this id (a replay)."""
        return message_id is not None and any(t.message_id == message_id for t in self.turns)


def load_thread(db: Database, caller: Caller, memory: str, thread_id: str) -> ThreadState:
    """The thread's state in the caller's view; a fresh one when it has none yet."""
    name, tid = check_memory(memory), check_session_id(thread_id, "threadId")
    guard = node_guard(caller, "t")
    rows = db.read(
        f"""
        MATCH (t:{THREAD_LABEL}:Node {{nodeId: $id}}) WHERE {guard.clause}
        RETURN t.history AS history, t.toProcess AS toProcess, t.control AS control, t.step AS step,
               t.msgCount AS msgCount, t.unflushed AS unflushed
        """,
        id=thread_node_id(caller, name, tid),
        **guard.params,
    )
    if not rows:
        return ThreadState(tid, name)
    row = rows[0]
    history: dict[str, Any] = json.loads(row["history"] or "{}")
    pending = json.loads(row["toProcess"]) if row["toProcess"] else None
    turns = [ChatMessage.from_json(t) for t in history.get("turns") or []]
    return ThreadState(
        thread_id=tid,
        memory=name,
        retrieved={k: ChatMessage.from_json(v) for k, v in (history.get("retrieved") or {}).items()},
        turns=turns,
        to_process=ChatMessage.from_json(pending) if pending else None,
        control=ControlState(row["control"]) if row["control"] else None,
        step=str(row["step"] or DONE),
        msg_count=int(row["msgCount"] or 0),
        unflushed=int(row["unflushed"] if row["unflushed"] is not None else len(turns)),
    )


def save_thread(writer: GraphWriter, state: ThreadState) -> None:
    history = {
        "retrieved": {k: m.to_json() for k, m in state.retrieved.items()},
        "turns": [t.to_json() for t in state.turns],
    }
    props = {
        "threadId": state.thread_id,
        "memory": state.memory,
        "control": state.control.value if state.control else None,
        "history": json.dumps(history, ensure_ascii=False),
        "toProcess": json.dumps(state.to_process.to_json(), ensure_ascii=False) if state.to_process else None,
        "step": state.step,
        "msgCount": state.msg_count,
        "unflushed": state.unflushed,
    }
    writer.write(
        NodeSpec(
            [THREAD_LABEL],
            props,
            node_id=thread_node_id(writer.caller, state.memory, state.thread_id),
            scope=record_scope(writer.caller),
        )
    )

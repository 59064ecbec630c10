"""Feed a conversation file through the memory agent, session by session
(``maxy memory-agent run FILE.jsonl`` and ``maxy eval memory-agent``).

The file is the one ``maxy conversation import`` reads. Each conversation is a memory (named
after its ``conversation`` value unless one ``memory`` is given for all) and each of its
sessions a thread, fed in file order through one invoker:

    invoker = MemoryAgentInvoker(MemoryAgent(writer, memory, settings))
    invoker.start_session(thread)
    for m in turns:
        invoker.process_conversation_message(m.role, m.content, thread, speaker=m.speaker)
    invoker.end_session(thread)

A second run of the same file writes nothing new: every turn keeps its message id, and the
agent updates the entry of a message it has recorded before.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config import Settings
from ..conversations.importing import ImportedMessage
from ..graph.write import GraphWriter
from ..logs import log_line, short
from .agent import MemoryAgent
from .invoker import MemoryAgentInvoker
from .spaces import check_memory

_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9._:@-]+")


@dataclass
class RunSummary:
    """What a run wrote; ``modes`` counts the agent's steps by mode (model or degraded) and
    ``reasons`` why a step degraded."""

    memories: list[str] = field(default_factory=list)
    sessions: int = 0
    messages: int = 0
    entries: int = 0
    contexts: int = 0
    modes: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    ms: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "memories": self.memories,
            "sessions": self.sessions,
            "messages": self.messages,
            "entries": self.entries,
            "contexts": self.contexts,
            "modes": dict(self.modes),
            "degradedReasons": dict(self.reasons),
            "ms": self.ms,
        }


def memory_for(conversation: str) -> str:
    """A memory name for a conversation key: characters a name may not hold become ``-``."""
    name = _NOT_IN_NAME.sub("-", conversation.strip()).strip("-")[:128] or "conversation"
    return check_memory(name)


def group_sessions(messages: Sequence[ImportedMessage]) -> dict[str, dict[str, list[ImportedMessage]]]:
    """conversation -> session -> turns, each in file order."""
    grouped: dict[str, dict[str, list[ImportedMessage]]] = {}
    for m in messages:
        grouped.setdefault(m.conversation, {}).setdefault(m.session, []).append(m)
    return grouped


def turn_text(m: ImportedMessage) -> str:
    """The message as the agent sees it: its text, and the caption of an image shared with it."""
    return f"{m.content.strip()} [image: {m.image_caption}]" if m.image_caption else m.content.strip()


def _count(summary: RunSummary, outcome: Any) -> None:
    if not isinstance(outcome, dict):
        return
    if outcome.get("entry"):
        summary.entries += 1
    if (outcome.get("context") or {}).get("written"):
        summary.contexts += 1
    if outcome.get("mode"):
        summary.modes[str(outcome["mode"])] += 1
    if outcome.get("mode") == "degraded" and outcome.get("reason"):
        summary.reasons[str(outcome["reason"])] += 1


def run_messages(
    writer: GraphWriter,
    settings: Settings,
    messages: Sequence[ImportedMessage],
    *,
    memory: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RunSummary:
    """Feed ``messages`` through the agent (see the module docstring); ``progress(done, total)``
    after each message."""
    started = time.perf_counter()
    fixed = check_memory(memory) if memory is not None else None
    summary = RunSummary()
    total = len(messages)
    for conversation, sessions in group_sessions(messages).items():
        name = fixed or memory_for(conversation)
        if name not in summary.memories:
            summary.memories.append(name)
        invoker = MemoryAgentInvoker(MemoryAgent(writer, name, settings))
        for thread, turns in sessions.items():
            _count(summary, invoker.start_session(thread))
            for m in turns:
                outcome = invoker.process_conversation_message(
                    m.role,
                    turn_text(m),
                    thread,
                    speaker=m.speaker,
                    message_id=m.message_id,
                    timestamp=m.timestamp,
                )
                _count(summary, outcome)
                summary.messages += 1
                if progress is not None:
                    progress(summary.messages, total)
            _count(summary, invoker.end_session(thread))
            summary.sessions += 1
    summary.ms = round((time.perf_counter() - started) * 1000)
    log_line(
        "memory-agent-run",
        accountId=short(writer.account.account_id),
        memories=len(summary.memories),
        sessions=summary.sessions,
        messages=summary.messages,
        entries=summary.entries,
        contexts=summary.contexts,
        degraded=summary.modes.get("degraded", 0),
        ms=summary.ms,
    )
    return summary

"""What the memory agent writes without a model (no API key, or the model failed): an
extractive summary of a turn and a deterministic context document. Pure functions: the same
input always gives the same text.

- The summary is the turn's leading sentences, up to ``SUMMARY_CHARS``, after its date and
  speaker, so the entry is found by who said it and when.
- The context lists the memory's most recent entries (newest first) and the session's open
  questions: question sentences of turns that no later turn of another speaker followed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .control import ChatMessage

SUMMARY_CHARS = 300
CONTEXT_ENTRIES = 20
OPEN_QUESTIONS = 10
QUESTION_CHARS = 300
# A sentence ends at . ! ? (or …) followed by a space; abbreviations may split early, which is harmless here.
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _clip(text: str, limit: int) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters, with … when cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    head = cut.rsplit(" ", 1)[0] if " " in cut else cut
    return head.rstrip(" ,;:") + "…"


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(_one_line(text)) if s]


def who(message: ChatMessage) -> str:
    return message.speaker or message.role


def extractive_summary(message: ChatMessage, limit: int = SUMMARY_CHARS) -> str:
    """``[date] speaker: `` and the turn's leading sentences that fit in ``limit`` characters."""
    prefix = f"[{message.timestamp[:10]}] " if message.timestamp else ""
    prefix += f"{who(message)}: "
    budget = max(limit - len(prefix), 40)
    kept: list[str] = []
    for sentence in sentences(message.content):
        if kept and len(" ".join([*kept, sentence])) > budget:
            break
        kept.append(sentence)
    return prefix + _clip(" ".join(kept), budget)


def extractive_tags(message: ChatMessage) -> dict[str, str]:
    tags = {"role": message.role}
    if message.speaker:
        tags["speaker"] = message.speaker
    if question_sentences(message.content):
        tags["kind"] = "question"
    return tags


def question_sentences(text: str) -> list[str]:
    return [s for s in sentences(text) if s.endswith("?")]


def open_questions(turns: Sequence[ChatMessage], limit: int = OPEN_QUESTIONS) -> list[str]:
    """Question sentences of turns after which no one else spoke, oldest first (the last ``limit``)."""
    found: list[str] = []
    for i, turn in enumerate(turns):
        answered = any(who(later) != who(turn) for later in turns[i + 1 :])
        if not answered:
            found.extend(f"{who(turn)}: {_clip(q, QUESTION_CHARS)}" for q in question_sentences(turn.content))
    return found[-limit:]


def _entry_line(entry: Mapping[str, Any]) -> str:
    summary = _one_line(str(entry.get("summary") or entry.get("rawEntry") or ""))
    return f"- {_clip(summary, SUMMARY_CHARS)}"


def deterministic_context(
    memory: str,
    entries: Sequence[Mapping[str, Any]],
    turns: Sequence[ChatMessage],
    *,
    session_id: str | None = None,
) -> str:
    """The context document written without a model: the memory's recent entries (newest
    first, as ``list_entries`` returns them) and the session's open questions."""
    lines = [f"# Context of {memory}", "", "Written without a model: the recent entries and the open questions."]
    if session_id:
        lines.append(f"Last session: {session_id}")
    lines += ["", "## Recent entries"]
    lines += [_entry_line(e) for e in entries[:CONTEXT_ENTRIES]] or ["- none yet"]
    lines += ["", "## Open questions"]
    lines += [f"- {q}" for q in open_questions(turns)] or ["- none"]
    return "\n".join(lines) + "\n"

"""The memory agent's two model calls: the prompts (built around the rules ``load_prompts()``
serves, attached as they are) and the answers, checked before anything is stored.

``draft_entry`` asks for one ``add_entry`` call about one message, ``draft_context`` for one
``put_context`` call about the whole thread; both force the tool (``maxy.llm.messages_with_tools``)
and raise ``LLMUnavailable`` (with its reason) when the model cannot be used or its answer
cannot be, so the agent falls back to ``degraded``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..config import Settings
from ..llm import LLMUnavailable, messages_with_tools
from .control import ChatMessage

ENTRY_MAX_TOKENS = 600
CONTEXT_MAX_TOKENS = 2000
TURN_CHARS = 2000  # of each earlier turn shown in a prompt; the message being recorded is shown whole
SUMMARY_CHARS = 2000
CONTEXT_CHARS = 20_000
MAX_TAGS = 12
TAG_CHARS = 100
_TAG_KEY = re.compile(r"[^A-Za-z0-9_-]+")

SYSTEM = (
    "You keep the long-term memory of a chat in which a person talks with an AI assistant. You "
    "follow the chat as it happens and write it down through the one tool you are given: an entry "
    "for each message, and now and then a context document that sums up what matters for later. "
    "Write down what the chat says and nothing else: never invent facts, names or dates."
)

ADD_ENTRY_TOOL: dict[str, Any] = {
    "name": "add_entry",
    "description": "Record one message of the conversation as a memory entry.",
    "input_schema": {
        "type": "object",
        "properties": {
            "summary": {"type": "string", "description": "what the message says, readable on its own"},
            "raw_entry": {"type": "string", "description": "the message's text, unchanged"},
            "tags": {
                "type": "object",
                "description": "a few short labels: topic, people, places, dates",
                "additionalProperties": {"type": "string"},
            },
        },
        "required": ["summary", "raw_entry"],
    },
}

PUT_CONTEXT_TOOL: dict[str, Any] = {
    "name": "put_context",
    "description": "Save the memory's context document, replacing the previous version for the next session.",
    "input_schema": {
        "type": "object",
        "properties": {"content": {"type": "string", "description": "the whole context document, in Markdown"}},
        "required": ["content"],
    },
}


@dataclass(frozen=True)
class EntryDraft:
    summary: str
    tags: dict[str, str]


def _attributes(message: ChatMessage) -> str:
    parts = [f'role="{message.role}"']
    if message.speaker:
        parts.append(f'speaker="{message.speaker}"')
    if message.timestamp:
        parts.append(f'time="{message.timestamp}"')
    return " ".join(parts)


def format_history(history: Sequence[ChatMessage]) -> str:
    """One block per message: retrieved context and entries as they are, turns as
    ``role (speaker) at time: text`` (each cut to ``TURN_CHARS``)."""
    if not history:
        return "(nothing yet)"
    blocks = []
    for m in history:
        if m.message_id is None and m.role == "system":
            blocks.append(m.content.strip())
            continue
        head = m.role + (f" ({m.speaker})" if m.speaker else "") + (f" at {m.timestamp}" if m.timestamp else "")
        text = m.content if len(m.content) <= TURN_CHARS else m.content[:TURN_CHARS] + "…"
        blocks.append(f"{head}: {text}")
    return "\n\n".join(blocks)


def add_entry_prompt(
    memory: str, history: Sequence[ChatMessage], message: ChatMessage, prompts: Mapping[str, str]
) -> str:
    return f"""Operation: record one message in the memory "{memory}".

Earlier in this thread (context kept from earlier sessions, recent entries, then the latest turns):
<history>
{format_history(history)}
</history>

The message to record now:
<message {_attributes(message)}>
{message.content}
</message>

Call add_entry once, for this message only. Its summary must make sense without the rest of the
thread: where the history makes clear who "she", "it" or "last week" is, say so. Copy the message's
text unchanged into raw_entry, and give a few short tags.

== Capturing the entry ==
{prompts.get("entry_capture_prompt", "").strip()}

== Writing the summary ==
{prompts.get("summary_prompt", "").strip()}
"""


def put_context_prompt(memory: str, history: Sequence[ChatMessage], prompts: Mapping[str, str]) -> str:
    return f"""Operation: rewrite the context document of the memory "{memory}".

Everything this thread holds: the context kept so far, the recent entries and the latest turns:
<conversation>
{format_history(history)}
</conversation>

Call put_context once, with the whole new document as content. The next session starts from it
alone, so keep what still matters from the context kept so far and add what these turns changed.

== Maintaining the context ==
{prompts.get("context_prompt", "").strip()}
"""


def answer_text(value: object, field: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise LLMUnavailable(f"the answer's {field} is not a non-empty string")
    text = value.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def answer_tags(value: object) -> dict[str, str]:
    """The model's tags as at most ``MAX_TAGS`` short one-line strings (a list reads as topics)."""
    if isinstance(value, list):
        value = {f"tag{i}": v for i, v in enumerate(value)}
    if not isinstance(value, dict):
        return {}
    tags: dict[str, str] = {}
    for key, raw in value.items():
        name = _TAG_KEY.sub("_", str(key)).strip("_")[:64]
        if not name or not isinstance(raw, (str, int, float)) or isinstance(raw, bool):
            continue
        text = " ".join(str(raw).split())[:TAG_CHARS]
        if text:
            tags[name] = text
        if len(tags) == MAX_TAGS:
            break
    return tags


def draft_entry(
    settings: Settings,
    *,
    model: str,
    timeout: float,
    memory: str,
    history: Sequence[ChatMessage],
    message: ChatMessage,
    prompts: Mapping[str, str],
) -> EntryDraft:
    answer = messages_with_tools(
        settings,
        system=SYSTEM,
        prompt=add_entry_prompt(memory, history, message, prompts),
        tool=ADD_ENTRY_TOOL,
        model=model,
        max_tokens=ENTRY_MAX_TOKENS,
        timeout=timeout,
    )
    # the stored raw entry is the message itself, never the model's copy of it
    return EntryDraft(answer_text(answer.get("summary"), "summary", SUMMARY_CHARS), answer_tags(answer.get("tags")))


def draft_context(
    settings: Settings,
    *,
    model: str,
    timeout: float,
    memory: str,
    history: Sequence[ChatMessage],
    prompts: Mapping[str, str],
) -> str:
    answer = messages_with_tools(
        settings,
        system=SYSTEM,
        prompt=put_context_prompt(memory, history, prompts),
        tool=PUT_CONTEXT_TOOL,
        model=model,
        max_tokens=CONTEXT_MAX_TOKENS,
        timeout=timeout,
    )
    return answer_text(answer.get("content"), "content", CONTEXT_CHARS)

"""What drives one call of the memory agent: the control state, and the chat message it
records (kept in a thread's history as plain JSON)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any


class ControlState(Enum):
    START_SESSION = "start_session"
    PROCESS_MESSAGE = "process_message"
    PROCESS_MESSAGE_AND_FLUSH = "process_message_and_flush"
    END_SESSION = "end_session"

    @property
    def processes_message(self) -> bool:
        return self in (ControlState.PROCESS_MESSAGE, ControlState.PROCESS_MESSAGE_AND_FLUSH)


@dataclass(frozen=True)
class ChatMessage:
    """One turn of the conversation (``role`` user, assistant or system), or a retrieved block
    of the thread's history (role ``system``)."""

    role: str
    content: str
    speaker: str | None = None
    message_id: str | None = None
    timestamp: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChatMessage:
        return cls(
            role=str(data.get("role") or "user"),
            content=str(data.get("content") or ""),
            speaker=data.get("speaker"),
            message_id=data.get("message_id"),
            timestamp=data.get("timestamp"),
        )

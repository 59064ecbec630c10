"""The invoker: what a runner talks to. It builds each message, counts the thread's messages
and asks for a flush at every ``FLUSH_EVERY``-th; the count is the thread's own ``msgCount``
in the graph, so a new invoker, or another process, keeps the cadence of the thread.

A runner, from Python (the account and pins from the environment, as ``maxy.Memory.from_env``):

    from maxy.accounts import validate_account
    from maxy.config import load_settings
    from maxy.db import Database
    from maxy.embeddings import get_embedder
    from maxy.graph.write import GraphWriter
    from maxy.memoryagent.agent import MemoryAgent
    from maxy.memoryagent.invoker import MemoryAgentInvoker

    settings = load_settings()
    account = validate_account(settings.data_root, settings.ACCOUNT_ID)
    with Database(settings) as db:
        writer = GraphWriter(db, account, get_embedder(settings))
        invoker = MemoryAgentInvoker(MemoryAgent(writer, "support-42", settings))
        invoker.start_session("support-42/2024-03-01")
        for m in session["messages"]:
            invoker.process_conversation_message(m["role"], m["content"], "support-42/2024-03-01")
        invoker.end_session("support-42/2024-03-01")

Each call returns what the agent did (``MemoryAgent.invoke``).
"""

from __future__ import annotations

from typing import Any

from .agent import MemoryAgent
from .control import ChatMessage, ControlState

FLUSH_EVERY = 6


class MemoryAgentInvoker:
    def __init__(self, agent: MemoryAgent):
        self.agent = agent

    def start_session(self, thread_id: str) -> dict[str, Any]:
        return self.agent.invoke(ControlState.START_SESSION, thread_id)

    def process_conversation_message(
        self,
        role: str,
        content: str,
        thread_id: str,
        *,
        speaker: str | None = None,
        message_id: str | None = None,
        timestamp: str | None = None,
    ) -> dict[str, Any]:
        """Record one turn; every ``FLUSH_EVERY``-th message of the thread also flushes."""
        message = ChatMessage(role=role, content=content, speaker=speaker, message_id=message_id, timestamp=timestamp)
        number = self.agent.thread(thread_id).msg_count + 1
        control = ControlState.PROCESS_MESSAGE_AND_FLUSH if number % FLUSH_EVERY == 0 else ControlState.PROCESS_MESSAGE
        return self.agent.invoke(control, thread_id, message)

    def end_session(self, thread_id: str) -> dict[str, Any]:
        return self.agent.invoke(ControlState.END_SESSION, thread_id)

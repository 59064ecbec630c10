"""The memory agent: one call per control state, on a thread whose state lives in the graph.

- ``start_session``: the memory's latest context and its recent entries go straight into the
  thread's history (direct reads, no model).
- ``process_message``: the turn is appended to the session's conversation (the thread id is
  its session), then recorded as one entry linked to that Message: the model writes the
  summary through a forced ``add_entry`` call.
- ``process_message_and_flush``: the same, then the consistency barrier and a new context
  document through a forced ``put_context`` call.
- ``end_session``: the barrier and the context, as a flush, when a message was recorded since
  the thread's last context (else the result names the current version).

Without an API key, or when the model fails (timeout, HTTP error, an answer that does not make
the call asked for), the step is written without it: an extractive summary, a deterministic
context. Nothing is dropped either way, and the call's one ``[memory-agent] op=invoke`` line
says ``mode=degraded`` and why. Every step is idempotent and checkpointed in the thread
(``threads``), so a call cut short is finished by the next call, in this process or another
(the same message resumes it; another one first records the message left behind), and a
message already recorded (its entry is in the memory) is not recorded again. One thread is
driven by one caller at a time.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..config import Settings
from ..conversations.append import append_turn
from ..conversations.store import check_session_id
from ..errors import ValidationError
from ..graph.write import GraphWriter
from ..llm import LLMUnavailable
from ..logs import log_line, short
from .consistency import await_consistency
from .contexts import get_context, put_context
from .control import ChatMessage, ControlState
from .degraded import CONTEXT_ENTRIES, deterministic_context, extractive_summary, extractive_tags
from .entries import add_entry, has_entry, list_entries
from .model import draft_context, draft_entry
from .prompts import load_prompts
from .spaces import check_memory
from .threads import DONE, RECEIVED, RECORDED, ThreadState, load_thread, save_thread

START_ENTRIES = 10  # recent entries read into the history when a session starts


@dataclass
class _Call:
    """What one invoke did, reported in its result and its log line."""

    control: ControlState
    state: ThreadState
    mode: str = "direct"  # direct (no model needed), model, degraded or replay
    reason: str | None = None
    entry: str | None = None
    message: str | None = None
    context: dict[str, Any] | None = None
    barrier: dict[str, Any] | None = None
    resumed: str | None = None  # the step a call cut short had reached

    def used_model(self) -> None:
        if self.mode == "direct":
            self.mode = "model"

    def degraded(self, reason: str) -> None:
        self.mode = "degraded"
        self.reason = self.reason or reason


class MemoryAgent:
    """Turns one memory's conversation threads into entries and context documents; see the
    module docstring. ``prompts`` defaults to the memory-agent plugin's (``load_prompts``),
    ``model`` to ``MAXY_AGENT_MODEL``."""

    def __init__(
        self,
        writer: GraphWriter,
        memory: str,
        settings: Settings,
        *,
        prompts: Mapping[str, str] | None = None,
        model: str | None = None,
    ):
        self.writer = writer
        self.memory = check_memory(memory)
        self.settings = settings
        self.prompts = dict(prompts) if prompts is not None else load_prompts()
        self.model = model or settings.MAXY_AGENT_MODEL
        self.timeout = settings.MAXY_AGENT_TIMEOUT_S

    def thread(self, thread_id: str) -> ThreadState:
        """The thread's state as stored (fresh when it has none)."""
        return load_thread(self.writer.db, self.writer.caller, self.memory, thread_id)

    def invoke(
        self, control: ControlState | str, thread_id: str, to_process: ChatMessage | None = None
    ) -> dict[str, Any]:
        """Run one control state on the thread. Returns {"control", "threadId", "memory", "mode"
        (direct, model, degraded or replay), "reason", "entry" (the entry written), "message" (its
        Message), "context" ({"contextId", "version", "written"}: the context written, or the
        latest one with written false when it was unchanged), "barrier",
        "msgCount", "resumed"}."""
        started = time.perf_counter()
        try:
            control = ControlState(control)
        except ValueError:
            raise ValidationError(
                "control", f"one of {', '.join(c.value for c in ControlState)} (got {control!r})"
            ) from None
        tid = check_session_id(thread_id, "threadId")
        if control.processes_message != (to_process is not None):
            need = "a message" if control.processes_message else "no message"
            raise ValidationError("toProcess", f"{control.value} takes {need}")
        call = _Call(control, self.thread(tid))
        if control is ControlState.START_SESSION:
            self._start(call)
        elif to_process is not None:
            self._process(call, to_process)
        else:
            self._end(call)
        state = call.state
        log_line(
            "memory-agent",
            op="invoke",
            control=control.value,
            memory=self.memory,
            thread=short(tid, 16),
            mode=call.mode,
            reason=call.reason,
            entry=short(call.entry, 17) if call.entry else None,
            context=call.context["version"] if call.context else None,
            contextWritten=call.context["written"] if call.context else None,
            consistent=call.barrier["consistent"] if call.barrier else None,
            barrierError=call.barrier.get("error") if call.barrier else None,
            resumed=call.resumed,
            msgs=state.msg_count,
            turns=len(state.turns),
            ms=round((time.perf_counter() - started) * 1000),
        )
        return {
            "control": control.value,
            "threadId": tid,
            "memory": self.memory,
            "mode": call.mode,
            "reason": call.reason,
            "entry": call.entry,
            "message": call.message,
            "context": call.context,
            "barrier": call.barrier,
            "msgCount": state.msg_count,
            "resumed": call.resumed,
        }

    # -- control states -----------------------------------------------------------------
    def _start(self, call: _Call) -> None:
        state, caller = call.state, self.writer.caller
        context = get_context(self.writer.db, caller, self.memory)
        if context is not None:
            state.retrieve(
                "context", f"Context kept from earlier sessions (version {context['version']}):\n{context['content']}"
            )
        entries = list_entries(self.writer.db, caller, self.memory, limit=START_ENTRIES)
        if entries:
            lines = "\n".join(f"- {e['summary']}" for e in entries)
            state.retrieve("entries", f"Recent entries of this memory, newest first:\n{lines}")
        state.control = ControlState.START_SESSION
        save_thread(self.writer, state)

    def _process(self, call: _Call, message: ChatMessage) -> None:
        state = call.state
        held = state.pending(message)
        if held is None:
            self._finish_left(call)
        if held is None and self._recorded(state, message.message_id):
            call.mode = "replay"  # recorded by an earlier call: nothing to do again
            return
        if held is not None:
            message, call.resumed = held, state.step
        else:
            if message.message_id is None:
                message = replace(message, message_id=uuid.uuid4().hex)
            state.to_process, state.step = message, RECEIVED
        state.control = call.control
        if state.step == RECEIVED:
            save_thread(self.writer, state)  # from here on, a call cut short is resumed, not repeated
            self._record(call, message)
            state.add_turn(message)
            state.step = RECORDED
        if call.control is ControlState.PROCESS_MESSAGE_AND_FLUSH:
            save_thread(self.writer, state)
            self._flush(call)
        state.step = DONE
        state.msg_count += 1
        save_thread(self.writer, state)

    def _finish_left(self, call: _Call) -> None:
        """Record the message a call cut short left behind, if any, before another call's work
        (its flush, if one was due, is left to the next)."""
        state, left = call.state, call.state.to_process
        if left is None or state.step == DONE:
            return
        call.resumed = state.step
        if state.step == RECEIVED:
            self._record(call, left)
            state.add_turn(left)
        state.step = DONE
        state.msg_count += 1
        save_thread(self.writer, state)

    def _end(self, call: _Call) -> None:
        self._finish_left(call)
        state = call.state
        state.control = ControlState.END_SESSION
        if state.unflushed:
            self._flush(call)
        else:  # nothing recorded since the last context: it is current
            latest = get_context(self.writer.db, self.writer.caller, self.memory)
            if latest is not None:
                call.context = {"contextId": latest["contextId"], "version": latest["version"], "written": False}
        save_thread(self.writer, state)

    def _recorded(self, state: ThreadState, message_id: str | None) -> bool:
        """The message has its entry already: among the kept turns, else in the graph (a
        thread longer than its kept history, fed again from the top)."""
        if message_id is None:
            return False
        return state.recorded(message_id) or has_entry(
            self.writer.db, self.writer.caller, self.memory, state.thread_id, message_id
        )

    # -- steps --------------------------------------------------------------------------
    def _record(self, call: _Call, message: ChatMessage) -> None:
        """Append the turn, then write its entry (the model's summary, else an extractive one)."""
        state = call.state
        turn = append_turn(
            self.writer,
            state.thread_id,
            role=message.role,
            content=message.content,
            speaker=message.speaker,
            timestamp=message.timestamp,
            message_id=message.message_id,
        )
        summary, tags = extractive_summary(message), extractive_tags(message)
        if call.mode != "degraded":
            try:
                draft = draft_entry(
                    self.settings,
                    model=self.model,
                    timeout=self.timeout,
                    memory=self.memory,
                    history=state.history,
                    message=message,
                    prompts=self.prompts,
                )
                summary, tags = draft.summary, draft.tags
                call.used_model()
            except LLMUnavailable as err:
                call.degraded(err.reason)
        entry = add_entry(
            self.writer,
            self.memory,
            summary=summary,
            raw_entry=message.content,
            tags=tags,
            role=message.role,
            session_id=state.thread_id,
            message_id=message.message_id,
        )
        call.entry, call.message = entry["entryId"], turn["nodeId"]
        state.unflushed += 1

    def _flush(self, call: _Call) -> None:
        """The barrier, then a new context (the model's, else the deterministic one)."""
        state = call.state
        call.barrier = await_consistency(self.writer, self.memory)
        content = None
        if call.mode != "degraded":  # a model that just failed is not asked again in the same call
            try:
                content = draft_context(
                    self.settings,
                    model=self.model,
                    timeout=self.timeout,
                    memory=self.memory,
                    history=state.history,
                    prompts=self.prompts,
                )
                call.used_model()
            except LLMUnavailable as err:
                call.degraded(err.reason)
        if content is None:
            entries = list_entries(self.writer.db, self.writer.caller, self.memory, limit=CONTEXT_ENTRIES)
            content = deterministic_context(self.memory, entries, state.turns, session_id=state.thread_id)
        written = put_context(self.writer, self.memory, content, session_id=state.thread_id)
        call.context = {key: written[key] for key in ("contextId", "version", "written")}
        state.retrieve("context", f"Context kept so far (version {written['version']}):\n{content}")
        state.unflushed = 0

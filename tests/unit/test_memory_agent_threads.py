"""A memory-agent thread's state without a database: the history stays bounded, a pending
message is recognised when it comes again (by id, or by its turn when it has none), and a
finished one is a replay."""

from __future__ import annotations

from maxy.memoryagent.control import ChatMessage
from maxy.memoryagent.threads import DONE, HISTORY_TURNS, RECEIVED, RECORDED, RETRIEVED_CHARS, TURN_CHARS, ThreadState


def test_the_history_keeps_the_retrieved_blocks_and_the_last_turns_each_cut() -> None:
    state = ThreadState("t1", "ada")
    state.retrieve("context", "c" * (RETRIEVED_CHARS + 10))
    state.retrieve("entries", "- one")
    for i in range(HISTORY_TURNS + 15):
        state.add_turn(ChatMessage("user", f"turn {i} " + "x" * (TURN_CHARS if i == 54 else 0), message_id=f"m{i}"))
    assert len(state.turns) == HISTORY_TURNS and state.turns[0].message_id == "m15"
    assert len(state.turns[-1].content) == TURN_CHARS and state.turns[-1].content.endswith("…")
    history = state.history
    assert [m.role for m in history[:2]] == ["system", "system"] and len(history) == HISTORY_TURNS + 2
    assert len(history[0].content) == RETRIEVED_CHARS
    state.retrieve("context", "newer")  # a new context replaces the old one in place
    assert [m.content for m in state.history[:2]] == ["newer", "- one"]


def test_a_pending_message_is_known_by_its_id_or_by_its_turn() -> None:
    held = ChatMessage("user", "hello", speaker="Ada", message_id="auto-1")
    state = ThreadState("t1", "ada", to_process=held, step=RECEIVED)
    assert state.pending(ChatMessage("user", "hello", speaker="Ada")) == held  # no id: the same turn
    assert state.pending(ChatMessage("user", "hello", speaker="Bob")) is None
    assert state.pending(ChatMessage("user", "other", message_id="auto-1")) == held  # the id decides
    assert state.pending(ChatMessage("user", "hello", speaker="Ada", message_id="m9")) is None
    state.step = RECORDED
    assert state.pending(ChatMessage("user", "hello", speaker="Ada")) == held
    state.step = DONE
    assert state.pending(ChatMessage("user", "hello", speaker="Ada")) is None


def test_a_finished_message_with_an_id_is_a_replay() -> None:
    state = ThreadState("t1", "ada")
    state.add_turn(ChatMessage("user", "hello", message_id="m1"))
    assert state.recorded("m1") and not state.recorded("m2") and not state.recorded(None)

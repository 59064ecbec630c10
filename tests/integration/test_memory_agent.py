"""The memory agent and its invoker against the real Neo4j and a real local server speaking the
Messages API (tests/fake_anthropic.py): each control state, the flush cadence, a process killed
between appending a turn and recording it, a new agent on the same thread, and every way the
model can fail (each degrading to the extractive summary and the deterministic context,
nothing lost, the reason in the call's one log line)."""

from __future__ import annotations

import importlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
from typing import Any

import pytest
from maxy.config import load_settings
from maxy.errors import ValidationError
from maxy.graph.guards import Caller
from maxy.graph.schema import list_indexes
from maxy.graph.write import GraphWriter
from maxy.memoryagent import add_entry, consistency, get_context, list_entries, load_prompts, put_context
from maxy.memoryagent.agent import MemoryAgent
from maxy.memoryagent.control import ChatMessage, ControlState
from maxy.memoryagent.invoker import FLUSH_EVERY, MemoryAgentInvoker
from maxy.memoryagent.threads import DONE, HISTORY_TURNS, RECEIVED

from tests.fake_anthropic import FakeAnthropic
from tests.plugins_fixture.helpers import REPO, child_env

MEMORY = "ada"
THREAD = "ada/2024-03-01"
TURNS = [
    ("user", "Ada", "The Globex invoice for February is wrong: it charges us twice for the audit."),
    ("assistant", "Maxy", "I have flagged it for billing. Do you want a credit note or a refund?"),
    ("user", "Ada", "A refund, please, to the card ending 4242."),
    ("assistant", "Maxy", "Done: the refund should arrive within five working days."),
    ("user", "Ada", "Thanks. Also, our new office in Leeds opens on 1 April."),
    ("assistant", "Maxy", "Noted. Should invoices go to the Leeds address from April?"),
    ("user", "Ada", "Yes, from the April invoice on."),
]


@pytest.fixture()
def llm(monkeypatch):
    importlib.import_module("anthropic")  # imported once, here, never inside a timed call
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        yield fake


@pytest.fixture()
def writer(db, account, embedder) -> GraphWriter:
    return GraphWriter(db, account, embedder)


def _agent(writer: GraphWriter, **overrides: Any) -> MemoryAgent:
    return MemoryAgent(writer, MEMORY, load_settings(ANTHROPIC_API_KEY="test-key", **overrides))


def _message(i: int, *, with_id: bool = True) -> ChatMessage:
    role, speaker, content = TURNS[i % len(TURNS)]
    return ChatMessage(role, content, speaker=speaker, message_id=f"m{i}" if with_id else None)


def _feed(invoker: MemoryAgentInvoker, numbers: range) -> list[dict[str, Any]]:
    out = []
    for i in numbers:
        m = _message(i)
        out.append(
            invoker.process_conversation_message(m.role, m.content, THREAD, speaker=m.speaker, message_id=m.message_id)
        )
    return out


def _entries(db: Any, account_id: str) -> list[dict[str, Any]]:
    """Every MemoryEntry of the account, in seq order, with the Message it records."""
    return db.read(
        """
        MATCH (e:MemoryEntry {accountId: $acc})
        OPTIONAL MATCH (e)-[:RECORDS]->(m:Message)
        RETURN e.nodeId AS entryId, e.summary AS summary, e.rawEntry AS rawEntry, e.tags AS tags, e.role AS role,
               e.sessionId AS sessionId, e.messageId AS messageId, e.seq AS seq,
               m.nodeId AS message, m.messageId AS recordedId, m.content AS recordedContent
        ORDER BY e.seq
        """,
        acc=account_id,
    )


def _count(db: Any, account_id: str, label: str) -> int:
    return int(db.read(f"MATCH (n:{label} {{accountId: $acc}}) RETURN count(n) AS n", acc=account_id)[0]["n"])


def _calls(fake: FakeAnthropic) -> list[str]:
    return [str((r["body"].get("tool_choice") or {}).get("name")) for r in fake.requests]


def _invoke_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("[memory-agent] op=invoke ")]


# ---------------------------------------------------------------------------------------
# the control states
def test_start_session_reads_the_previous_context_and_recent_entries_without_a_model(
    llm, writer, db, account, caplog
) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    for i in range(12):  # an earlier session of the same memory
        add_entry(
            writer, MEMORY, summary=f"earlier fact {i}", raw_entry=f"fact {i}", session_id="old", message_id=f"o{i}"
        )
    put_context(writer, MEMORY, "Ada runs Globex's account. Open: the audit fee.", session_id="old")
    agent = _agent(writer)
    out = agent.invoke(ControlState.START_SESSION, THREAD)
    assert llm.requests == []
    assert (out["mode"], out["reason"], out["entry"], out["context"], out["msgCount"]) == (
        "direct",
        None,
        None,
        None,
        0,
    )
    history = agent.thread(THREAD).history
    assert [m.role for m in history] == ["system", "system"]
    assert (
        history[0].content
        == "Context kept from earlier sessions (version 1):\nAda runs Globex's account. Open: the audit fee."
    )
    lines = history[1].content.splitlines()
    assert lines[1:] == [f"- earlier fact {i}" for i in range(11, 1, -1)]  # the ten most recent, newest first
    [line] = _invoke_lines(caplog)
    assert line.startswith(
        f"[memory-agent] op=invoke control=start_session memory={MEMORY} thread={THREAD[:16]} mode=direct"
    )

    # the first session of a memory starts with an empty history
    other = MemoryAgent(writer, "bob", load_settings())
    other.invoke("start_session", "bob-1")
    assert other.thread("bob-1").history == [] and llm.requests == []


def test_process_message_appends_the_turn_and_records_one_entry_through_add_entry(
    llm, writer, db, account, caplog
) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    agent = _agent(writer)
    agent.invoke(ControlState.START_SESSION, THREAD)
    msg = ChatMessage("user", TURNS[0][2], speaker="Ada", message_id="m0", timestamp="2024-03-01T10:30:00+01:00")
    out = agent.invoke(ControlState.PROCESS_MESSAGE, THREAD, msg)

    [request] = llm.requests
    body = request["body"]
    assert body["model"] == "claude-haiku-4-5"
    assert body["tool_choice"] == {"type": "tool", "name": "add_entry"} and [t["name"] for t in body["tools"]] == [
        "add_entry"
    ]
    prompt = body["messages"][0]["content"]
    assert f'<message role="user" speaker="Ada" time="2024-03-01T10:30:00+01:00">\n{TURNS[0][2]}\n</message>' in prompt
    prompts = load_prompts()
    assert prompts["entry_capture_prompt"].strip() in prompt and prompts["summary_prompt"].strip() in prompt
    assert prompts["context_prompt"].strip() not in prompt and "memory" in body["system"]

    [entry] = _entries(db, account.account_id)
    assert entry["summary"] == "Summary: " + " ".join(TURNS[0][2].split()[:12])  # the model's summary
    assert entry["rawEntry"] == TURNS[0][2] and entry["tags"] == ["topic:the"] and entry["role"] == "user"
    assert (entry["sessionId"], entry["messageId"], entry["recordedId"]) == (THREAD, "m0", "m0")
    assert entry["recordedContent"] == f"Ada: {TURNS[0][2]}"  # the Message conversation-append stored
    assert (out["entry"], out["message"], out["mode"], out["reason"]) == (
        entry["entryId"],
        entry["message"],
        "model",
        None,
    )
    assert out["context"] is None and out["msgCount"] == 1 and _count(db, account.account_id, "MemoryContext") == 0

    state = agent.thread(THREAD)
    assert (state.step, state.msg_count, state.control) == (DONE, 1, ControlState.PROCESS_MESSAGE)
    assert [t.message_id for t in state.turns] == ["m0"] and state.turns[0].speaker == "Ada"
    [line] = _invoke_lines(caplog)[1:]
    assert (
        f"control=process_message memory={MEMORY} thread={THREAD[:16]} mode=model reason=none "
        f"entry={entry['entryId'][:17]} context=none contextWritten=none consistent=none barrierError=none "
        "resumed=none msgs=1 turns=1 ms="
    ) in line

    # the next message is recorded with the first one in its history
    agent.invoke(ControlState.PROCESS_MESSAGE, THREAD, _message(1))
    second_prompt = llm.requests[1]["body"]["messages"][0]["content"]
    assert f"user (Ada) at 2024-03-01T10:30:00+01:00: {TURNS[0][2]}" in second_prompt.split("<message")[0]
    assert [e["messageId"] for e in _entries(db, account.account_id)] == ["m0", "m1"]


def test_the_flush_variant_records_then_waits_for_consistency_then_puts_a_context(llm, writer, db, account) -> None:
    agent = _agent(writer)
    agent.invoke(ControlState.START_SESSION, THREAD)
    agent.invoke(ControlState.PROCESS_MESSAGE, THREAD, _message(0))
    out = agent.invoke(ControlState.PROCESS_MESSAGE_AND_FLUSH, THREAD, _message(1))
    assert _calls(llm) == ["add_entry", "add_entry", "put_context"]
    prompt = llm.requests[-1]["body"]["messages"][0]["content"]
    conversation = prompt.split("<conversation>\n")[1].split("\n</conversation>")[0]
    assert TURNS[0][2] in conversation and TURNS[1][2] in conversation
    assert load_prompts()["context_prompt"].strip() in prompt

    assert out["barrier"]["consistent"] is True and out["barrier"]["entries"] == 2
    assert out["mode"] == "model" and out["context"]["version"] == 1 and out["entry"]
    latest = get_context(db, Caller(account.account_id), MEMORY)
    assert latest is not None and latest["contextId"] == out["context"]["contextId"]
    assert latest["content"] == "Context: " + " ".join(conversation.split()[:40]) and latest["sessionId"] == THREAD
    # the thread now reads its own latest context, not the one it started from
    state = agent.thread(THREAD)
    assert state.retrieved["context"].content.startswith("Context kept so far (version 1):\nContext: ")
    assert (state.step, state.msg_count) == (DONE, 2)


def test_end_session_flushes_and_an_empty_session_writes_no_context(llm, writer, db, account) -> None:
    invoker = MemoryAgentInvoker(_agent(writer))
    invoker.start_session(THREAD)
    assert invoker.end_session(THREAD)["context"] is None and llm.requests == []

    invoker.start_session(THREAD)
    _feed(invoker, range(2))
    out = invoker.end_session(THREAD)
    assert _calls(llm) == ["add_entry", "add_entry", "put_context"]
    assert out["mode"] == "model" and out["context"]["version"] == 1 and out["barrier"]["consistent"] is True
    assert out["control"] == "end_session" and out["entry"] is None and out["msgCount"] == 2
    assert _count(db, account.account_id, "MemoryContext") == 1

    # the next session starts from the context this one left
    invoker.start_session("ada/2024-03-08")
    state = invoker.agent.thread("ada/2024-03-08")
    assert state.retrieved["context"].content.startswith("Context kept from earlier sessions (version 1):\nContext: ")
    assert state.turns == [] and state.msg_count == 0


def test_end_session_right_after_a_flush_writes_no_second_context(llm, writer, db, account) -> None:
    invoker = MemoryAgentInvoker(_agent(writer))
    invoker.start_session(THREAD)
    flushed = _feed(invoker, range(FLUSH_EVERY))[-1]
    assert flushed["context"] == {**flushed["context"], "version": 1, "written": True}
    asked = len(llm.requests)
    out = invoker.end_session(THREAD)
    # nothing was recorded since: no model call, no barrier, and the result names the current version
    assert len(llm.requests) == asked and out["barrier"] is None
    assert out["context"] == {"contextId": flushed["context"]["contextId"], "version": 1, "written": False}
    assert _count(db, account.account_id, "MemoryContext") == 1
    # a message after the flush is flushed by the session's end
    _feed(invoker, range(FLUSH_EVERY, FLUSH_EVERY + 1))
    assert invoker.end_session(THREAD)["context"]["version"] == 2
    assert invoker.end_session(THREAD)["context"]["written"] is False
    assert _count(db, account.account_id, "MemoryContext") == 2


def test_a_long_thread_fed_again_is_not_recorded_again(writer, db, account, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    settings = load_settings(ANTHROPIC_API_KEY="")
    invoker = MemoryAgentInvoker(MemoryAgent(writer, MEMORY, settings))
    count = HISTORY_TURNS + 3  # longer than the history the thread keeps
    invoker.start_session(THREAD)
    _feed(invoker, range(count))
    invoker.end_session(THREAD)
    contexts = _count(db, account.account_id, "MemoryContext")
    again = MemoryAgentInvoker(MemoryAgent(writer, MEMORY, settings))  # the runner restarted on the same file
    again.start_session(THREAD)
    replays = _feed(again, range(count))
    assert {o["mode"] for o in replays} == {"replay"} and all(o["context"] is None for o in replays)
    assert again.end_session(THREAD)["context"]["written"] is False
    assert again.agent.thread(THREAD).msg_count == count
    assert len(_entries(db, account.account_id)) == count and _count(db, account.account_id, "Message") == count
    assert _count(db, account.account_id, "MemoryContext") == contexts


def test_a_schema_without_the_entries_index_is_named_in_the_flush_line(
    llm, writer, db, account, caplog, monkeypatch
) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    older = [i for i in list_indexes(db) if i.name != consistency.VECTOR_INDEX]
    monkeypatch.setattr(consistency, "list_indexes", lambda _db: older)
    agent = _agent(writer)
    agent.invoke(ControlState.START_SESSION, THREAD)
    started = time.perf_counter()
    out = agent.invoke(ControlState.PROCESS_MESSAGE_AND_FLUSH, THREAD, _message(0))
    assert time.perf_counter() - started < 10  # no waiting out the barrier's timeout
    assert out["barrier"]["consistent"] is False and "maxy schema apply" in out["barrier"]["error"]
    assert out["entry"] and out["context"]["written"]  # nothing lost: the entry and the context are written
    line = _invoke_lines(caplog)[-1]
    assert ' consistent=false barrierError="the vector index memory_entry_embedding on MemoryEntry is missing;' in line


def test_a_message_is_required_exactly_where_one_is_processed(llm, writer) -> None:
    agent = _agent(writer)
    with pytest.raises(ValidationError, match="toProcess: process_message takes a message"):
        agent.invoke(ControlState.PROCESS_MESSAGE, THREAD)
    with pytest.raises(ValidationError, match="toProcess: end_session takes no message"):
        agent.invoke(ControlState.END_SESSION, THREAD, _message(0))
    with pytest.raises(ValidationError, match="control: one of start_session"):
        agent.invoke("flush", THREAD)
    with pytest.raises(ValidationError, match="threadId"):
        agent.invoke(ControlState.START_SESSION, "")
    assert llm.requests == []


# ---------------------------------------------------------------------------------------
# the cadence, and a new agent on the same thread
def test_every_sixth_message_flushes_and_the_count_survives_a_new_agent(llm, writer, db, account) -> None:
    invoker = MemoryAgentInvoker(_agent(writer))
    invoker.start_session(THREAD)
    first = _feed(invoker, range(4))
    # another invoker and agent (a restarted process) carries on with the thread's count
    invoker = MemoryAgentInvoker(_agent(writer))
    rest = _feed(invoker, range(4, 13))
    outcomes = first + rest
    flushed = [i + 1 for i, o in enumerate(outcomes) if o["context"]]
    assert FLUSH_EVERY == 6 and flushed == [6, 12]
    assert [o["control"] for o in outcomes].count("process_message_and_flush") == 2
    assert [o["msgCount"] for o in outcomes] == list(range(1, 14))
    assert _calls(llm).count("put_context") == 2 and _calls(llm).count("add_entry") == 13
    assert [o["context"]["version"] for o in outcomes if o["context"]] == [1, 2]
    assert [e["messageId"] for e in _entries(db, account.account_id)] == [f"m{i}" for i in range(13)]
    # the history the fifth message was recorded with held the four turns the first agent recorded
    fifth = llm.requests[4]["body"]["messages"][0]["content"].split("<message")[0]
    assert all(TURNS[i][2] in fifth for i in range(4))


def test_a_message_fed_again_is_not_recorded_again(llm, writer, db, account, caplog) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    invoker = MemoryAgentInvoker(_agent(writer))
    invoker.start_session(THREAD)
    _feed(invoker, range(3))
    again = MemoryAgentInvoker(_agent(writer))  # a runner restarted from the top of its file
    replays = _feed(again, range(3))
    assert [o["mode"] for o in replays] == ["replay"] * 3 and all(o["entry"] is None for o in replays)
    assert len(llm.requests) == 3 and len(_entries(db, account.account_id)) == 3
    assert _count(db, account.account_id, "Message") == 3
    assert again.agent.thread(THREAD).msg_count == 3 and len(again.agent.thread(THREAD).turns) == 3
    assert _invoke_lines(caplog)[-1].split(" mode=")[1].startswith("replay reason=none entry=none")


# ---------------------------------------------------------------------------------------
# a process killed between appending a turn and recording it
_CHILD = """
import sys
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
    invoker = MemoryAgentInvoker(MemoryAgent(GraphWriter(db, account, get_embedder(settings)), sys.argv[1], settings))
    role, speaker, content, thread = sys.argv[2:6]
    message_id = sys.argv[6] or None
    invoker.process_conversation_message(role, content, thread, speaker=speaker, message_id=message_id)
"""


def _killed_while_recording(llm: FakeAnthropic, account: Any, data_root: Any, sixth: ChatMessage) -> None:
    """Run the sixth message in a child process and kill it while it waits for its entry's
    summary: its turn is appended, its entry not written."""
    llm.mode, llm.delay_s = "slow", 120.0
    env = child_env(data_root, ACCOUNT_ID=account.account_id)
    env.update(ANTHROPIC_BASE_URL=llm.url, ANTHROPIC_API_KEY="test-key", MAXY_AGENT_TIMEOUT_S="300", LOG_LEVEL="ERROR")
    args = [MEMORY, sixth.role, sixth.speaker or "", sixth.content, THREAD, sixth.message_id or ""]
    child = subprocess.Popen([sys.executable, "-c", _CHILD, *args], env=env, cwd=REPO, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(llm.requests) < 6:  # its add_entry request arrived: the turn is appended
            assert child.poll() is None and time.monotonic() < deadline, "the child never asked for its entry"
            time.sleep(0.1)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    llm.mode = "ok"


@pytest.mark.parametrize(
    "with_id,then",
    [(True, "same"), (False, "same"), (True, "next"), (True, "end")],
    ids=["same-message", "same-message-without-id", "next-message", "end-session"],
)
def test_a_process_killed_before_recording_is_resumed_without_a_duplicate(
    llm, writer, db, account, data_root, with_id: bool, then: str
) -> None:
    invoker = MemoryAgentInvoker(_agent(writer))
    invoker.start_session(THREAD)
    _feed(invoker, range(5))
    sixth = _message(5, with_id=with_id)
    _killed_while_recording(llm, account, data_root, sixth)
    state = invoker.agent.thread(THREAD)
    assert (state.step, state.msg_count, state.to_process.content) == (RECEIVED, 5, sixth.content)
    assert _count(db, account.account_id, "Message") == 6 and len(_entries(db, account.account_id)) == 5

    resumed = MemoryAgentInvoker(_agent(writer))  # a new process picks the thread up
    if then == "same":  # fed the same message again, it finishes it
        out = resumed.process_conversation_message(
            sixth.role, sixth.content, THREAD, speaker=sixth.speaker, message_id=sixth.message_id
        )
        assert out["control"] == "process_message_and_flush" and out["context"] and out["msgCount"] == 6
    elif then == "next":  # fed the next message, it records the one left behind first
        out = _feed(resumed, range(6, 7))[0]
        assert out["msgCount"] == 7 and out["entry"] == _entries(db, account.account_id)[-1]["entryId"]
    else:  # ending the session records it, then flushes
        out = resumed.end_session(THREAD)
        assert out["context"] and out["msgCount"] == 6
    assert out["resumed"] == RECEIVED and out["mode"] == "model"
    entries = _entries(db, account.account_id)
    messages = 7 if then == "next" else 6
    assert len(entries) == messages and _count(db, account.account_id, "Message") == messages
    assert entries[5]["recordedContent"] == f"{sixth.speaker}: {sixth.content}"
    assert entries[5]["messageId"] == state.to_process.message_id == entries[5]["recordedId"]
    after = resumed.agent.thread(THREAD)
    assert (after.step, after.msg_count, len(after.turns)) == (DONE, messages, messages)
    # nothing is recorded twice afterwards, and the count goes on from there
    nxt = _feed(resumed, range(messages, messages + 1))[0]
    assert nxt["msgCount"] == messages + 1 and len(_entries(db, account.account_id)) == messages + 1


# ---------------------------------------------------------------------------------------
# the model failing
FAILURES = [
    ("500", "api-error"),
    ("401", "api-error"),
    ("malformed", "api-error"),
    ("slow", "timeout"),
    ("wrong-tool", "unreadable-answer"),
    ("missing-field", "unreadable-answer"),
    ("no-key", "no-key"),
]


@pytest.mark.parametrize("mode,reason", FAILURES, ids=[m for m, _ in FAILURES])
def test_a_failing_model_degrades_to_extractive_entries_and_a_deterministic_context(
    llm, writer, db, account, caplog, monkeypatch, mode: str, reason: str
) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    if mode == "no-key":
        monkeypatch.delenv("ANTHROPIC_API_KEY")
        settings = load_settings(ANTHROPIC_API_KEY="")
    else:
        llm.mode, llm.delay_s = mode, 5.0
        settings = load_settings(ANTHROPIC_API_KEY="test-key", MAXY_AGENT_TIMEOUT_S=0.5)
    agent = MemoryAgent(writer, MEMORY, settings)
    agent.invoke(ControlState.START_SESSION, THREAD)
    agent.invoke(ControlState.PROCESS_MESSAGE, THREAD, _message(0))
    started = time.perf_counter()
    out = agent.invoke(ControlState.PROCESS_MESSAGE_AND_FLUSH, THREAD, _message(1))
    elapsed = time.perf_counter() - started

    assert (out["mode"], out["reason"]) == ("degraded", reason)
    # the model is asked once per call: the context step does not wait for a second failure
    assert len(llm.requests) == (0 if mode == "no-key" else 2)
    assert elapsed < 15
    entries = _entries(db, account.account_id)
    assert [e["rawEntry"] for e in entries] == [TURNS[0][2], TURNS[1][2]]  # nothing lost
    assert [e["summary"] for e in entries] == [f"Ada: {TURNS[0][2]}", f"Maxy: {TURNS[1][2]}"]
    assert entries[1]["tags"] == ["role:assistant", "speaker:Maxy", "kind:question"]
    assert all(e["message"] for e in entries) and _count(db, account.account_id, "Message") == 2
    context = get_context(db, Caller(account.account_id), MEMORY)
    assert context is not None and context["version"] == out["context"]["version"] == 1
    assert context["content"].splitlines()[0] == f"# Context of {MEMORY}"
    assert f"- Maxy: {TURNS[1][2]}\n- Ada: {TURNS[0][2]}" in context["content"]
    assert "## Open questions\n- Maxy: Do you want a credit note or a refund?" in context["content"]
    lines = _invoke_lines(caplog)
    assert "control=process_message " in lines[1] and f" mode=degraded reason={reason} " in lines[1]
    assert f" mode=degraded reason={reason} " in lines[2]
    assert " context=1 contextWritten=true consistent=true barrierError=none " in lines[2]
    assert len(lines) == 3


def test_the_model_answer_is_used_again_once_the_model_is_back(llm, writer, db, account) -> None:
    agent = _agent(writer, MAXY_AGENT_TIMEOUT_S=0.5)
    agent.invoke(ControlState.START_SESSION, THREAD)
    llm.mode = "500"
    assert agent.invoke(ControlState.PROCESS_MESSAGE, THREAD, _message(0))["mode"] == "degraded"
    llm.mode = "ok"
    assert agent.invoke(ControlState.PROCESS_MESSAGE, THREAD, _message(1))["mode"] == "model"
    summaries = [e["summary"] for e in _entries(db, account.account_id)]
    assert summaries[0] == f"Ada: {TURNS[0][2]}" and summaries[1].startswith("Summary: ")
    assert [r["messageId"] for r in list_entries(db, Caller(account.account_id), MEMORY)] == ["m1", "m0"]


def test_the_thread_state_is_one_node_per_memory_and_thread_in_the_writers_view(
    llm, writer, db, account, embedder, make_account
) -> None:
    agent = _agent(writer)
    agent.invoke(ControlState.START_SESSION, THREAD)
    agent.invoke(ControlState.PROCESS_MESSAGE, THREAD, _message(0))
    MemoryAgent(writer, "bob", load_settings(ANTHROPIC_API_KEY="test-key")).invoke("start_session", THREAD)
    rows = db.read(
        "MATCH (t:AgentThread {accountId: $acc}) RETURN t.memory AS memory, t.threadId AS threadId, t.msgCount AS n, "
        "t.history AS history, t.step AS step, t.control AS control, t.scope AS scope, t.updatedAt IS NOT NULL AS stamped "
        "ORDER BY memory",
        acc=account.account_id,
    )
    assert [(r["memory"], r["threadId"], r["n"], r["step"], r["control"]) for r in rows] == [
        (MEMORY, THREAD, 1, DONE, "process_message"),
        ("bob", THREAD, 0, DONE, "start_session"),
    ]
    assert all(r["stamped"] and r["scope"] == "admin" for r in rows)
    assert [t["message_id"] for t in json.loads(rows[0]["history"])["turns"]] == ["m0"]
    # an agent of another account, or of a pinned view, starts the same thread from nothing
    other = MemoryAgent(GraphWriter(db, make_account(), embedder), MEMORY, load_settings())
    pinned = MemoryAgent(
        GraphWriter(db, account, embedder, caller=Caller(account.account_id, ("public",))), MEMORY, load_settings()
    )
    for agent in (other, pinned):
        state = agent.thread(THREAD)
        assert (state.msg_count, state.turns, state.retrieved) == (0, [], {})

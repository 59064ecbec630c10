"""Conversation turns from the agent against the real Neo4j: ``append_turn`` (Message per turn,
Conversation at the second turn, NEXT chain, neighbour summaries), the conversation-append
tool (pinned session, public role) and ``maxy conversation append``."""

from __future__ import annotations

import json
import logging
import subprocess

import pytest
from maxy.conversations import search_messages
from maxy.conversations.append import MAX_CONTENT, append_turn
from maxy.conversations.compaction import conversation_node_id, start_conversation
from maxy.conversations.importing import import_messages, parse_message
from maxy.embeddings.base import EmbeddingError
from maxy.errors import ValidationError
from maxy.graph.confine import id_root
from maxy.graph.guards import Caller
from maxy.graph.write import GraphWriter
from maxy.plugins.api import ToolError
from maxy.search.reindex import reindex
from maxy_plugins.memory.conversation_tools import conversation_append

from tests.cli_inprocess import maxy
from tests.integration.test_plugin_tools import make_ctx
from tests.plugins_fixture.helpers import child_env


class DownEmbedder:
    """The configured model's name and size, every call failing (an outage)."""

    def __init__(self, real) -> None:
        self.name, self.dimensions = real.name, real.dimensions

    def embed(self, texts):
        raise EmbeddingError("embedding service down (test)")


@pytest.fixture()
def writer(db, account, embedder):
    return GraphWriter(db, account, embedder)


def messages(db, account_id: str, session: str) -> list[dict]:
    """The session's messages in seq order, with their Conversation and the turn before them."""
    return db.read(
        """
        MATCH (m:Message {accountId: $acc, sessionId: $sid})
        OPTIONAL MATCH (c)-[:HAS_MESSAGE]->(m)
        OPTIONAL MATCH (p)-[:NEXT]->(m)
        RETURN m.nodeId AS nodeId, m.seq AS seq, m.content AS content, m.summary AS summary, m.role AS role,
               m.speaker AS speaker, m.timestamp AS timestamp, m.scope AS scope, m.agents AS agents,
               m.embedding IS NOT NULL AS embedded, collect(DISTINCT c.nodeId) AS conversations,
               collect(DISTINCT p.nodeId) AS previous, coalesce(m.seq, m.position) AS turn
        ORDER BY turn
        """,
        acc=account_id,
        sid=session,
    )


def conversations(db, account_id: str) -> list[dict]:
    return db.read(
        "MATCH (c:Conversation {accountId: $acc}) RETURN c.nodeId AS nodeId, c.sessionId AS sessionId, "
        "c.startedAt AS startedAt, c.scope AS scope ORDER BY c.createdAt",
        acc=account_id,
    )


def test_turns_chain_into_a_conversation_created_at_the_second_turn(db, account, writer, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    acc = account.account_id
    first = append_turn(
        writer, "s-1", role="user", content=" I adopted a beagle! ", speaker="Ana", timestamp="2024-03-01T09:00:00Z"
    )
    assert first["conversationId"] is None and first["seq"] == 0 and first["created"] and first["embedded"]
    assert conversations(db, acc) == []
    [lone] = messages(db, acc, "s-1")
    assert lone["content"] == "Ana: I adopted a beagle!" and lone["summary"] is None and lone["conversations"] == []
    assert lone["timestamp"] == "2024-03-01T09:00:00+00:00" and lone["role"] == "user"

    second = append_turn(writer, "s-1", role="assistant", content="What is its name?", timestamp="2024-03-01T09:01:00")
    conv_id = conversation_node_id(acc, "s-1")
    assert second["conversationId"] == conv_id and second["seq"] == 1
    [conv] = conversations(db, acc)
    assert conv["nodeId"] == conv_id and conv["sessionId"] == "s-1" and conv["startedAt"] == lone["timestamp"]
    third = append_turn(writer, "s-1", role="user", content="Pepper.", speaker="Ana", timestamp="2024-03-01T09:02:00")
    assert third["conversationId"] == conv_id and third["seq"] == 2

    rows = messages(db, acc, "s-1")
    assert [r["seq"] for r in rows] == [0, 1, 2]
    assert all(r["conversations"] == [conv_id] and r["embedded"] for r in rows)
    assert [r["previous"] for r in rows] == [[], [rows[0]["nodeId"]], [rows[1]["nodeId"]]]
    # As an import would have it: each turn with up to 2 turns before it and 1 after it.
    assert rows[0]["summary"] == "Ana: I adopted a beagle!\nWhat is its name?"
    assert rows[1]["summary"] == "Ana: I adopted a beagle!\nWhat is its name?\nAna: Pepper."
    assert rows[2]["summary"] == rows[1]["summary"]
    assert rows[1]["speaker"] is None and rows[1]["role"] == "assistant"
    assert len(conversations(db, acc)) == 1
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("[conversation] op=append")]
    assert len(logged) == 3 and "new-conversation=true" in logged[1] and "seq=2" in logged[2]


def test_the_same_message_id_updates_the_turn_in_place(db, account, writer):
    acc = account.account_id
    append_turn(writer, "s-2", role="user", content="My dog is two.", message_id="t1")
    append_turn(writer, "s-2", role="user", content="She likes walks.", message_id="t2")
    again = append_turn(writer, "s-2", role="user", content="My dog is three.", speaker="Ana", message_id="t1")
    assert again["created"] is False and again["seq"] == 0 and again["messageId"] == "t1"
    rows = messages(db, acc, "s-2")
    assert [r["content"] for r in rows] == ["Ana: My dog is three.", "She likes walks."]
    # The next turn's summary holds the new text too.
    assert rows[1]["summary"] == "Ana: My dog is three.\nShe likes walks."
    assert rows[1]["previous"] == [rows[0]["nodeId"]]


def test_an_existing_conversation_is_used(db, account, writer):
    acc = account.account_id
    compacted = start_conversation(writer, "s-3", admin=True, started_at="2024-01-01T00:00:00+00:00")
    first = append_turn(writer, "s-3", role="user", content="Hello again")
    assert first["conversationId"] == compacted["nodeId"]
    row = {"conversation": "c", "session": "s-4", "id": "D1:1", "speaker": "Ana", "content": "I sing in a choir."}
    import_messages(writer, [parse_message(row, "x"), parse_message({**row, "id": "D1:2", "content": "Tenor."}, "x")])
    [imported] = [c["nodeId"] for c in conversations(db, acc) if c["sessionId"] == "s-4"]
    turn = append_turn(writer, "s-4", role="user", content="Since last spring.", speaker="Ben")
    assert turn["conversationId"] == imported and turn["seq"] == 2
    rows = messages(db, acc, "s-4")
    assert rows[2]["previous"] == [rows[1]["nodeId"]] and rows[2]["conversations"] == [imported]
    assert rows[1]["summary"] == "Ana: I sing in a choir.\nAna: Tenor.\nBen: Since last spring."
    assert len(conversations(db, acc)) == 2


def test_appended_turns_are_found_in_their_session(db, account, writer, embedder):
    for text in ("We are moving to Lisbon in June.", "Do you need a removal company?", "Yes, a cheap one."):
        append_turn(writer, "move", role="user", content=text)
    append_turn(writer, "other", role="user", content="Lisbon has lovely trams.")
    caller = Caller(account.account_id)
    rows = search_messages(db, caller, embedder, "when is the move to Lisbon", session_id="move", limit=5)
    assert rows and {r["sessionId"] for r in rows} == {"move"}
    assert "We are moving to Lisbon in June." in [r["content"] for r in rows]
    everywhere = search_messages(db, caller, embedder, "Lisbon trams", limit=5)
    assert "other" in {r["sessionId"] for r in everywhere}


def test_a_pinned_callers_turns_stay_in_its_view(db, account, writer, embedder):
    acc = account.account_id
    pinned = Caller(acc, ("public",), "bot")
    bot = GraphWriter(db, account, embedder, caller=pinned)
    append_turn(writer, "shared-id", role="user", content="Admin: the budget is 40k.")
    append_turn(writer, "shared-id", role="user", content="Admin: keep it quiet.")
    one = append_turn(bot, "shared-id", role="user", content="What are your opening hours?")
    two = append_turn(bot, "shared-id", role="assistant", content="We open at nine.")
    assert one["conversationId"] is None and one["seq"] == 0  # the admin's turns are not this view's
    assert (
        two["conversationId"]
        == conversation_node_id(id_root(pinned), "shared-id")
        != conversation_node_id(acc, "shared-id")
    )
    rows = messages(db, acc, "shared-id")
    mine = [r for r in rows if r["agents"] == ["bot"]]
    assert len(rows) == 4 and len(mine) == 2
    assert all(r["scope"] == "public" and r["conversations"] == [two["conversationId"]] for r in mine)
    assert mine[1]["previous"] == [mine[0]["nodeId"]] and mine[0]["previous"] == []
    assert all("budget" not in (r["summary"] or "") for r in mine)
    found = search_messages(db, pinned, embedder, "budget opening hours", session_id="shared-id", limit=10)
    assert {r["nodeId"] for r in found} == {r["nodeId"] for r in mine}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"session_id": " "}, "sessionId"),
        ({"role": "robot"}, "role"),
        ({"content": "  "}, "content"),
        ({"content": "x" * (MAX_CONTENT + 1)}, "content"),
        ({"speaker": "Ana\nBen"}, "speaker"),
        ({"timestamp": "last Tuesday"}, "timestamp"),
        ({"message_id": ""}, "messageId"),
    ],
)
def test_bad_input_names_the_field_and_writes_nothing(db, account, writer, kwargs, field):
    args = {"session_id": "s-bad", "role": "user", "content": "hello", **kwargs}
    with pytest.raises(ValidationError) as exc:
        append_turn(writer, args.pop("session_id"), **args)
    assert exc.value.field == field and str(exc.value).startswith(f"{field}: ")
    assert "\n" not in str(exc.value)
    assert db.read("MATCH (n:Node {accountId: $a}) RETURN count(n) AS c", a=account.account_id)[0]["c"] == 0


def test_an_embedder_outage_stores_the_turn_for_reindex(db, account, embedder):
    down = GraphWriter(db, account, DownEmbedder(embedder))
    first = append_turn(down, "s-5", role="user", content="The boiler is banging.")
    second = append_turn(down, "s-5", role="assistant", content="Since when?")
    assert first["embedded"] is False and second["embedded"] is False and second["conversationId"]
    rows = messages(db, account.account_id, "s-5")
    assert len(rows) == 2 and not any(r["embedded"] for r in rows)
    assert reindex(db, account, embedder, labels=["Message"])["embedded"] == 2
    assert all(r["embedded"] for r in messages(db, account.account_id, "s-5"))


def test_the_tool_uses_the_pinned_session_and_refuses_another(settings, db, account, embedder):
    pinned = make_ctx(settings, db, account, embedder, session_id="sess-pinned")
    out = conversation_append(pinned, "My boiler is making a banging noise", speaker="Ana")
    assert out["sessionId"] == "sess-pinned" and out["seq"] == 0
    same = conversation_append(pinned, "It started yesterday", sessionId="sess-pinned", messageId="m-2")
    assert same["messageId"] == "m-2" and same["conversationId"]
    with pytest.raises(ToolError, match=r"^sessionId: SESSION_ID is pinned"):
        conversation_append(pinned, "x", sessionId="elsewhere")
    unpinned = make_ctx(settings, db, account, embedder)
    with pytest.raises(ToolError, match=r"^sessionId: "):
        conversation_append(unpinned, "x")
    with pytest.raises(ToolError, match=r"^role: "):
        conversation_append(unpinned, "x", sessionId="s", role="bot")
    public = make_ctx(settings, db, account, embedder, role="public", scopes=("public",), agent="bot")
    with pytest.raises(ToolError, match="read-only"):
        conversation_append(public, "x", sessionId="s")
    assert len(messages(db, account.account_id, "sess-pinned")) == 2
    assert messages(db, account.account_id, "s") == []


def test_the_command_line_reads_stdin_and_prints_json(db, account, data_root):
    env = child_env(data_root, ACCOUNT_ID=account.account_id, MAXY_LOG_LEVEL="WARNING")

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return maxy(["conversation", "append", *args], env, input=stdin)

    piped = run("cli-s", "-", "--speaker", "Ana", "--json", stdin="Piped in\n")
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["seq"] == 0
    assert json.loads(piped.stdout)["account"] == {"id": account.account_id, "name": account.ref()["name"]}
    said = run("cli-s", "Typed out", "--role", "assistant", "--timestamp", "2030-01-01")
    assert said.returncode == 0 and said.stdout.startswith(f"appended turn 1 of cli-s in {account.label()} ("), (
        said.stderr
    )
    assert [r["content"] for r in messages(db, account.account_id, "cli-s")] == ["Ana: Piped in", "Typed out"]
    bad = run("cli-s", "x", "--role", "robot")
    assert bad.returncode == 2 and "--role: one of user, assistant, system" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_racing_appends_make_one_conversation(db, account, monkeypatch):
    """Separate processes do not share the in-process lock: without it, turns racing for the
    session's second place still MERGE into one Conversation."""
    from concurrent.futures import ThreadPoolExecutor
    from contextlib import nullcontext

    import maxy.conversations.append as appending

    monkeypatch.setattr(appending, "_session_lock", lambda root, sid: nullcontext())
    writer = GraphWriter(db, account, None)
    append_turn(writer, "race", role="user", content="turn zero")
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = list(pool.map(lambda i: append_turn(writer, "race", role="user", content=f"turn {i}"), range(1, 5)))
    [conv] = conversations(db, account.account_id)
    assert {d["conversationId"] for d in done} == {conv["nodeId"]}
    rows = messages(db, account.account_id, "race")
    assert len(rows) == 5 and all(r["conversations"] == [conv["nodeId"]] for r in rows)

"""The memory agent's store against the real Neo4j: entries (recent first, limits, one per
message, linked to the turns ``append_turn`` stored), versioned contexts, isolation between
accounts and between pinned views, bad values, and the consistency barrier (a just-written
entry is then found by hybrid search; an entry written while the embedder failed is embedded
by it: tests/fake_ollama.py stands in for a failing embedder), and processes writing one memory
at once never taking the same seq or version."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from maxy.conversations.append import append_turn
from maxy.embeddings.ollama_embedder import OllamaEmbedder
from maxy.errors import ValidationError
from maxy.graph.guards import Caller
from maxy.graph.schema import list_indexes, recorded_embedder
from maxy.graph.write import Edge, GraphWriter, NodeSpec
from maxy.memoryagent import add_entry, await_consistency, consistency, get_context, list_entries, put_context
from maxy.memoryagent.spaces import CONTEXT_LABEL, SpaceMoved, commit_next, space_node_id, space_spec
from maxy.search.config import SearchConfig
from maxy.search.pipeline import hybrid
from maxy.search.request import SearchRequest

from tests.fake_ollama import FakeOllama
from tests.plugins_fixture.helpers import REPO, child_env


def _count(db: Any, account_id: str, label: str) -> int:
    rows = db.read(f"MATCH (n:{label}) WHERE n.accountId = $acc RETURN count(n) AS n", acc=account_id)
    return int(rows[0]["n"])


def _links(db: Any, node_id: str) -> dict[str, str]:
    rows = db.read(
        "MATCH (e:MemoryEntry {nodeId: $id})-[r:RECORDS|IN_SESSION]->(x) RETURN type(r) AS type, x.nodeId AS target",
        id=node_id,
    )
    return {r["type"]: r["target"] for r in rows}


def test_entries_are_recent_first_one_per_message_and_linked_to_their_turns(db, account, embedder) -> None:
    writer = GraphWriter(db, account, embedder)
    turns = [
        append_turn(writer, "s1", role="user", content="I adopted a greyhound called Pixel", message_id="m1"),
        append_turn(writer, "s1", role="assistant", content="Lovely! How old is Pixel?", message_id="m2"),
    ]
    first = add_entry(
        writer, "ada", summary="Ada adopted a greyhound, Pixel", raw_entry="I adopted a greyhound called Pixel",
        tags={"topic": "pets"}, role="user", session_id="s1", message_id="m1",
    )  # fmt: skip
    second = add_entry(
        writer, "ada", summary="The assistant asked Pixel's age", raw_entry="Lovely! How old is Pixel?",
        tags=["question"], role="assistant", session_id="s1", message_id="m2",
    )  # fmt: skip
    third = add_entry(writer, "ada", summary="Ada likes long walks", raw_entry="I like long walks")
    assert [first["seq"], second["seq"], third["seq"]] == [0, 1, 2]
    assert first["message"] == turns[0]["nodeId"] and third["message"] is None
    conversation = turns[1]["conversationId"]  # made at the session's second turn
    assert _links(db, first["entryId"]) == {"RECORDS": turns[0]["nodeId"], "IN_SESSION": conversation}
    assert _links(db, second["entryId"]) == {"RECORDS": turns[1]["nodeId"], "IN_SESSION": conversation}
    assert _links(db, third["entryId"]) == {}

    # the same message again updates its entry, keeping its place
    again = add_entry(
        writer, "ada", summary="Ada adopted Pixel, a two-year-old greyhound", raw_entry="I adopted a greyhound called Pixel",
        role="user", session_id="s1", message_id="m1",
    )  # fmt: skip
    assert (again["entryId"], again["seq"], again["created"]) == (first["entryId"], 0, False)
    assert _count(db, account.account_id, "MemoryEntry") == 3

    caller = Caller(account.account_id)
    rows = list_entries(db, caller, "ada", limit=10)
    assert [r["seq"] for r in rows] == [2, 1, 0]
    assert rows[1]["tags"] == ["question"] and rows[1]["role"] == "assistant" and rows[1]["messageId"] == "m2"
    assert rows[2]["summary"] == "Ada adopted Pixel, a two-year-old greyhound" and rows[2]["sessionId"] == "s1"
    assert [r["entryId"] for r in list_entries(db, caller, "ada", limit=2)] == [third["entryId"], second["entryId"]]
    assert list_entries(db, caller, "bob") == []


def test_contexts_are_versioned_and_the_old_ones_kept(db, account, embedder) -> None:
    writer = GraphWriter(db, account, embedder)
    caller = Caller(account.account_id)
    assert get_context(db, caller, "ada") is None
    puts = [put_context(writer, "ada", f"Ada has a greyhound. Version {i}.", session_id="s1") for i in (1, 2, 3)]
    assert [p["version"] for p in puts] == [1, 2, 3] and all(p["createdAt"] for p in puts)
    latest = get_context(db, caller, "ada")
    assert latest is not None
    assert (latest["contextId"], latest["version"], latest["sessionId"]) == (puts[2]["contextId"], 3, "s1")
    assert latest["content"] == "Ada has a greyhound. Version 3."
    assert _count(db, account.account_id, "MemoryContext") == 3
    assert put_context(writer, "bob", "Bob is new.")["version"] == 1  # each memory counts its own


def test_a_context_put_again_unchanged_adds_no_version_and_names_the_current_one(db, account, embedder) -> None:
    writer = GraphWriter(db, account, embedder)
    first = put_context(writer, "ada", "Ada has a greyhound.\n", session_id="s1")
    again = put_context(writer, "ada", "  Ada has a greyhound.", session_id="s2")  # the same document, stripped
    assert first["written"] and not again["written"]
    assert (again["contextId"], again["version"], again["createdAt"]) == (
        first["contextId"],
        1,
        first["createdAt"],
    )
    changed = put_context(writer, "ada", "Ada has a greyhound, Pixel.")
    assert (changed["written"], changed["version"]) == (True, 2)
    assert put_context(writer, "ada", "Ada has a greyhound.")["version"] == 3  # an older content is new again
    assert _count(db, account.account_id, "MemoryContext") == 3


def test_accounts_and_pinned_views_never_see_each_others_memories(db, account, make_account, embedder) -> None:
    other = make_account("other")
    mine = GraphWriter(db, account, embedder)
    theirs = GraphWriter(db, other, embedder)
    public_bot = Caller(account.account_id, ("public",), "bot")
    pinned = GraphWriter(db, account, embedder, caller=public_bot)
    for writer, text in ((mine, "admin view"), (theirs, "other account"), (pinned, "public bot view")):
        add_entry(writer, "ada", summary=f"An entry of the {text}", raw_entry=text)
        put_context(writer, "ada", f"The context of the {text}")

    def seen(caller: Caller) -> tuple[list[str], str | None]:
        context = get_context(db, caller, "ada")
        return [r["rawEntry"] for r in list_entries(db, caller, "ada")], context and context["content"]

    assert seen(Caller(account.account_id)) == (["admin view"], "The context of the admin view")
    assert seen(Caller(other.account_id)) == (["other account"], "The context of the other account")
    assert seen(public_bot) == (["public bot view"], "The context of the public bot view")
    assert seen(Caller(account.account_id, ("public",), "other-bot")) == ([], None)
    rows = db.read(
        "MATCH (e:MemoryEntry) WHERE e.accountId = $acc AND e.rawEntry = 'public bot view' "
        "RETURN e.scope AS scope, e.agents AS agents",
        acc=account.account_id,
    )
    assert rows == [{"scope": "public", "agents": ["bot"]}]  # confined to the view that wrote it


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda w: add_entry(w, "", summary="s", raw_entry="r"), "memory: a memory name is required"),
        (lambda w: add_entry(w, "a b", summary="s", raw_entry="r"), "memory: ' ' is not allowed in a memory name"),
        (lambda w: add_entry(w, "x" * 129, summary="s", raw_entry="r"), "memory: at most 128 characters"),
        (lambda w: add_entry(w, "ada", summary=" ", raw_entry="r"), "summary: a non-empty string is required"),
        (lambda w: add_entry(w, "ada", summary="s", raw_entry=""), "rawEntry: a non-empty string is required"),
        (lambda w: add_entry(w, "ada", summary="s", raw_entry="r", role="bot"), "role: one of user, assistant"),
        (lambda w: add_entry(w, "ada", summary="s", raw_entry="r", tags="pets"), "tags: a list of strings"),
        (lambda w: add_entry(w, "ada", summary="s", raw_entry="r", tags=["a\nb"]), "tags[0]: control characters"),
        (lambda w: add_entry(w, "ada", summary="s", raw_entry="r", tags=["t"] * 40), "tags: at most 32 tags"),
        (lambda w: add_entry(w, "ada", summary="s", raw_entry="r", message_id="m\t1"), "messageId: control"),
        (lambda w: add_entry(w, "ada", summary="s", raw_entry="r", session_id=""), "sessionId: a non-empty"),
        (lambda w: put_context(w, "ada", "  "), "content: a non-empty context document is required"),
        (lambda w: put_context(w, "ada", "x" * 100_001), "content: at most 100,000 characters"),
        (lambda w: await_consistency(w, "ada", timeout_s=0), "timeoutS: between 0 and 300 seconds"),
        (lambda w: list_entries(w.db, w.caller, "ada", limit=0), "limit: an integer from 1 to 100"),
        (lambda w: list_entries(w.db, w.caller, "ada", limit=True), "limit: an integer from 1 to 100"),
        (lambda w: list_entries(w.db, w.caller, "ada", limit=-3), "limit: an integer from 1 to 100 (got -3)"),
        (lambda w: list_entries(w.db, w.caller, "ada", limit=10**30), "limit: an integer from 1 to 100"),
        (lambda w: add_entry(w, "ada", summary="s" * 4_001, raw_entry="r"), "summary: at most 4,000 characters"),
        (lambda w: add_entry(w, "ada", summary="s", raw_entry="r", tags={"n": 5}), "tags.n: a non-empty string"),  # type: ignore[dict-item]
        (lambda w: add_entry(w, "ada", summary="s", raw_entry="r", tags={"": "x"}), "tags: a non-empty string"),
        (lambda w: add_entry(w, "ada", summary="s", raw_entry="r", tags=["ok", ""]), "tags[1]: a non-empty string"),
        (lambda w: add_entry(w, "ada", summary="s", raw_entry="r", tags=["a\u2028b"]), "tags[0]: control characters"),
        (lambda w: add_entry(w, "ada", summary="s", raw_entry="r", tags=5), "tags: a list of strings"),  # type: ignore[arg-type]
        (lambda w: add_entry(w, "Zoë", summary="s", raw_entry="r"), "memory: 'ë' is not allowed in a memory name"),
        (lambda w: add_entry(w, "ada\n", summary="s", raw_entry="r"), "memory: '\\n' is not allowed"),
        (lambda w: get_context(w.db, w.caller, "ada\x00"), "memory: '\\x00' is not allowed"),
    ],
)
def test_bad_values_are_one_line_naming_the_field_and_write_nothing(db, account, call, expected) -> None:
    writer = GraphWriter(db, account, None)
    with pytest.raises(ValidationError) as err:
        call(writer)
    assert str(err.value).startswith(expected) and "\n" not in str(err.value)
    assert _count(db, account.account_id, "Node") == 0


def test_after_the_barrier_a_new_entry_is_found_by_hybrid_search(db, account, embedder) -> None:
    writer = GraphWriter(db, account, embedder)
    caller = Caller(account.account_id)
    assert await_consistency(writer, "ada")["consistent"]  # an empty memory is consistent at once
    add_entry(writer, "ada", summary="Ada's greyhound Pixel is afraid of thunderstorms", raw_entry="x")
    entry = add_entry(writer, "ada", summary="Ada booked a ferry to Madeira for 3 June 2024", raw_entry="y")
    barrier = await_consistency(writer, "ada", timeout_s=30)
    assert barrier["consistent"] and barrier["entries"] == 2 and barrier["reembedded"] == 0
    request = SearchRequest("ferry to Madeira", labels=("MemoryEntry",), min_relevance=0)
    response = hybrid(db, caller, request, embedder)
    assert response.hits and response.hits[0].node_id == entry["entryId"]


def test_the_barrier_embeds_an_entry_written_while_the_embedder_failed(db, account, embedder) -> None:
    with FakeOllama(dims=embedder.dimensions, mode="error500") as fake:
        failing = OllamaEmbedder("all-minilm", fake.url, embedder.dimensions, timeout_s=2, breaker_failures=1)
        failing.name = (recorded_embedder(db) or {}).get("model") or failing.name  # the model the vectors came from
        down = GraphWriter(db, account, failing)
        entry = add_entry(down, "ada", summary="Ada's sister Maria teaches violin in Porto", raw_entry="z")
        assert entry["embedded"] is False
        stalled = await_consistency(down, "ada", timeout_s=5)  # still down: says so at once, no waiting
    assert (stalled["consistent"], stalled["reembedded"], stalled["unembedded"]) == (False, 0, 1)
    assert stalled["waitedMs"] < 5000 and stalled["error"]

    barrier = await_consistency(GraphWriter(db, account, embedder), "ada", timeout_s=30)
    assert (barrier["consistent"], barrier["reembedded"]) == (True, 1) and "unembedded" not in barrier
    request = SearchRequest("which relative gives music lessons", labels=("MemoryEntry",), min_relevance=0)
    response = hybrid(db, Caller(account.account_id), request, embedder, SearchConfig(fusion="vector"))
    assert [h.node_id for h in response.hits][:1] == [entry["entryId"]]  # found by its new vector alone


def test_the_barrier_finds_an_entry_whose_summary_holds_lucene_syntax(db, account, embedder) -> None:
    writer = GraphWriter(db, account, embedder)
    add_entry(writer, "ada", summary="Ada asked about the ferry", raw_entry="a")
    tricky = 'Ada wrote AND (foo:"bar OR baz* -qux~ [a TO b] \\ || && ! ^2 {x} /re/'
    entry = add_entry(writer, "ada", summary=tricky, raw_entry="b")
    barrier = await_consistency(writer, "ada", timeout_s=30)
    assert barrier["consistent"] and "error" not in barrier and barrier["waitedMs"] < 30_000
    rows = list_entries(db, Caller(account.account_id), "ada", limit=1)
    assert [(r["entryId"], r["summary"]) for r in rows] == [(entry["entryId"], tricky)]


def test_a_schema_without_the_entries_indexes_is_named_at_once(db, account, embedder, monkeypatch) -> None:
    real = list_indexes(db)
    assert consistency.index_problem(real) is None  # what the set-up applied is what the barrier needs
    writer = GraphWriter(db, account, embedder)
    add_entry(writer, "ada", summary="Ada booked a ferry to Madeira", raw_entry="y")
    # SHOW INDEXES of a database whose schema predates the memory agent: the real answer without its index
    older = [i for i in real if i.name != consistency.VECTOR_INDEX]
    monkeypatch.setattr(consistency, "list_indexes", lambda _db: older)
    barrier = await_consistency(writer, "ada", timeout_s=30)
    assert (barrier["consistent"], barrier["entries"]) == (False, 1) and barrier["waitedMs"] < 5_000
    assert barrier["error"].startswith("the vector index memory_entry_embedding on MemoryEntry is missing")
    assert "maxy schema apply" in barrier["error"]
    assert await_consistency(writer, "bob", timeout_s=30)["consistent"] is False  # even with no entry to wait for


# ---------------------------------------------------------------------------------------
# several processes writing one memory at once
_WRITER = """
import sys
from maxy.accounts import validate_account
from maxy.config import load_settings
from maxy.db import Database
from maxy.graph.write import Edge, GraphWriter, NodeSpec
from maxy.memoryagent import add_entry, put_context

settings = load_settings()
account = validate_account(settings.data_root, settings.ACCOUNT_ID)
name, count = sys.argv[1], int(sys.argv[2])
with Database(settings) as db:
    writer = GraphWriter(db, account, None)
    print("ready", flush=True)
    sys.stdin.readline()  # every writer starts at once
    for i in range(count):
        add_entry(writer, "shared", summary=f"{name} noted {i}", raw_entry=f"{name} wrote note {i}")
        put_context(writer, "shared", f"{name} context {i}")
"""


def test_processes_writing_one_memory_at_once_never_take_the_same_number(db, account, data_root: Path) -> None:
    env = child_env(data_root, ACCOUNT_ID=account.account_id)
    env["LOG_LEVEL"] = "ERROR"
    writers, each = 3, 6
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, f"p{i}", str(each)],
            env=env,
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(writers)
    ]
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        assert [child.wait(timeout=300) for child in children] == [0] * writers
    finally:
        for child in children:
            child.kill()
    caller = Caller(account.account_id)
    seqs = sorted(e["seq"] for e in list_entries(db, caller, "shared", limit=100))
    assert seqs == list(range(writers * each))
    rows = db.read(f"MATCH (c:{CONTEXT_LABEL}) WHERE c.accountId = $acc RETURN c.version AS v", acc=account.account_id)
    assert sorted(r["v"] for r in rows) == list(range(1, writers * each + 1))
    assert get_context(db, caller, "shared")["version"] == writers * each


def test_a_write_prepared_from_a_stale_read_takes_the_next_number_under_the_lock(db, account) -> None:
    writer = GraphWriter(db, account, None)
    put_context(writer, "ada", "first")
    stale = NodeSpec(
        [CONTEXT_LABEL],
        {"memory": "ada", "version": 1, "content": "a copy that read no context"},
        edges=[Edge("HAS_CONTEXT", space_node_id(writer.caller, "ada"), "in")],
        node_id="memcontext-stale",
    )
    prepared = writer.prepare([space_spec(writer, "ada"), stale])
    _, taken = commit_next(
        writer, "ada", prepared, records="HAS_CONTEXT", number="version", node_id="memcontext-stale", first=1
    )
    assert taken == 2
    latest = get_context(db, writer.caller, "ada")
    assert (latest["version"], latest["content"]) == (2, "a copy that read no context")
    assert _count(db, account.account_id, CONTEXT_LABEL) == 2


def test_a_numbered_write_into_a_space_not_there_writes_nothing(db, account) -> None:
    writer = GraphWriter(db, account, None)
    lost = NodeSpec(
        [CONTEXT_LABEL],
        {"memory": "nobody", "version": 1, "content": "a context for a space never written"},
        edges=[Edge("HAS_CONTEXT", space_node_id(writer.caller, "nobody"), "in")],
        node_id="memcontext-lost",
    )
    with pytest.raises(SpaceMoved):
        commit_next(
            writer,
            "nobody",
            writer.prepare([space_spec(writer, "nobody"), lost]),
            records="HAS_CONTEXT",
            number="version",
            node_id="memcontext-lost",
            first=1,
        )
    assert _count(db, account.account_id, CONTEXT_LABEL) == 0

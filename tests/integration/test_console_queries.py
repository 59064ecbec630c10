"""The operator console's reads against the real Neo4j, seeded through the project's own writers:
documents (live and soft-deleted) with their outline, restore, conversations and their
messages, tasks, and the tool call audit trail.

For each listing: the admin sees the rows, in order; a caller of another account sees none; a
public caller pinned to an agent sees only the public rows tagged for it (no ToolCalls, no
deleted documents); pages concatenate to the whole list (hypothesis, the graph seeded once);
bad offsets, limits, statuses and dates are refused naming the field.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from maxy.accounts import ValidatedAccount, create_account, validate_account
from maxy.conversations import list_conversations, session_messages
from maxy.conversations.append import append_turn
from maxy.conversations.importing import import_messages, parse_message
from maxy.errors import GraphWriteError, ValidationError
from maxy.graph.guards import Caller
from maxy.graph.write import Edge, GraphWriter, NodeSpec
from maxy.ingest import (
    ExtractiveSummarizer,
    document_outline,
    ingest_document,
    list_documents,
    parse_markdown,
    restore_attachment,
    soft_delete_attachment,
)
from maxy.mcp.audit import ToolCallRecord, record_tool_call
from maxy.provenance import list_tool_calls, tool_calls_touching
from maxy.provenance.tasks import list_tasks
from maxy.search import BASELINE, SearchRequest, hybrid
from maxy_plugins.work import tools as work

from tests.conftest import purge_account
from tests.hypothesis_profile import examples
from tests.integration.test_plugin_tools import make_ctx

AGENT = "ag1"
OTHER_AGENT = "ag2"
EXTRACTIVE = ExtractiveSummarizer()
Listing = Callable[..., tuple[int, list[dict[str, Any]]]]


def markdown(title: str, *sections: str) -> str:
    return f"# {title}\n\n" + "\n\n".join(
        f"## {s}\n\n{s} explains the {title.lower()} in a few words." for s in sections
    )


def ingest(writer: GraphWriter, attachment_id: str, title: str, *sections: str, **visibility: Any) -> str:
    result = ingest_document(
        writer, parse_markdown(markdown(title, *sections)), attachment_id, summarizer=EXTRACTIVE, **visibility
    )
    assert result.ok and not result.skipped
    return str(result.document_id)


@dataclass
class World:
    account: ValidatedAccount
    other: ValidatedAccount
    docs: dict[str, str] = field(default_factory=dict)  # attachmentId -> nodeId (account's)
    sessions: dict[str, str] = field(default_factory=dict)  # name -> sessionId
    tasks: dict[str, str] = field(default_factory=dict)  # name -> taskId
    calls: dict[str, str] = field(default_factory=dict)  # name -> ToolCall nodeId
    target: str = ""  # the node id some ToolCalls mention

    @property
    def admin(self) -> Caller:
        return Caller(self.account.account_id)

    @property
    def public(self) -> Caller:
        return Caller(self.account.account_id, ("public",), AGENT)

    @property
    def stranger(self) -> Caller:
        return Caller(self.other.account_id)


def _seed_documents(w: World, db: Any, embedder: Any) -> None:
    admin = GraphWriter(db, w.account, embedder, created_by="ingest")
    pinned = GraphWriter(db, w.account, embedder, caller=w.public, created_by="ingest")
    other_agent = GraphWriter(db, w.account, embedder, caller=Caller(w.account.account_id, ("public",), OTHER_AGENT))
    for i in range(5):
        w.docs[f"doc-{i}"] = ingest(admin, f"doc-{i}", f"Handbook {i}", "Intro", "Details", scope="admin")
    w.docs["untagged"] = ingest(admin, "untagged", "Untagged notes", "Only")  # no scope, no agents
    w.docs["pub-1"] = ingest(pinned, "pub-1", "Opening hours", "Weekdays", "Weekends", "Holidays")
    w.docs["pub-2"] = ingest(other_agent, "pub-2", "Price list", "Prices")
    w.docs["gone-admin"] = ingest(admin, "gone-admin", "Old policy", "Rules", scope="admin")
    w.docs["gone-pub"] = ingest(pinned, "gone-pub", "Old menu", "Starters")
    ingest(GraphWriter(db, w.other, embedder), "doc-0", "Their handbook", "Intro")
    ingest(GraphWriter(db, w.other, embedder), "their-gone", "Their old policy", "Rules")
    t0 = datetime(2030, 1, 1, tzinfo=UTC)
    soft_delete_attachment(db, w.account.account_id, "gone-admin", now=t0)
    soft_delete_attachment(db, w.account.account_id, "gone-pub", now=t0 + timedelta(hours=1))
    soft_delete_attachment(db, w.other.account_id, "their-gone", now=t0)


def _turns(session: str, n: int, start: str = "2026-03-01T09:00:00Z") -> list[Any]:
    at = datetime.fromisoformat(start.replace("Z", "+00:00"))
    return [
        parse_message(
            {
                "conversation": "support",
                "session": session,
                "id": f"m{i}",
                "speaker": "Alice" if i % 2 == 0 else "Bot",
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"turn {i} of {session}",
                "timestamp": (at + timedelta(minutes=i)).isoformat(),
            },
            f"line {i}",
        )
        for i in range(n)
    ]


def _seed_conversations(w: World, db: Any, embedder: Any) -> None:
    admin = GraphWriter(db, w.account, embedder)
    pinned = GraphWriter(db, w.account, embedder, caller=w.public)
    w.sessions = {name: f"{name}-{uuid.uuid4().hex[:6]}" for name in ("imported", "older", "appended", "public")}
    import_messages(admin, _turns(w.sessions["imported"], 3, "2026-03-02T09:00:00Z"))
    import_messages(admin, _turns(w.sessions["older"], 2, "2026-03-01T09:00:00Z"))
    sid = w.sessions["appended"]
    # Out of order: the second turn is earlier than the first, the third as early as the first.
    append_turn(admin, sid, role="user", content="first", speaker="Alice", timestamp="2026-03-03T10:00:00Z")
    append_turn(admin, sid, role="assistant", content="earlier", speaker="Bot", timestamp="2026-03-03T09:00:00Z")
    append_turn(admin, sid, role="user", content="same time", speaker="Alice", timestamp="2026-03-03T10:00:00Z")
    conv = db.read(
        "MATCH (c:Conversation {accountId: $acc, sessionId: $sid}) RETURN c.nodeId AS id",
        acc=w.account.account_id,
        sid=sid,
    )[0]["id"]
    admin.write(  # a message written without a sessionId, linked to the conversation only
        NodeSpec(
            ["Message"],
            {"role": "system", "content": "linked only", "timestamp": "2026-03-03T11:00:00+00:00"},
            edges=[Edge("HAS_MESSAGE", conv, "in")],
        )
    )
    for i, text in enumerate(("hello", "hi there")):
        append_turn(pinned, w.sessions["public"], role="user", content=text, timestamp=f"2026-03-04T09:0{i}:00Z")
    import_messages(GraphWriter(db, w.other, embedder), _turns(w.sessions["imported"], 2))


def _seed_tasks(w: World, db: Any, embedder: Any, settings: Any) -> None:
    admin = make_ctx(settings, db, w.account, embedder, plugin="work")
    pinned = make_ctx(settings, db, w.account, embedder, scopes=["public"], agent=AGENT, plugin="work")
    for i in range(6):
        kind = "deploy" if i % 2 == 0 else "backup"
        w.tasks[f"t{i}"] = work.work_create(admin, kind=kind, title=f"task {i}")["taskId"]
    work.work_update(admin, w.tasks["t1"], status="blocked", step="waiting for disk")
    work.work_update(admin, w.tasks["t1"], step="disk found")
    work.work_complete(admin, w.tasks["t2"])
    work.work_complete(admin, w.tasks["t4"], status="failed")
    w.tasks["pub"] = work.work_create(pinned, kind="deploy", title="public task")["taskId"]
    work.work_create(make_ctx(settings, db, w.other, embedder, plugin="work"), kind="deploy", title="theirs")


def _seed_tool_calls(w: World, db: Any, settings: Any) -> None:
    quiet = settings.model_copy(update={"AUDIT_RETENTION_DAYS": 0})
    in_session = make_ctx(quiet, db, w.account, None, session_node_id=w.sessions["imported"])
    alone = make_ctx(quiet, db, w.account, None)
    w.target = w.docs["pub-1"]
    now = datetime.now(UTC)
    plan = [
        ("search", in_session, "memory-search", {"query": "hours"}, "found 2", False),
        ("write-failed", in_session, "memory-write", {"nodeId": w.target}, "refused", True),
        ("get", alone, "memory-get", {"nodeId": "n-1"}, f"node {w.target}: Opening hours", False),
        ("create", alone, "work-create", {"kind": "deploy"}, "started", False),
        ("search-2", alone, "memory-search", {"query": "prices"}, "found 1", False),
    ]
    for name, ctx, tool, args, output, is_error in plan:
        node_id = record_tool_call(ctx, ToolCallRecord(tool, "memory", args, output, is_error, now, now))
        assert node_id is not None
        w.calls[name] = node_id
    other = make_ctx(quiet, db, w.other, None)
    assert record_tool_call(other, ToolCallRecord("memory-get", "memory", {"n": w.target}, "x", False, now, now))


@pytest.fixture(scope="module")
def world(db, embedder, settings, tmp_path_factory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("console-data")
    w = World(
        validate_account(root, create_account(root, "console").account_id),
        validate_account(root, create_account(root, "console-other").account_id),
    )
    try:
        _seed_documents(w, db, embedder)
        _seed_conversations(w, db, embedder)
        _seed_tasks(w, db, embedder, settings)
        _seed_tool_calls(w, db, settings)
        yield w
    finally:
        purge_account(db, w.account.account_id)
        purge_account(db, w.other.account_id)


def everything(listing: Listing, db: Any, caller: Caller, **kw: Any) -> list[dict[str, Any]]:
    total, rows = listing(db, caller, offset=0, limit=200, **kw)
    assert total == len(rows)
    return rows


def newest_first(rows: list[dict[str, Any]], *keys: str) -> list[str]:
    """Node ids by the first present key descending, then nodeId ascending (the listings' order)."""
    ordered = sorted(rows, key=lambda r: r["nodeId"])
    ordered.sort(key=lambda r: next(r[k] for k in keys if r.get(k) is not None), reverse=True)
    return [r["nodeId"] for r in ordered]


# =======================================================================================
# Documents
def test_documents_by_caller(db, world):
    rows = everything(list_documents, db, world.admin)
    live = {k for k in world.docs if not k.startswith("gone")}
    assert {r["attachmentId"] for r in rows} == live
    assert [r["nodeId"] for r in rows] == newest_first(rows, "createdAt")
    pub = next(r for r in rows if r["attachmentId"] == "pub-1")
    assert pub["sectionCount"] == 3 and pub["chunkCount"] == 3
    assert pub["scope"] == "public" and pub["agents"] == [AGENT] and pub["deletedAt"] is None
    assert pub["title"] == "Opening hours" and pub["source"] == "api" and pub["mediaType"] == "text/markdown"
    assert isinstance(pub["createdAt"], str) and isinstance(pub["updatedAt"], str)
    assert "embedding" not in pub

    assert [r["attachmentId"] for r in everything(list_documents, db, world.public)] == ["pub-1"]
    ag2 = Caller(world.account.account_id, ("public",), OTHER_AGENT)
    assert [r["attachmentId"] for r in everything(list_documents, db, ag2)] == ["pub-2"]
    stranger = everything(list_documents, db, world.stranger)
    assert {r["attachmentId"] for r in stranger} == {"doc-0"} and stranger[0]["nodeId"] != world.docs["doc-0"]


def test_deleted_documents_are_an_admin_view_only(db, world):
    trash = everything(list_documents, db, world.admin, deleted=True)
    assert [r["attachmentId"] for r in trash] == ["gone-pub", "gone-admin"]  # newest deletion first
    assert trash[0]["deletedAt"] == "2030-01-01T01:00:00+00:00"
    assert trash[1]["sectionCount"] == 1 and trash[1]["chunkCount"] == 1
    pinned_admin = Caller(world.account.account_id, ("admin",))
    assert [r["attachmentId"] for r in everything(list_documents, db, pinned_admin, deleted=True)] == ["gone-admin"]
    assert [r["attachmentId"] for r in everything(list_documents, db, world.stranger, deleted=True)] == ["their-gone"]
    for caller in (world.public, Caller(world.account.account_id, ("public", "shared"))):
        with pytest.raises(ValidationError) as err:
            list_documents(db, caller, deleted=True)
        assert err.value.field == "deleted" and "admin view" in str(err.value)
        with pytest.raises(ValidationError):
            document_outline(db, caller, "gone-pub", deleted=True)


def test_document_outline(db, world):
    outline = document_outline(db, world.admin, "pub-1")
    assert outline is not None
    doc = outline["document"]
    assert doc["nodeId"] == world.docs["pub-1"] and doc["attachmentId"] == "pub-1" and "embedding" not in doc
    assert [s["title"] for s in outline["sections"]] == ["Weekdays", "Weekends", "Holidays"]
    assert [s["position"] for s in outline["sections"]] == [0, 1, 2]
    chunk = outline["sections"][1]["chunks"][0]
    assert set(chunk) == {"nodeId", "position", "preview"} and chunk["position"] == 0
    assert chunk["preview"].startswith("Opening hours › Weekends") and len(chunk["preview"]) <= 200
    assert document_outline(db, world.public, "pub-1") == outline
    for caller, att in [
        (world.public, "doc-0"),  # hidden by scope
        (world.public, "untagged"),  # hidden by the agent pin
        (world.stranger, "pub-1"),  # another account's
        (world.admin, "no-such-document"),
        (world.admin, "gone-admin"),  # deleted: only with deleted=True
        (world.admin, "pub-1-and-more"),
    ]:
        assert document_outline(db, caller, att) is None
    gone = document_outline(db, world.admin, "gone-admin", deleted=True)
    assert gone is not None and gone["document"]["deletedAt"] == "2030-01-01T00:00:00+00:00"
    assert [len(s["chunks"]) for s in gone["sections"]] == [1]
    assert document_outline(db, world.admin, "pub-1", deleted=True) is None
    with pytest.raises(ValidationError) as err:
        document_outline(db, world.admin, "")
    assert err.value.field == "attachmentId"


# =======================================================================================
# Restore
@pytest.fixture()
def writer(db, account, embedder):
    return GraphWriter(db, account, embedder, created_by="ingest")


def _chunk_hits(db, embedder, caller: Caller, word: str) -> set[str]:
    response = hybrid(
        db, caller, SearchRequest(word, labels=("Chunk",), expand_hops=0, min_relevance=0), embedder, BASELINE
    )
    return {h.node_id for h in response.hits}


def _states(db, account_id: str, att: str) -> list[Any]:
    rows = db.read(
        "MATCH (n:Node {accountId: $acc}) WHERE n.attachmentId = $att RETURN n.deletedAt AS d",
        acc=account_id,
        att=att,
    )
    return [r["d"] for r in rows]


def test_restore_round_trip_makes_chunks_searchable_again(db, account, writer, embedder, caplog):
    caller = Caller(account.account_id)
    ingest(writer, "manual", "Zephyrquartz manual", "Zephyrquartz setup", "Zephyrquartz care")
    found = _chunk_hits(db, embedder, caller, "zephyrquartz")
    assert len(found) == 2
    assert soft_delete_attachment(db, account.account_id, "manual") == 5
    assert _chunk_hits(db, embedder, caller, "zephyrquartz") == set()
    assert document_outline(db, caller, "manual") is None

    with caplog.at_level(logging.INFO, logger="maxy"):
        assert restore_attachment(db, account.account_id, "manual", caller=caller) == 5
    lines = [r.getMessage() for r in caplog.records if "op=restore" in r.getMessage()]
    assert len(lines) == 1 and "attachmentId=manual" in lines[0] and "nodes=5" in lines[0]
    assert _states(db, account.account_id, "manual") == [None] * 5
    assert _chunk_hits(db, embedder, caller, "zephyrquartz") == found
    assert [r["attachmentId"] for r in everything(list_documents, db, caller)] == ["manual"]
    assert everything(list_documents, db, caller, deleted=True) == []
    outline = document_outline(db, caller, "manual")
    assert outline is not None and [len(s["chunks"]) for s in outline["sections"]] == [1, 1]

    # deleting again stamps afresh, and restoring again brings the same document back
    assert soft_delete_attachment(db, account.account_id, "manual") == 5
    assert restore_attachment(db, account.account_id, "manual", caller=caller) == 5


def test_restore_refusals_look_alike(db, account, make_account, writer, embedder):
    other = make_account("other")
    ingest(writer, "live", "Live doc", "Only")
    ingest(writer, "hidden", "Admin doc", "Only", scope="admin")
    soft_delete_attachment(db, account.account_id, "hidden")
    ingest(GraphWriter(db, other, embedder), "theirs", "Their doc", "Only")
    soft_delete_attachment(db, other.account_id, "theirs")
    caller = Caller(account.account_id)
    messages = set()
    for who, att in [
        (caller, "live"),  # not deleted
        (caller, "theirs"),  # another account's deleted document
        (caller, "absent"),
        (Caller(account.account_id, ("admin",), "ag9"), "hidden"),  # outside the agent pin
        (Caller(account.account_id, ("shared", "admin")), "hidden-too"),
    ]:
        with pytest.raises(GraphWriteError) as err:
            restore_attachment(db, account.account_id, att, caller=who)
        assert err.value.reason == "not-writable"
        messages.add(str(err.value).replace(repr(att), "<id>"))
    assert messages == {"attachmentId: no deleted document <id> that you can write; nothing was written"}
    assert _states(db, other.account_id, "theirs") != [None] * 3
    assert None not in _states(db, account.account_id, "hidden")

    for public in (Caller(account.account_id, ("public",), AGENT), Caller(account.account_id, ("public", "shared"))):
        with pytest.raises(GraphWriteError) as err:
            restore_attachment(db, account.account_id, "hidden", caller=public)
        assert err.value.reason == "not-admin" and str(err.value).startswith("attachmentId: only an admin view")
    assert None not in _states(db, account.account_id, "hidden")
    with pytest.raises(ValidationError):
        restore_attachment(db, account.account_id, "hidden", caller=Caller(other.account_id))

    # a second restore changes nothing and says so
    assert restore_attachment(db, account.account_id, "hidden", caller=caller) == 3
    with pytest.raises(GraphWriteError) as err:
        restore_attachment(db, account.account_id, "hidden", caller=caller)
    assert err.value.reason == "not-writable"
    assert _states(db, account.account_id, "hidden") == [None] * 3


# =======================================================================================
# Conversations
def test_conversations_by_caller(db, world):
    rows = everything(list_conversations, db, world.admin)
    by_session = {r["sessionId"]: r for r in rows}
    assert set(by_session) == set(world.sessions.values())
    assert [r["nodeId"] for r in rows] == newest_first(rows, "startedAt", "createdAt")
    assert [r["sessionId"] for r in rows][:2] == [world.sessions["public"], world.sessions["appended"]]
    imported = by_session[world.sessions["imported"]]
    assert imported["messageCount"] == 3 and imported["title"].startswith("support ")
    assert imported["firstMessageAt"] == "2026-03-02T09:00:00+00:00"
    assert imported["lastMessageAt"] == "2026-03-02T09:02:00+00:00"
    appended = by_session[world.sessions["appended"]]
    assert appended["messageCount"] == 4 and appended["lastMessageAt"] == "2026-03-03T11:00:00+00:00"
    assert appended["firstMessageAt"] == "2026-03-03T09:00:00+00:00" and appended["admin"] is False

    public = everything(list_conversations, db, world.public)
    assert [(r["sessionId"], r["messageCount"]) for r in public] == [(world.sessions["public"], 2)]
    stranger = everything(list_conversations, db, world.stranger)
    assert [(r["sessionId"], r["messageCount"]) for r in stranger] == [(world.sessions["imported"], 2)]


def test_session_messages_in_conversation_order(db, world):
    total, rows = session_messages(db, world.admin, world.sessions["appended"])
    assert total == 4
    assert [r["text"] for r in rows] == ["earlier", "first", "same time", "linked only"]
    assert [r["speaker"] for r in rows] == ["Bot", "Alice", "Alice", None]
    assert [r["seq"] for r in rows] == [1, 0, 2, None]
    assert rows[0]["role"] == "assistant" and rows[0]["timestamp"] == "2026-03-03T09:00:00+00:00"
    assert set(rows[0]) == {"nodeId", "messageId", "role", "speaker", "text", "timestamp", "seq"}
    imported = session_messages(db, world.admin, world.sessions["imported"])[1]
    assert [r["text"] for r in imported] == [f"turn {i} of {world.sessions['imported']}" for i in range(3)]
    assert [r["seq"] for r in imported] == [0, 1, 2]

    assert session_messages(db, world.public, world.sessions["appended"]) == (0, [])
    assert session_messages(db, world.public, world.sessions["public"])[0] == 2
    assert session_messages(db, world.admin, "no-such-session") == (0, [])
    theirs = session_messages(db, world.stranger, world.sessions["imported"])
    assert theirs[0] == 2 and not {r["nodeId"] for r in theirs[1]} & {r["nodeId"] for r in imported}
    with pytest.raises(ValidationError) as err:
        session_messages(db, world.admin, "  ")
    assert err.value.field == "sessionId"


# =======================================================================================
# Tasks
def test_tasks_by_caller_status_and_kind(db, world):
    rows = everything(list_tasks, db, world.admin)
    assert {r["taskId"] for r in rows} == set(world.tasks.values())
    assert [r["nodeId"] for r in rows] == newest_first(rows, "startedAt", "createdAt")
    assert rows[0]["taskId"] == world.tasks["pub"]
    t1 = next(r for r in rows if r["taskId"] == world.tasks["t1"])
    assert (t1["status"], t1["lastStep"], t1["stepCount"], t1["kind"]) == ("blocked", "disk found", 2, "backup")
    t0 = next(r for r in rows if r["taskId"] == world.tasks["t0"])
    assert (t0["stepCount"], t0["lastStep"], t0["title"], t0["priority"]) == (0, None, "task 0", 3)
    assert isinstance(t0["createdAt"], str) and isinstance(t0["updatedAt"], str) and t0["completedAt"] is None

    def ids(**kw: Any) -> set[str]:
        return {r["taskId"] for r in everything(list_tasks, db, world.admin, **kw)}

    assert ids(status="completed") == {world.tasks["t2"]}
    assert ids(status="failed", kind="deploy") == {world.tasks["t4"]}
    assert ids(kind="backup") == {world.tasks[t] for t in ("t1", "t3", "t5")}
    assert ids(status="running", kind="deploy") == {world.tasks["t0"], world.tasks["pub"]}
    assert ids(status="cancelled") == set()
    assert [r["taskId"] for r in everything(list_tasks, db, world.public)] == [world.tasks["pub"]]
    assert [r["title"] for r in everything(list_tasks, db, world.stranger)] == ["theirs"]
    for bad in ({"status": "done"}, {"status": ""}, {"kind": "Deploy Now"}, {"kind": ""}):
        with pytest.raises(ValidationError) as err:
            list_tasks(db, world.admin, **bad)
        assert err.value.field == next(iter(bad))


# =======================================================================================
# The tool call audit trail
def test_tool_calls_by_caller_and_filters(db, world):
    rows = everything(list_tool_calls, db, world.admin)
    assert [r["nodeId"] for r in rows] == [
        world.calls[n] for n in ("search-2", "create", "get", "write-failed", "search")
    ]
    failed = rows[3]
    assert failed["toolName"] == "memory-write" and failed["isError"] is True and failed["output"] == "refused"
    assert failed["sessionId"] == world.sessions["imported"] and failed["conversation"] == world.sessions["imported"]
    assert world.target in failed["input"] and isinstance(failed["durationMs"], int)
    assert rows[0]["conversation"] is None and rows[0]["sessionId"] is None

    def names(**kw: Any) -> list[str]:
        by_id = {v: k for k, v in world.calls.items()}
        return [by_id[r["nodeId"]] for r in everything(list_tool_calls, db, world.admin, **kw)]

    assert names(tool="memory-search") == ["search-2", "search"]
    assert names(is_error=True) == ["write-failed"]
    assert names(is_error=False, tool="memory-write") == []
    assert names(session_id=world.sessions["imported"]) == ["write-failed", "search"]
    conv = db.read(
        "MATCH (c:Conversation {accountId: $acc, sessionId: $sid}) RETURN c.nodeId AS id",
        acc=world.account.account_id,
        sid=world.sessions["imported"],
    )[0]["id"]
    assert names(session_id=conv) == ["write-failed", "search"]  # through the INVOKED conversation
    stamps = {r["nodeId"]: r["createdAt"] for r in rows}
    get_at = stamps[world.calls["get"]]
    assert names(after=get_at) == ["search-2", "create", "get"]
    assert names(before=get_at) == ["write-failed", "search"]
    assert names(after=stamps[world.calls["write-failed"]], before=stamps[world.calls["create"]]) == [
        "get",
        "write-failed",
    ]
    naive = datetime.fromisoformat(get_at).astimezone(UTC).replace(tzinfo=None).isoformat()
    assert names(after=naive) == names(after=get_at.replace("+00:00", "Z"))  # no zone: UTC
    assert names(after="2999-01-01") == [] and len(names(before="2999-01-01T00:00:00+02:00")) == 5

    assert list_tool_calls(db, world.public) == (0, [])
    assert list_tool_calls(db, Caller(world.account.account_id, ("public", "shared"))) == (0, [])
    assert list_tool_calls(db, Caller(world.account.account_id, ("admin",)))[0] == 5
    theirs = everything(list_tool_calls, db, world.stranger)
    assert len(theirs) == 1 and theirs[0]["nodeId"] not in world.calls.values()

    bad: list[tuple[dict[str, Any], str]] = [
        ({"after": "yesterday"}, "after"),
        ({"before": "2026-13-01"}, "before"),
        ({"after": 5}, "after"),
        ({"after": "2026-05-02", "before": "2026-05-01"}, "after"),
        ({"after": "2026-05-01", "before": "2026-05-01"}, "after"),
        ({"is_error": "yes"}, "isError"),
        ({"tool": ""}, "tool"),
        ({"tool": "a\nb"}, "tool"),
        ({"session_id": ""}, "sessionId"),
    ]
    for kw, name in bad:
        with pytest.raises(ValidationError) as err:
            list_tool_calls(db, world.admin, **kw)
        assert err.value.field == name, kw


def test_tool_calls_touching_a_node(db, world):
    rows = tool_calls_touching(db, world.admin, world.target)
    assert [r["nodeId"] for r in rows] == [world.calls["get"], world.calls["write-failed"]]  # output, input
    assert [r["nodeId"] for r in tool_calls_touching(db, world.admin, world.target, limit=1)] == [world.calls["get"]]
    assert tool_calls_touching(db, world.admin, "nothing-mentions-this") == []
    assert tool_calls_touching(db, world.public, world.target) == []
    theirs = tool_calls_touching(db, world.stranger, world.target)
    assert len(theirs) == 1 and theirs[0]["nodeId"] not in world.calls.values()
    for kw, name in [({"node_id": ""}, "nodeId"), ({"node_id": "x", "limit": 0}, "limit")]:
        with pytest.raises(ValidationError) as err:
            tool_calls_touching(db, world.admin, kw.pop("node_id"), **kw)
        assert err.value.field == name


# =======================================================================================
# Paging, for every listing: pages concatenate to the whole list; totals; bad pages
LISTINGS: dict[str, tuple[Listing, dict[str, Any]]] = {
    "documents": (list_documents, {}),
    "deleted-documents": (list_documents, {"deleted": True}),
    "conversations": (list_conversations, {}),
    "tasks": (list_tasks, {}),
    "tool-calls": (list_tool_calls, {}),
}


def _messages(db: Any, caller: Caller, *, offset: int, limit: int, session: str) -> tuple[int, list[dict[str, Any]]]:
    return session_messages(db, caller, session, offset=offset, limit=limit)


@pytest.mark.parametrize("name", [*LISTINGS, "messages"])
def test_pages_concatenate_to_the_whole_list(db, world, name):
    listing, kw = LISTINGS.get(name, (_messages, {"session": world.sessions["appended"]}))
    whole = everything(listing, db, world.admin, **kw)
    assert len(whole) >= 2

    @hsettings(max_examples=examples(15), deadline=None, database=None)
    @given(offset=st.integers(0, len(whole) + 2), limit=st.integers(1, len(whole) + 1))
    def check(offset: int, limit: int) -> None:
        total, page = listing(db, world.admin, offset=offset, limit=limit, **kw)
        assert total == len(whole) and page == whole[offset : offset + limit]
        pages, start = [], 0
        while start < total:
            pages += listing(db, world.admin, offset=start, limit=limit, **kw)[1]
            start += limit
        assert pages == whole

    check()


@pytest.mark.parametrize("name", [*LISTINGS, "messages"])
@pytest.mark.parametrize(
    ("offset", "limit", "bad"),
    [
        (-1, 10, "offset"),
        (0, 0, "limit"),
        (0, 201, "limit"),
        (True, 10, "offset"),
        (0, "5", "limit"),
        (1.5, 5, "offset"),
    ],
)
def test_bad_pages_name_the_field(db, world, name, offset, limit, bad):
    listing, kw = LISTINGS.get(name, (_messages, {"session": world.sessions["appended"]}))
    with pytest.raises(ValidationError) as err:
        listing(db, world.admin, offset=offset, limit=limit, **kw)
    assert err.value.field == bad and "whole number" in err.value.reason

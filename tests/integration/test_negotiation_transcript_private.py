"""A negotiation's transcript is the two members' only, against the real Neo4j: its Conversation,
turn Messages and task-store records carry ``CommunityRecord`` and every generic read path answers
as if they did not exist, while the negotiation itself (``describe``, what get_negotiation shows a
member) still reads every turn.

- memory-get and its neighbourhood list each of them as missing;
- memory search (the whole pipeline, and its vector and BM25 candidates alone), conversation
  search, the conversation listing and a session's messages, the briefing look-up;
- the task store's reads (task_list, task_get, task_events), the task listing, open tasks and
  provenance (by conversation, by kind);
- a plain conversation and task with the same words are found on every one of those paths;
- a generic append to the negotiation's session id starts a conversation of its own and folds none
  of the turns into its summary;
- property (hypothesis): random appends by the community and by the memory to a few sessions; the
  generic listing and each session's messages are exactly the memory's, in order.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from maxy.community import community_writer, upsert_profile
from maxy.community.negotiation import Negotiations
from maxy.community.negotiation.parked import respond_as_member
from maxy.community.opportunities import create_opportunity
from maxy.community.view import MemberView
from maxy.config import load_settings
from maxy.conversations.append import append_turn
from maxy.conversations.compaction import latest_briefing
from maxy.conversations.listing import list_conversations, session_messages
from maxy.conversations.search import search_messages
from maxy.conversations.store import find_conversation
from maxy.errors import MaxyError
from maxy.graph.guards import Caller
from maxy.graph.write import GraphWriter
from maxy.memory.neighbourhood import get_nodes
from maxy.memory.recall import recall
from maxy.provenance.queries import produced_by_conversation, tasks_by_kind
from maxy.provenance.tasks import list_tasks, open_tasks
from maxy.search import SearchRequest
from maxy.search.bm25 import bm25_search
from maxy.search.vector import vector_search
from maxy.taskstore import TaskStore

from tests.hypothesis_profile import examples

WORD = "quokkaharbour"
SEED = {"score": 80, "reasoning": "Both build graph tooling.", "valencyRole": "peer"}
SPEC = {
    "goal": f"Plan the {WORD} meetup",
    "scope_in": ["venue"],
    "scope_out": ["catering"],
    "inputs": ["dates"],
    "outputs": ["plan"],
    "acceptance_criteria": ["a venue is booked"],
    "risks": ["none"],
}


def _turn(action: str, text: str) -> dict[str, Any]:
    return {
        "action": action,
        "assessment": {"reasoning": text, "suggestedRoles": {"ownUser": "peer", "otherUser": "peer"}},
        "message": text,
    }


def _negotiate(db, account, embedder) -> dict[str, Any]:
    """Ada and Bo negotiate in person (personal agents), their turns naming WORD; the outcome is
    accepted. Returns the negotiation's view and the ids of every record it wrote beside its own."""
    cw = community_writer(db, account, embedder, Caller(account.account_id), created_by="test")
    upsert_profile(cw, "ada", name="Ada Quill", bio="Builds graph tools", model=False)
    upsert_profile(cw, "bo", name="Bo Marr", bio="Needs a graph database", model=False)
    opp = create_opportunity(
        cw,
        source_member_id="ada",
        candidate_member_id="bo",
        network_id="net-1",
        score=80,
        reasoning="Ada builds what Bo needs",
        source_role="agent",
        candidate_role="patient",
    )
    negotiations = Negotiations(db, account, load_settings(), embedder=embedder)
    out = negotiations.start(opp["opportunityId"], seed=SEED, source_kind="personal", candidate_kind="personal")
    nid = out["negotiationId"]
    respond_as_member(negotiations, "ada", nid, _turn("propose", f"Meet at the {WORD} pier on Friday"))
    respond_as_member(negotiations, "bo", nid, _turn("counter", f"The {WORD} pier on Saturday instead"))
    respond_as_member(negotiations, "ada", nid, _turn("accept", f"Saturday at {WORD} it is"))
    rows = db.read(
        "MATCH (n:CommunityRecord {accountId: $acc}) RETURN n.nodeId AS id, labels(n) AS labels",
        acc=account.account_id,
    )
    records = {r["id"]: set(r["labels"]) for r in rows}
    return {"negotiations": negotiations, "id": nid, "records": records}


def _plain(db, account, embedder) -> dict[str, Any]:
    """The same words in an ordinary conversation and task: every generic path finds these."""
    caller = Caller(account.account_id)
    memory = GraphWriter(db, account, embedder, caller=caller, created_by="test")
    sid = f"plain-{uuid.uuid4().hex[:8]}"
    for i, text in enumerate((f"Shall we go to the {WORD} pier?", f"Yes, {WORD} on Saturday")):
        append_turn(memory, sid, role="user" if i == 0 else "assistant", content=text, message_id=f"m{i}")
    task = TaskStore(db, caller, account, "orchestrator", actor="test").create(SPEC, kind="negotiation")
    return {"session": sid, "task": task["taskId"]}


def _refusal(fn: Any, value: str) -> str:
    with pytest.raises(MaxyError) as err:
        fn(value)
    return str(err.value).replace(value, "<id>")


def test_every_generic_read_path_answers_as_if_the_transcript_did_not_exist(db, account, embedder) -> None:
    n = _negotiate(db, account, embedder)
    plain = _plain(db, account, embedder)
    caller = Caller(account.account_id)  # the account's whole view: an unpinned admin's generic tools
    records, negotiations = n["records"], n["negotiations"]
    described = negotiations.describe(negotiations.load(n["id"]))
    sid, task_id = described["conversationSessionId"], described["taskId"]
    kinds = {label for labels in records.values() for label in labels}
    assert {"Conversation", "Message", "Task", "TaskEvent", "TaskAttempt", "TaskArtifact", "TaskReview"} <= kinds
    assert task_id in records and len([r for r in records.values() if "Message" in r]) == 3

    # the negotiation still reads its turns: the two members' view and the system's
    for member in ("ada", "bo"):
        seen = negotiations.describe(negotiations.load(n["id"], MemberView(caller, member)))
        assert [t["action"] for t in seen["turns"]] == ["propose", "counter", "accept"]
        assert WORD in seen["turns"][1]["message"]
    assert described["state"] == "completed" and described["outcome"]["hasOpportunity"] is True
    messages = db.read(
        "MATCH (c:Conversation:CommunityRecord {sessionId: $sid})-[:HAS_MESSAGE]->(m:Message:CommunityRecord) "
        "RETURN count(m) AS n",
        sid=sid,
    )
    assert messages[0]["n"] == 3  # every turn a message of the negotiation's conversation

    # memory-get and its neighbourhood
    got = get_nodes(db, caller, list(records), hops=2)
    assert got["nodes"] == [] and set(got["missing"]) == set(records)

    # memory search: the whole pipeline, and its candidates alone
    settings = load_settings()
    for fusion in ("weighted", "vector", "bm25"):
        hits = recall(
            db, caller, embedder, settings, SearchRequest(WORD, limit=50, min_relevance=0), fusion=fusion
        ).hits
        found = {h.node_id for h in hits}
        assert not found & set(records), fusion
    [vector] = vector_search(db, caller, [embedder.embed([f"the {WORD} pier"])[0]], None, 200)
    [bm25] = bm25_search(db, caller, [WORD], None, 200)
    assert not {h.node_id for h in vector} & set(records) and {h.node_id for h in vector}
    assert not {h.node_id for h in bm25} & set(records)
    assert {h.labels[0] for h in bm25} >= {"Message"}  # the plain conversation's turns are found

    # conversations: search, listing, a session's messages, the look-ups
    rows = search_messages(db, caller, embedder, WORD, limit=50, min_relevance=0)
    assert rows and {r["sessionId"] for r in rows} == {plain["session"]}
    total, listed = list_conversations(db, caller)
    assert total == 1 and [c["sessionId"] for c in listed] == [plain["session"]]
    assert session_messages(db, caller, sid) == (0, [])
    assert session_messages(db, caller, plain["session"])[0] == 2
    assert find_conversation(db, caller, sid) is None and latest_briefing(db, caller, sid) is None
    assert search_messages(db, caller, embedder, WORD, session_id=sid, limit=50, min_relevance=0) == []

    # tasks: the task store's reads, the listing, open tasks, provenance
    reader = TaskStore(db, caller, account, None)
    assert [t["taskId"] for t in reader.list()] == [plain["task"]]
    absent = str(uuid.uuid4())
    for name, fn in (("get", reader.get), ("events", reader.events)):
        assert _refusal(fn, task_id) == _refusal(fn, absent), name
    executor = TaskStore(db, caller, account, "executor", actor="test")
    assert _refusal(lambda i: executor.heartbeat(i, "a-1"), task_id) == _refusal(
        lambda i: executor.heartbeat(i, "a-1"), absent
    )
    total, tasks = list_tasks(db, caller)
    assert [t["taskId"] for t in tasks] == [plain["task"]] and total == 1
    assert all(t["taskId"] != task_id for t in open_tasks(db, caller, cap=50)[1])
    assert [t["taskId"] for t in tasks_by_kind(db, caller, "negotiation")] == [plain["task"]]
    assert produced_by_conversation(db, caller, sid) == []

    # the negotiation's own store still keeps its task
    kept = TaskStore(db, caller, account, None, community=True).get(task_id)
    assert kept["phase"] == "completed" and any(a["kind"] == "negotiation-outcome" for a in kept["artifacts"])


def test_a_generic_append_to_the_negotiations_session_stays_apart(db, account, embedder) -> None:
    n = _negotiate(db, account, embedder)
    caller = Caller(account.account_id)
    sid = n["negotiations"].describe(n["negotiations"].load(n["id"]))["conversationSessionId"]
    memory = GraphWriter(db, account, embedder, caller=caller, created_by="test")
    first = append_turn(memory, sid, role="user", content="hello there", message_id="mine-1")
    second = append_turn(memory, sid, role="user", content="anyone?", message_id="mine-2")
    assert second["conversationId"] not in n["records"] and first["nodeId"] not in n["records"]
    total, page = session_messages(db, caller, sid)
    assert total == 2 and [m["text"] for m in page] == ["hello there", "anyone?"]
    summaries = db.read(
        "MATCH (m:Message {sessionId: $sid}) WHERE NOT m:CommunityRecord RETURN m.summary AS s", sid=sid
    )
    assert summaries and all(WORD not in (r["s"] or "") for r in summaries)
    # the turns are still the negotiation's three, in its own conversation
    again = n["negotiations"].describe(n["negotiations"].load(n["id"]))
    assert [t["action"] for t in again["turns"]] == ["propose", "counter", "accept"]
    rows = db.read(
        "MATCH (c:Conversation {sessionId: $sid})-[:HAS_MESSAGE]->(m) "
        "RETURN c:CommunityRecord AS community, collect(m:CommunityRecord) AS marks",
        sid=sid,
    )
    assert sorted((r["community"], sorted(r["marks"])) for r in rows) == [
        (False, [False, False]),
        (True, [True, True, True]),
    ]


# -- property: the generic listing against an oracle ----------------------------------------
APPENDS = st.lists(st.tuples(st.sampled_from(["community", "memory"]), st.integers(0, 2)), min_size=1, max_size=8)


@given(appends=APPENDS)
@hsettings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_generic_conversation_reads_are_exactly_the_memorys(db, make_account, embedder, appends) -> None:
    account = make_account("transcript")
    caller = Caller(account.account_id)
    writers = {
        "community": community_writer(db, account, None, caller, created_by="test"),
        "memory": GraphWriter(db, account, None, caller=caller, created_by="test"),
    }
    sessions = [f"s-{i}" for i in range(3)]
    expected: dict[str, list[str]] = {s: [] for s in sessions}
    for i, (who, s) in enumerate(appends):
        text = f"{who} turn {i}"
        append_turn(writers[who], sessions[s], role="user", content=text, message_id=f"{who}-{i}")
        if who == "memory":
            expected[sessions[s]].append(text)
    for s in sessions:
        total, page = session_messages(db, caller, s)
        assert total == len(expected[s]) and [m["text"] for m in page] == expected[s], (appends, s)
    total, listed = list_conversations(db, caller)
    assert {c["sessionId"] for c in listed} == {s for s in sessions if len(expected[s]) >= 2}, appends
    assert all(c["messageCount"] == len(expected[c["sessionId"]]) for c in listed)
    summaries = db.read(
        "MATCH (m:Message {accountId: $acc}) WHERE NOT m:CommunityRecord RETURN m.summary AS s",
        acc=account.account_id,
    )
    assert all("community" not in (r["s"] or "") for r in summaries), appends

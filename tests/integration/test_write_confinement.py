"""Writes stay inside the caller's view, property-based, through the real memory, work and
session tools (the MCP server in-process, driven by the SDK's client) over the real Neo4j.

Random graphs over two accounts, four scopes (none, public, shared, admin), agent tags,
soft-delete marks and relationships; random writers, pinned or not; random sequences of every
write operation (memory-write create/update/edges/producedByTaskId, memory-delete,
memory-ingest, memory-report-write, memory-reindex, work-create/update/complete,
session-compact, purge) aimed at random targets, visible or not. Oracles:

- every node outside the writer's domain (its account, pinned scopes and agent; live or
  soft-deleted) is byte-identical afterwards: labels, properties (embedding included) and
  relationships, bar those to nodes the writer deleted and the audit trail's own INVOKED edges;
- every node the writer creates, and every node of its domain it updates, is in its domain;
- a call aimed at a node outside the domain answers exactly as the same call aimed at an id
  that never existed (ids substituted): refusals confirm nothing.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from maxy.accounts import create_account, validate_account
from maxy.config import load_settings
from maxy.conversations.compaction import conversation_node_id
from maxy.graph.guards import Caller
from maxy.graph.purge import purge
from maxy.graph.write import Edge, GraphWriter, NodeSpec
from maxy.ingest.identity import document_node_id
from maxy.mcp.server import create_mcp_server, pinned_context
from maxy.plugins.discovery import discover_plugins
from maxy.reports import admin_user_node_id, report_node_id
from mcp import Client

from tests.conftest import purge_account
from tests.graph_snapshot import assert_confined, in_domain, snapshot
from tests.hypothesis_profile import examples
from tests.plugins_fixture.helpers import text

SCOPES = [None, "public", "shared", "admin"]
AGENT_SETS = [None, ["a"], ["b"], ["a", "b"]]
LABELS = ["Note", "Task", "Report", "KnowledgeDocument", "Conversation", "AdminUser"]
MINUTE = "2026-05-07T06:00"
OCCURRED = "2026-05-07T06:00:00Z"
DELETED_AT = "2000-01-01T00:00:00+00:00"
FRESH_KEY = 2  # no seeded node carries natural key 2

seeded_node = st.fixed_dictionaries(
    {
        "label": st.sampled_from(LABELS),
        "scope": st.sampled_from(SCOPES),
        "agents": st.sampled_from(AGENT_SETS),
        "deleted": st.sampled_from([False, False, False, True]),
        "foreign": st.sampled_from([False, False, True]),
        "key": st.integers(0, 1),
        "child": st.sampled_from(["same", "same", "other"]),  # a document's Section: same visibility or another
    }
)
writers = st.fixed_dictionaries(
    {
        "scopes": st.sampled_from(
            [None, ("public",), ("public", "shared"), ("shared",), ("admin",), ("public", "admin")]
        ),
        "agent": st.sampled_from([None, None, "a", "b"]),
        "session": st.sampled_from([None, "s-0", "s-1"]),
    }
)
target = st.integers(0, 12)  # an index into the seeded nodes; past the end: an id that never existed
key = st.integers(0, FRESH_KEY)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("write-edge"), target, st.sampled_from(SCOPES), st.sampled_from(AGENT_SETS)),
        st.tuples(st.just("write-update"), target, st.sampled_from(SCOPES), st.sampled_from(AGENT_SETS)),
        st.tuples(st.just("write-produced-by"), target),
        st.tuples(st.just("supersede"), target),
        st.tuples(st.just("forget"), target),
        st.tuples(st.just("unlink"), target, target),
        st.tuples(st.just("delete"), key),
        st.tuples(st.just("report"), key),
        st.tuples(st.just("ingest"), key),
        st.tuples(st.just("task-update"), target),
        st.tuples(st.just("task-complete"), target, target),
        st.just(("task-create",)),
        st.just(("compact",)),
        st.just(("reindex",)),
        st.just(("purge",)),
    ),
    min_size=1,
    max_size=6,
)


# ---------------------------------------------------------------------------------------
# The graph
def _visible_parts(node: dict[str, Any]) -> tuple[str | None, list[str] | None]:
    return node["scope"], list(node["agents"]) if node["agents"] is not None else None


def seed(
    db: Any, mine: Any, theirs: Any, nodes: list[dict[str, Any]], edges: list[tuple[int, int]]
) -> list[dict[str, Any]]:
    """Write the random graph as an unpinned admin would have; returns each node with its id and account."""
    used: set[str] = set()
    out: list[dict[str, Any]] = []
    for i, n in enumerate(nodes):
        acc = theirs if n["foreign"] else mine
        a = acc.account_id
        label, k = n["label"], n["key"]
        natural = {
            "Report": lambda a=a, k=k: report_node_id(a, f"report {k}", MINUTE),
            "KnowledgeDocument": lambda a=a, k=k: document_node_id(a, f"att-{k}"),
            "Conversation": lambda a=a, k=k: conversation_node_id(a, f"s-{k}"),
            "AdminUser": lambda a=a: admin_user_node_id(a),
        }.get(label)
        node_id = natural() if natural else f"seed-{uuid.uuid4().hex[:12]}"
        if node_id in used:
            node_id = f"seed-{uuid.uuid4().hex[:12]}"
        used.add(node_id)
        props: dict[str, Any] = {
            "Note": {"name": f"note {i}", "text": f"hidden text {i}"},
            "Task": {"title": f"task {i}", "kind": "seeded", "status": "running"},
            "Report": {"title": f"report {k}", "body": f"body {i}", "keywords": ["seeded"], "occurredMinute": MINUTE},
            "KnowledgeDocument": {"attachmentId": f"att-{k}", "title": f"doc {i}", "summary": f"summary {i}"},
            "Conversation": {"sessionId": f"s-{k}", "title": f"conversation {i}"},
            "AdminUser": {"name": "Account admin"},
        }[label]
        scope, agents = _visible_parts(n)
        GraphWriter(db, acc, None, created_by="system").write(
            NodeSpec([label], props, node_id=node_id, scope=scope, agents=agents)
        )
        entry = {**n, "id": node_id, "account": a}
        out.append(entry)
        if label == "KnowledgeDocument":
            if n["child"] == "other":
                scope, agents = SCOPES[(SCOPES.index(scope) + 1) % len(SCOPES)], None
            GraphWriter(db, acc, None, created_by="system").write(
                NodeSpec(
                    ["Section"],
                    {"attachmentId": f"att-{k}", "title": f"section {i}", "summary": f"section {i}"},
                    edges=[Edge("HAS_SECTION", node_id, "in")],
                    scope=scope,
                    agents=agents,
                )
            )
    for i, j in edges:
        if i < len(out) and j < len(out) and i != j and out[i]["account"] == out[j]["account"]:
            db.write(
                "MATCH (a:Node {nodeId: $a}), (b:Node {nodeId: $b}) MERGE (a)-[:RELATED_TO]->(b)",
                a=out[i]["id"],
                b=out[j]["id"],
            )
    deleted = [n["id"] for n in out if n["deleted"]]
    db.write(
        "MATCH (n:Node) WHERE n.nodeId IN $ids OR EXISTS { MATCH (d:Node)-[:HAS_SECTION]->(n) WHERE d.nodeId IN $ids } "
        "SET n.deletedAt = $at",
        ids=deleted,
        at=DELETED_AT,
    )
    return out


# ---------------------------------------------------------------------------------------
# The calls
def _fresh() -> str:
    return f"fresh-{uuid.uuid4().hex[:12]}"


def _normal(result: Any, *ids: str) -> tuple[bool, Any]:
    """A result with the given ids replaced, reduced to what must not depend on a hidden id."""
    body = text(result)
    for i in ids:
        body = body.replace(i, "<ID>")
    if result.is_error:
        return True, body
    try:
        data = json.loads(body)
    except ValueError:
        return False, body
    if isinstance(data, dict):  # the counts and flags of a success (not its new ids, titles or times)
        return False, {k: v for k, v in data.items() if isinstance(v, (bool, int))}
    return False, type(data).__name__


TargetId = Callable[[int], str]
ToolCall = tuple[str, dict[str, Any]]


def _write_call(op: tuple, tid: TargetId, tmp: Path) -> ToolCall:
    visibility = {k: v for k, v in (("scope", op[2]), ("agents", op[3])) if v is not None}
    if op[0] == "write-edge":
        target = {"properties": {"name": "probe"}, "edges": [{"type": "RELATED_TO", "target": tid(op[1])}]}
    else:
        target = {"properties": {"text": "rewritten"}, "nodeId": tid(op[1])}
    return "memory-write", {"labels": ["Note"], **target, **visibility}


def _ingest_call(op: tuple, tid: TargetId, tmp: Path) -> ToolCall:
    path = tmp / f"ingest-{uuid.uuid4().hex[:8]}.md"
    path.write_text(f"# Ingested {op[1]}\n\nA short document about lighthouses and tides.\n")
    return "memory-ingest", {"paths": [str(path)], "attachmentId": f"att-{op[1]}"}


# operation kind -> its tool call ("purge" is no tool call: the test runs it directly)
_CALLS: dict[str, Callable[[tuple, TargetId, Path], ToolCall]] = {
    "write-edge": _write_call,
    "write-update": _write_call,
    "write-produced-by": lambda op, tid, tmp: (
        "memory-write",
        {"labels": ["Note"], "properties": {"name": "made"}, "producedByTaskId": tid(op[1])},
    ),
    "supersede": lambda op, tid, tmp: (
        "memory-write",
        {"labels": ["Fact"], "properties": {"text": "a newer fact"}, "supersede": [tid(op[1])]},
    ),
    "forget": lambda op, tid, tmp: ("memory-forget", {"nodeId": tid(op[1])}),
    "unlink": lambda op, tid, tmp: (
        "memory-remove-relation",
        {"source": tid(op[1]), "type": "RELATED_TO", "target": tid(op[2])},
    ),
    "delete": lambda op, tid, tmp: ("memory-delete", {"attachmentId": f"att-{op[1]}"}),
    "report": lambda op, tid, tmp: (
        "memory-report-write",
        {"title": f"report {op[1]}", "body": "new body", "occurredAt": OCCURRED},
    ),
    "ingest": _ingest_call,
    "task-update": lambda op, tid, tmp: ("work-update", {"taskId": tid(op[1]), "note": "progress"}),
    "task-complete": lambda op, tid, tmp: ("work-complete", {"taskId": tid(op[1]), "producedNodeIds": [tid(op[2])]}),
    "task-create": lambda op, tid, tmp: ("work-create", {"kind": "probe", "inputs": {"hostname": "x.example"}}),
    "compact": lambda op, tid, tmp: (
        "session-compact",
        {"asked": "a", "done": "d", "decisions": "", "workInProgress": "", "aboutUser": ""},
    ),
    "reindex": lambda op, tid, tmp: ("memory-reindex", {}),
}


def _call(op: tuple, graph: list[dict[str, Any]], tmp: Path) -> ToolCall:
    """The tool call of one operation; ``tid`` stands in for a target node id."""

    def tid(i: int) -> str:
        return graph[i]["id"] if i < len(graph) else f"gone-{uuid.uuid4().hex[:12]}"

    build = _CALLS.get(op[0])
    if build is None:
        raise AssertionError(op)
    return build(op, tid, tmp)


def _hidden_target(op: tuple, graph: list[dict[str, Any]], caller: Caller) -> tuple[str, str] | None:
    """(argument path, hidden id) when the op aims at a node outside the domain, for the twin call."""

    def outside(i: int) -> bool:
        if i >= len(graph):
            return False
        n = graph[i]
        props = {"accountId": n["account"], "scope": n["scope"], "agents": n["agents"]}
        return not in_domain(props, caller)

    kind = op[0]
    if kind in ("write-edge", "write-update", "write-produced-by", "task-update", "supersede", "forget") and outside(
        op[1]
    ):
        return kind, graph[op[1]]["id"]
    if kind == "unlink" and (outside(op[1]) or outside(op[2])):
        return kind, graph[op[1] if outside(op[1]) else op[2]]["id"]
    if kind == "task-complete":
        if outside(op[1]):
            return "task-complete-task", graph[op[1]]["id"]
        if op[1] < len(graph) and graph[op[1]]["label"] == "Task" and not graph[op[1]]["deleted"] and outside(op[2]):
            return "task-complete-produced", graph[op[2]]["id"]
    return None


def _twin(op_call: tuple[str, dict[str, Any]], where: str, hidden: str, fresh: str) -> tuple[str, dict[str, Any]]:
    name, args = op_call
    dumped = json.dumps(args)
    if where == "task-complete-task":
        args = {**args, "taskId": fresh}
    elif where == "task-complete-produced":
        args = {**args, "producedNodeIds": [fresh]}
    else:
        args = json.loads(dumped.replace(json.dumps(hidden)[1:-1], fresh))
    return name, args


def _key_value(op: tuple) -> str:
    return f"report {op[1]}" if op[0] == "report" else f"att-{op[1]}"


def _natural_key_twin(op: tuple, caller: Caller, db: Any) -> bool:
    """A natural-key op (delete/report/ingest) whose key no node of the domain carries: its
    answer must equal the same op's with a key nothing carries."""
    if op[0] not in ("delete", "report", "ingest") or op[1] == FRESH_KEY:
        return False
    field = "title" if op[0] == "report" else "attachmentId"
    rows = db.read(
        f"MATCH (n:Node) WHERE n.{field} = $v AND n.accountId = $acc RETURN properties(n) AS p",
        v=_key_value(op),
        acc=caller.account_id,
    )
    return not any(in_domain(r["p"], caller) for r in rows)


# ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def plugins():
    return discover_plugins(None)


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    nodes=st.lists(seeded_node, min_size=2, max_size=9),
    edges=st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), max_size=6),
    who=writers,
    ops=operations,
)
def test_writes_never_reach_outside_the_writers_domain(
    db, embedder, data_root, tmp_path, plugins, nodes, edges, who, ops
) -> None:
    mine = validate_account(data_root, create_account(data_root, "mine").account_id)
    theirs = validate_account(data_root, create_account(data_root, "theirs").account_id)
    try:
        graph = seed(db, mine, theirs, nodes, edges)
        pins = {
            "DATA_ROOT": data_root,
            "ACCOUNT_ID": mine.account_id,
            "ALLOWED_SCOPES": list(who["scopes"]) if who["scopes"] else None,
            "AGENT_SLUG": who["agent"],
            "SESSION_NODE_ID": who["session"],
        }
        base = pinned_context(load_settings(**pins), "admin", mine, db=db, embedder=embedder)
        caller = base.caller
        server = create_mcp_server(plugins, "admin", lambda plugin, headers: replace(base, plugin=plugin))
        accounts = [mine.account_id, theirs.account_id]
        before = snapshot(db, accounts)

        async def run() -> list[str]:
            problems: list[str] = []
            async with Client(server) as client:
                for op in ops:
                    if op[0] == "purge":
                        await anyio.to_thread.run_sync(lambda: purge(db, mine.account_id, grace_days=0, caller=caller))
                        continue
                    hidden = _hidden_target(op, graph, caller)
                    twin_key = _natural_key_twin(op, caller, db)
                    call = _call(op, graph, tmp_path)
                    result = await client.call_tool(*call)
                    assert "Traceback" not in text(result) and "unexpectedly" not in text(result), text(result)
                    event(f"{call[0]} {'refused' if result.is_error else 'done'}{' hidden-target' if hidden else ''}")
                    if hidden is not None:
                        fresh = _fresh()
                        twin = await client.call_tool(*_twin(call, hidden[0], hidden[1], fresh))
                        if _normal(result, hidden[1]) != _normal(twin, fresh):
                            problems.append(f"{op}: hidden {text(result)!r} vs absent {text(twin)!r}")
                    elif twin_key:
                        twin_op = (op[0], f"fresh-{uuid.uuid4().hex[:6]}")
                        twin = await client.call_tool(*_call(twin_op, graph, tmp_path))
                        if _normal(result, _key_value(op)) != _normal(twin, _key_value(twin_op)):
                            problems.append(f"{op}: {text(result)!r} vs fresh key {text(twin)!r}")
            return problems

        problems = anyio.run(run)
        assert not problems, problems

        assert_confined(before, snapshot(db, accounts), caller)
    finally:
        purge_account(db, mine.account_id)
        purge_account(db, theirs.account_id)

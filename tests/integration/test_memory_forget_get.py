"""Forgetting a node, removing a relation and reading nodes back with their neighbourhood
(``maxy.memory.forget``, ``maxy.memory.neighbourhood``) against the real Neo4j: hidden ids
get one answer, pinned views stay confined, every hop is guarded and validity-filtered; and a
property test comparing ``get_nodes`` with a brute-force oracle on random small graphs."""

from __future__ import annotations

import json
import logging
import subprocess
import uuid
from collections import deque
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from maxy.errors import GraphWriteError, ValidationError
from maxy.graph.guards import Caller
from maxy.graph.purge import purge
from maxy.graph.write import Edge, GraphWriter, NodeSpec
from maxy.memory.forget import forget_node, remove_relation
from maxy.memory.neighbourhood import get_nodes
from maxy.search import SearchRequest, hybrid

from tests.cli_inprocess import maxy
from tests.conftest import purge_account
from tests.hypothesis_profile import examples
from tests.plugins_fixture.helpers import child_env

PAST = "2000-01-01T00:00:00+00:00"
FUTURE = "2999-01-01T00:00:00+00:00"


def note(writer: GraphWriter, name: str, *, scope=None, agents=None, edges=(), **props) -> str:
    spec = NodeSpec(["Note"], {"name": name, **props}, edges=list(edges), scope=scope, agents=agents)
    return writer.write(spec).node_id


def refusal(fn, *args) -> str:
    with pytest.raises((GraphWriteError, ValidationError)) as info:
        fn(*args)
    return str(info.value)


def neighbours(result: dict[str, Any], node_id: str) -> dict[str, int]:
    node = next(n for n in result["nodes"] if n["nodeId"] == node_id)
    return {m["nodeId"]: m["hops"] for m in node["neighbours"]}


@pytest.fixture()
def admin(db, account) -> GraphWriter:
    return GraphWriter(db, account, None, created_by="test")


def pinned(db, account, scopes=None, agent=None) -> GraphWriter:
    caller = Caller(account.account_id, tuple(scopes) if scopes else None, agent)
    return GraphWriter(db, account, None, caller=caller, created_by="test")


# ---------------------------------------------------------------------------------------
# forget
def test_forget_hides_the_node_from_search_and_get_and_purge_removes_it(db, account, embedder, caplog) -> None:
    writer = GraphWriter(db, account, embedder, created_by="test")
    keeper = note(writer, "Ansel the lighthouse keeper", text="Ansel keeps the lighthouse on Skerry Point")
    other = note(writer, "Tide tables", text="Spring tides at Skerry Point", edges=[Edge("RELATED_TO", keeper)])
    caller = writer.caller

    def found() -> set[str]:
        response = hybrid(db, caller, SearchRequest("lighthouse keeper Skerry Point", limit=10), embedder)
        return {h.node_id for h in response.hits}

    assert keeper in found()
    with caplog.at_level(logging.INFO, logger="maxy"):
        result = forget_node(writer, keeper)
    assert result["nodeId"] == keeper and result["forgotten"] is True and result["labels"] == ["Note"]
    assert any(
        r.getMessage().startswith("[memory] op=forget") and "result=forgotten" in r.getMessage() for r in caplog.records
    )
    assert keeper not in found()
    got = get_nodes(db, caller, [keeper, other])
    assert got["missing"] == [keeper] and neighbours(got, other) == {}  # no longer reachable either
    stamp = db.read("MATCH (n:Node {nodeId: $id}) RETURN n.deletedAt AS d", id=keeper)[0]["d"]
    assert stamp == result["deletedAt"] and stamp.endswith("+00:00")

    # Not idempotent: the second call is the refusal an id that never existed gets.
    again = refusal(forget_node, writer, keeper)
    assert again == refusal(forget_node, writer, "never-existed").replace("never-existed", keeper)
    assert "not-writable" not in again and "nothing was written" in again

    counts = purge(db, account.account_id, grace_days=0)
    assert counts == {"Note": 1}
    assert not db.read("MATCH (n:Node {nodeId: $id}) RETURN n", id=keeper)


def test_hidden_foreign_out_of_view_and_forgotten_ids_get_one_refusal(db, account, make_account, admin) -> None:
    other = GraphWriter(db, make_account("other"), None, created_by="test")
    foreign = note(other, "their note")
    admin_only = note(admin, "admin note", scope="admin")
    agent_b = note(admin, "agent b note", scope="public", agents=["b"])
    gone = note(admin, "forgotten note", scope="public", agents=["a"])
    forget_node(admin, gone)
    view = pinned(db, account, scopes=["public"], agent="a")

    answers = {
        node_id: refusal(forget_node, view, node_id).replace(node_id, "<ID>")
        for node_id in (foreign, admin_only, agent_b, gone, f"absent-{uuid.uuid4().hex[:8]}")
    }
    assert len(set(answers.values())) == 1, answers
    assert next(iter(answers.values())) == "nodeId: no node '<ID>' that you can write; nothing was written"
    # an unpinned admin of the same account cannot reach another account's node either
    assert refusal(forget_node, admin, foreign).replace(foreign, "<ID>") == answers[foreign]
    live = db.read(
        "MATCH (n:Node) WHERE n.nodeId IN $ids AND n.deletedAt IS NULL RETURN count(n) AS c",
        ids=[foreign, admin_only, agent_b],
    )
    assert live[0]["c"] == 3  # nothing was stamped


def test_a_pinned_caller_forgets_only_nodes_no_other_view_sees(db, account, admin) -> None:
    everywhere = note(admin, "unscoped note", agents=["a"])  # scope None: seen by every scope
    public_shared = note(admin, "shared with agent b", scope="public", agents=["a", "b"])
    own = note(admin, "agent a's own note", scope="public", agents=["a"])
    view = pinned(db, account, scopes=["public"], agent="a")
    for node_id in (everywhere, public_shared):
        message = refusal(forget_node, view, node_id)
        assert message.startswith("nodeId: this node is also visible outside this server's pinned view"), message
    assert forget_node(view, own)["forgotten"] is True
    assert forget_node(admin, everywhere)["forgotten"] is True  # the unpinned admin can


def test_a_knowledge_document_is_refused_with_a_pointer_to_memory_delete(db, account, admin) -> None:
    doc = admin.write(NodeSpec(["KnowledgeDocument"], {"title": "Handbook", "attachmentId": "att-handbook"})).node_id
    message = refusal(forget_node, admin, doc)
    assert "memory-delete" in message and "att-handbook" in message and message.startswith("nodeId:")
    assert db.read("MATCH (n:Node {nodeId: $id}) RETURN n.deletedAt AS d", id=doc)[0]["d"] is None


# ---------------------------------------------------------------------------------------
# remove_relation
def test_remove_relation(db, account, make_account, admin, caplog) -> None:
    a = note(admin, "Ada")
    b = note(admin, "Bea", edges=[Edge("KNOWS", a, "in"), Edge("RELATED_TO", a, "in")])
    hidden = note(admin, "admin only", scope="admin", edges=[Edge("KNOWS", a, "in")])
    with caplog.at_level(logging.INFO, logger="maxy"):
        assert remove_relation(admin, a, "KNOWS", b) == {"source": a, "type": "KNOWS", "target": b, "removed": 1}
    assert any(r.getMessage().startswith("[memory] op=unlink") for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="maxy"):
        refusal(remove_relation, admin, a, "KNOWS", b)
    [line] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("[memory]")]
    assert "op=unlink" in line and "result=refused reason=no-relation" in line
    assert refusal(remove_relation, admin, a, "KNOWS", b) == (
        f"type: no KNOWS relation from {a!r} to {b!r}; nothing was removed"
    )
    assert "swap them" in refusal(remove_relation, admin, b, "RELATED_TO", a)
    # the nodes and the other relation stay
    assert neighbours(get_nodes(db, admin.caller, [a]), a) == {b: 1, hidden: 1}

    view = pinned(db, account, scopes=["public", "shared"])
    absent = f"absent-{uuid.uuid4().hex[:8]}"
    hidden_answer = refusal(remove_relation, view, a, "KNOWS", hidden).replace(hidden, "<ID>")
    assert hidden_answer == refusal(remove_relation, view, a, "KNOWS", absent).replace(absent, "<ID>")
    assert hidden_answer == "target: no node '<ID>' that you can write; nothing was written"
    assert refusal(remove_relation, view, hidden, "KNOWS", a).startswith("source: no node")
    assert neighbours(get_nodes(db, admin.caller, [a]), a)[hidden] == 1  # still linked

    assert refusal(remove_relation, admin, a, "SUPERSEDED_BY", b) == (
        "type: history edges cannot be removed; forget the node instead"
    )
    assert refusal(remove_relation, admin, a, "LIKES", b).startswith("type: unknown relationship type 'LIKES'")
    with pytest.raises(ValidationError, match="^source: a node id is required"):
        remove_relation(admin, " ", "KNOWS", b)


# ---------------------------------------------------------------------------------------
# get_nodes
def test_get_reads_every_property_and_walks_up_to_three_hops(db, account, admin) -> None:
    e = note(admin, "e")
    d = note(admin, "d", edges=[Edge("RELATED_TO", e)])
    c = note(admin, "c", edges=[Edge("KNOWS", d, "in")])
    b = note(admin, "b", edges=[Edge("RELATED_TO", c)], text="x" * 2000)
    a = note(admin, "a", edges=[Edge("KNOWS", b)], validFrom="2024-01-01T00:00:00+00:00")
    caller = admin.caller

    one = get_nodes(db, caller, [a], hops=1)
    node = one["nodes"][0]
    assert node["nodeId"] == a and node["labels"] == ["Note"] and one["missing"] == [] and not one["truncated"]
    assert node["properties"] == {"name": "a", "validFrom": "2024-01-01T00:00:00+00:00"}
    assert set(node["meta"]) == {"createdAt", "updatedAt", "createdBy"}
    assert "embedding" not in str(one) and account.account_id not in str(one)
    [nb] = node["neighbours"]
    assert nb["nodeId"] == b and nb["hops"] == 1 and nb["path"] == [{"type": "KNOWS", "direction": "out", "nodeId": b}]
    assert len(nb["properties"]["text"]) < 600 and nb["properties"]["text"].endswith("[1500 more chars]")

    assert neighbours(get_nodes(db, caller, [a], hops=2), a) == {b: 1, c: 2}
    three = get_nodes(db, caller, [a], hops=3)
    assert neighbours(three, a) == {b: 1, c: 2, d: 3}
    far = next(n for n in three["nodes"][0]["neighbours"] if n["nodeId"] == d)
    assert far["path"] == [
        {"type": "KNOWS", "direction": "out", "nodeId": b},
        {"type": "RELATED_TO", "direction": "out", "nodeId": c},
        {"type": "KNOWS", "direction": "in", "nodeId": d},
    ]
    assert get_nodes(db, caller, [a], hops=0)["nodes"][0]["neighbours"] == []
    both = get_nodes(db, caller, [e, a, "nope", a], hops=1)
    assert [n["nodeId"] for n in both["nodes"]] == [e, a] and both["missing"] == ["nope"]
    assert neighbours(both, e) == {d: 1}

    assert neighbours(get_nodes(db, caller, [a], hops=3, types=["KNOWS"]), a) == {b: 1}
    assert neighbours(get_nodes(db, caller, [c], hops=3, types=["KNOWS", "RELATED_TO"]), c) == {b: 1, d: 1, a: 2, e: 2}
    for bad, field in (({"hops": 4}, "hops"), ({"budget": 0}, "budget"), ({"types": ["LIKES"]}, "types")):
        with pytest.raises(ValidationError, match=f"^{field}:"):
            get_nodes(db, caller, [a], **bad)
    with pytest.raises(ValidationError, match="^nodeIds:"):
        get_nodes(db, caller, [])


def test_budget_keeps_the_nearest_neighbours_and_says_it_cut(db, account, admin) -> None:
    leaves = [note(admin, f"leaf {i}") for i in range(4)]
    far = note(admin, "far", edges=[Edge("RELATED_TO", leaves[0], "in")])
    hub = note(admin, "hub", edges=[Edge("RELATED_TO", leaf) for leaf in leaves])
    cut = get_nodes(db, admin.caller, [hub], hops=2, budget=4)
    assert cut["truncated"] is True and neighbours(cut, hub) == dict.fromkeys(leaves, 1)
    whole = get_nodes(db, admin.caller, [hub], hops=2, budget=5)
    assert whole["truncated"] is False and neighbours(whole, hub) == {**dict.fromkeys(leaves, 1), far: 2}
    # one budget for all the requested nodes together
    two = get_nodes(db, admin.caller, [hub, far], hops=1, budget=4)
    assert two["truncated"] is True and sum(len(n["neighbours"]) for n in two["nodes"]) == 4


def test_a_hidden_middle_node_blocks_the_path(db, account, make_account, admin) -> None:
    behind = note(admin, "behind the hidden node", scope="public")
    secret = note(admin, "secret", scope="admin", edges=[Edge("RELATED_TO", behind)])
    tagged = note(admin, "tagged b", scope="public", agents=["b"], edges=[Edge("RELATED_TO", behind)])
    gone = note(admin, "forgotten", scope="public", edges=[Edge("RELATED_TO", behind)])
    untagged = note(admin, "untagged", scope="public")
    start = note(
        admin,
        "start",
        scope="public",
        agents=["a"],
        edges=[Edge("RELATED_TO", t) for t in (secret, tagged, gone, untagged)],
    )
    forget_node(admin, gone)
    view = Caller(account.account_id, ("public",), "a")
    result = get_nodes(db, view, [start, secret, tagged, gone], hops=3)
    assert neighbours(result, start) == {untagged: 1}  # untagged nodes pass the related-node agent check
    assert result["missing"] == [secret, tagged, gone]
    assert behind not in str(result)
    # the unpinned admin sees the way through the live nodes
    assert neighbours(get_nodes(db, admin.caller, [start], hops=2), start) == {
        secret: 1,
        tagged: 1,
        untagged: 1,
        behind: 2,
    }


def test_validity_filters_neighbours_and_every_node_on_their_paths(db, account, admin) -> None:
    newer = note(admin, "Ada works at Globex", validFrom="2023-06-01T00:00:00+00:00")
    older = note(
        admin,
        "Ada works at Initech",
        validFrom="2020-01-01T00:00:00+00:00",
        validUntil="2023-06-01T00:00:00+00:00",
        edges=[Edge("SUPERSEDED_BY", newer)],
    )
    office = note(admin, "Initech office", edges=[Edge("LOCATED_IN", older, "in")])
    ada = note(admin, "Ada", edges=[Edge("ABOUT", newer, "in"), Edge("ABOUT", older, "in")])
    caller = admin.caller

    assert neighbours(get_nodes(db, caller, [ada], hops=2), ada) == {newer: 1}
    assert neighbours(get_nodes(db, caller, [ada], hops=2, include_history=True), ada) == {
        newer: 1,
        older: 1,
        office: 2,
    }
    assert neighbours(get_nodes(db, caller, [ada], hops=2, as_of="2021-05-01"), ada) == {older: 1, office: 2}
    # a requested node is returned whatever its validity, with its validFrom / validUntil
    [node] = get_nodes(db, caller, [older])["nodes"]
    assert node["properties"]["validUntil"] == "2023-06-01T00:00:00+00:00"
    assert neighbours({"nodes": [node]}, older) == {office: 1, ada: 1, newer: 1}
    with pytest.raises(ValidationError, match="^asOf:"):
        get_nodes(db, caller, [ada], as_of="last week")


# ---------------------------------------------------------------------------------------
# property: get_nodes against a brute-force oracle
SCOPES = [None, "public", "shared", "admin"]
AGENTS = [None, ["a"], ["b"], ["a", "b"]]
TYPES = ["RELATED_TO", "KNOWS"]

graph_node = st.fixed_dictionaries(
    {
        "scope": st.sampled_from(SCOPES),
        "agents": st.sampled_from(AGENTS),
        "deleted": st.sampled_from([False, False, False, True]),
        "foreign": st.sampled_from([False, False, False, True]),
        "validFrom": st.sampled_from([None, None, "1995-01-01T00:00:00+00:00"]),
        "validUntil": st.sampled_from([None, None, None, PAST, FUTURE]),
    }
)
callers = st.fixed_dictionaries(
    {
        "scopes": st.sampled_from([None, ("public",), ("public", "shared"), ("admin",)]),
        "agent": st.sampled_from([None, None, "a", "b"]),
    }
)


def _readable(n: dict[str, Any], caller: Caller, mine: str) -> bool:
    """Layers 1, 2, 3 and 5 in Python."""
    if n["deleted"] or n["account"] != mine:
        return False
    if caller.allowed_scopes is not None and n["scope"] is not None and n["scope"] not in caller.allowed_scopes:
        return False
    return caller.agent_slug is None or caller.agent_slug in (n["agents"] or [])


def _passable(n: dict[str, Any], caller: Caller, mine: str, as_of: str | None, history: bool) -> bool:
    """Layer 4 (untagged nodes pass the agent check) and the validity filter, in Python."""
    if n["deleted"] or n["account"] != mine:
        return False
    if caller.allowed_scopes is not None and n["scope"] is not None and n["scope"] not in caller.allowed_scopes:
        return False
    if caller.agent_slug is not None and n["agents"] is not None and caller.agent_slug not in n["agents"]:
        return False
    if history:
        return True
    at = as_of or "2026-01-01T00:00:00+00:00"  # any instant between PAST and FUTURE serves as "now"
    if as_of is not None and n["validFrom"] is not None and n["validFrom"] > at:
        return False
    return n["validUntil"] is None or n["validUntil"] > at


def _oracle(graph, edges, root: int, hops: int, types, ok) -> dict[str, int]:
    """Breadth-first search through passable nodes only: each reachable node's distance."""
    dist = {root: 0}
    queue = deque([root])
    while queue:
        here = queue.popleft()
        if dist[here] == hops:
            continue
        for i, j, t in edges:
            if types is not None and t not in types:
                continue
            for a, b in ((i, j), (j, i)):
                if a == here and b not in dist and ok(graph[b]):
                    dist[b] = dist[here] + 1
                    queue.append(b)
    return {graph[k]["id"]: d for k, d in dist.items() if k != root}


def _seed(db, graph, edges) -> None:
    db.write(
        """
        UNWIND $nodes AS row
        CREATE (n:Node:Note {nodeId: row.id, accountId: row.account, name: row.id})
        SET n.scope = row.scope, n.agents = row.agents, n.validFrom = row.validFrom, n.validUntil = row.validUntil,
            n.deletedAt = CASE WHEN row.deleted THEN $past ELSE null END
        """,
        nodes=graph,
        past=PAST,
    )
    for t in TYPES:
        rows = [{"a": graph[i]["id"], "b": graph[j]["id"]} for i, j, typ in edges if typ == t]
        db.write(
            f"UNWIND $rows AS row MATCH (a:Node {{nodeId: row.a}}), (b:Node {{nodeId: row.b}}) CREATE (a)-[:{t}]->(b)",
            rows=rows,
        )


def _node(**fields: Any) -> dict[str, Any]:
    base = {"scope": None, "agents": None, "deleted": False, "foreign": False, "validFrom": None, "validUntil": None}
    return {**base, **fields}


def _chain(middle: dict[str, Any], who: dict[str, Any], **kw: Any) -> dict[str, Any]:
    """root - middle - behind: what the caller may see of ``behind`` depends on ``middle``."""
    args = {"hops": 2, "types": None, "as_of": None, "history": False, "asked": [0]}
    return {
        "nodes": [_node(), _node(**middle), _node(scope="public")],
        "raw_edges": [(0, 1, "KNOWS"), (2, 1, "RELATED_TO")],
        "who": who,
        **{**args, **kw},
    }


ADMIN = {"scopes": None, "agent": None}


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(**_chain({"agents": ["b"]}, {"scopes": None, "agent": "a"}))
@example(**_chain({"scope": "admin"}, {"scopes": ("public",), "agent": None}))
@example(**_chain({"deleted": True}, ADMIN))
@example(**_chain({"foreign": True}, ADMIN))
@example(**_chain({"validUntil": PAST}, ADMIN))
@example(**_chain({"validUntil": PAST}, ADMIN, history=True))
@example(**_chain({"validFrom": "1995-01-01T00:00:00+00:00"}, ADMIN, as_of="1990-01-01T00:00:00+00:00"))
@example(**_chain({}, ADMIN, types=["KNOWS"]))
@given(
    nodes=st.lists(graph_node, min_size=2, max_size=9),
    raw_edges=st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8), st.sampled_from(TYPES)), max_size=14),
    who=callers,
    hops=st.integers(1, 3),
    types=st.sampled_from([None, None, ["KNOWS"]]),
    as_of=st.sampled_from([None, None, "1990-01-01T00:00:00+00:00", "2500-01-01T00:00:00+00:00"]),
    history=st.booleans(),
    asked=st.lists(st.integers(0, 9), min_size=1, max_size=4),
)
def test_get_nodes_matches_a_brute_force_oracle(db, nodes, raw_edges, who, hops, types, as_of, history, asked) -> None:
    mine, theirs = f"prop-{uuid.uuid4().hex[:10]}", f"prop-{uuid.uuid4().hex[:10]}"
    # node 0 is readable by every caller, and always asked for: every example walks a neighbourhood
    nodes = [{**nodes[0], "scope": None, "agents": ["a", "b"], "deleted": False, "foreign": False}, *nodes[1:]]
    asked = [0, *asked]
    graph = [
        {**n, "id": f"g{i}-{uuid.uuid4().hex[:6]}", "account": theirs if n["foreign"] else mine}
        for i, n in enumerate(nodes)
    ]
    edges = [(i, j, t) for i, j, t in raw_edges if i < len(graph) and j < len(graph)]
    caller = Caller(mine, who["scopes"], who["agent"])
    try:
        _seed(db, graph, edges)
        ids = list(dict.fromkeys(graph[k]["id"] if k < len(graph) else "never-there" for k in asked))
        result = get_nodes(db, caller, ids, hops=hops, types=types, budget=500, as_of=as_of, include_history=history)
        by_id = {n["id"]: k for k, n in enumerate(graph)}
        readable = [i for i in ids if i in by_id and _readable(graph[by_id[i]], caller, mine)]
        assert [n["nodeId"] for n in result["nodes"]] == readable
        assert result["missing"] == [i for i in ids if i not in readable]
        assert result["truncated"] is False

        def ok(n: dict[str, Any]) -> bool:
            return _passable(n, caller, mine, as_of, history)

        for node in result["nodes"]:
            expected = _oracle(graph, edges, by_id[node["nodeId"]], hops, types, ok)
            assert neighbours(result, node["nodeId"]) == expected
            for nb in node["neighbours"]:  # every step of every path is a real, passable edge
                here = node["nodeId"]
                assert len(nb["path"]) == nb["hops"] and nb["path"][-1]["nodeId"] == nb["nodeId"]
                for step in nb["path"]:
                    there = step["nodeId"]
                    assert ok(graph[by_id[there]])
                    pair = (here, there) if step["direction"] == "out" else (there, here)
                    assert (by_id[pair[0]], by_id[pair[1]], step["type"]) in edges
                    here = there
    finally:
        purge_account(db, mine)
        purge_account(db, theirs)


# ---------------------------------------------------------------------------------------
# the commands
def test_memory_commands(db, account, admin, data_root) -> None:
    b = note(admin, "Bea", scope="admin")
    a = note(admin, "Ada", scope="public", edges=[Edge("KNOWS", b)])
    env = child_env(data_root, ACCOUNT_ID=account.account_id, MAXY_LOG_LEVEL="WARNING")

    def run(*args: str, **pins: str) -> subprocess.CompletedProcess[str]:
        return maxy(["memory", *args], {**env, **pins}, check=False)

    got = run("get", a, "nope", "--hops", "2", "--type", "KNOWS", "--json")
    assert got.returncode == 0, got.stderr
    result = json.loads(got.stdout)
    assert result["missing"] == ["nope"] and neighbours(result, a) == {b: 1}
    shown = run("get", a)
    assert shown.returncode == 0 and "-[KNOWS]-> [Note] Bea" in shown.stdout and "name: Ada" in shown.stdout
    unknown, hidden = run("get", "nope"), run("get", b, ALLOWED_SCOPES="public")
    assert unknown.returncode == 1 and unknown.stdout == ""
    [line] = unknown.stderr.splitlines()
    assert line.startswith("error: no node you can read has the id 'nope'") and "maxy memory search" in line
    assert hidden.returncode == 1 and hidden.stderr.replace(repr(b), "'nope'") == unknown.stderr  # not told apart
    empty = run("get", "nope", "--json")
    assert empty.returncode == 1 and json.loads(empty.stdout)["missing"] == ["nope"]
    pinned_forget = run("forget", b, ALLOWED_SCOPES="public")  # the pins of the environment apply
    assert pinned_forget.returncode == 1
    assert (
        pinned_forget.stderr.splitlines()[-1] == f"error: nodeId: no node {b!r} that you can write; nothing was written"
    )
    assert json.loads(run("unlink", a, "KNOWS", b, "--json").stdout)["removed"] == 1
    assert json.loads(run("forget", a, "--json").stdout)["forgotten"] is True
    again = run("forget", a)
    assert again.returncode == 1 and "that you can write" in again.stderr and "Traceback" not in again.stderr

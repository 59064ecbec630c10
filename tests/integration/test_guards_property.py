"""Guard clauses, property-based against the real Neo4j: the product's read paths (the hybrid search pipeline in every fusion mode
with its graph expansion, the memory-search tool on a public server, conversation search)
return exactly what a plain-Python oracle allows."""

from __future__ import annotations

import re
import uuid

import pytest
from hypothesis import HealthCheck, event, example, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from maxy.conversations import search_messages
from maxy.graph.guards import Caller
from maxy.plugins import ToolContext
from maxy.plugins.discovery import load_plugin
from maxy.search import BASELINE, SearchRequest, hybrid

from tests.hypothesis_profile import examples

SCOPES = [None, "public", "shared", "admin"]
AGENT_TAGS = [None, [], ["alpha"], ["beta"], ["alpha", "beta"]]
CALLER_SCOPES = [None, ("public",), ("public", "shared"), ("admin",), ("shared",)]
CALLER_AGENTS = [None, "alpha", "beta", "gamma"]


# ---- oracle: the spec's rules, stated independently of the Cypher ---------------------
def primary_allowed(caller: Caller, node: dict) -> bool:
    if node["deleted"]:
        return False
    if node["account"] != caller.account_id:
        return False
    if caller.allowed_scopes is not None and node["scope"] is not None and node["scope"] not in caller.allowed_scopes:
        return False
    if caller.agent_slug is not None and (node["agents"] is None or caller.agent_slug not in node["agents"]):
        return False
    return True


def related_allowed(caller: Caller, node: dict) -> bool:
    if node["deleted"] or node["account"] != caller.account_id:
        return False
    if caller.allowed_scopes is not None and node["scope"] is not None and node["scope"] not in caller.allowed_scopes:
        return False
    if caller.agent_slug is not None and node["agents"] is not None and caller.agent_slug not in node["agents"]:
        return False
    return True


# ---- property test against the real Neo4j, through the product's read paths ------------
FUSIONS = ("weighted", "rrf", "vector", "bm25")
# The pipeline's response mode for each planned fusion when no path degrades.
MODE_OF = {"weighted": "hybrid", "rrf": "rrf", "vector": "vector", "bm25": "bm25"}
KINDS = ("Preference", "Message")
HIT_LINE = re.compile(r"^\[[^\]]*\] \(id: ([^)]+)\) \((?:score|relevance): [0-9.]+\)$", re.MULTILINE)

node_strategy = st.fixed_dictionaries(
    {
        "account": st.sampled_from([0, 0, 1, 2]),  # callers lean to account 0 too: more own nodes
        "scope": st.sampled_from(SCOPES),
        "agents": st.sampled_from(AGENT_TAGS),
        "deleted": st.sampled_from([False, False, False, True]),  # mostly live, so more is visible
        "kind": st.sampled_from(KINDS),
        "session": st.integers(0, 1),  # Message nodes only
    }
)
graph_strategy = st.lists(node_strategy, min_size=1, max_size=14).flatmap(
    lambda nodes: st.tuples(
        st.just(nodes),
        # At most 20 edges: no node has more than graph_expansion.MAX_RELATED (20) relationships
        # (a self-loop is matched once), so the expansion's cap never hides an allowed neighbour.
        st.lists(
            st.tuples(st.integers(0, len(nodes) - 1), st.integers(0, len(nodes) - 1)),
            min_size=min(len(nodes), 20),  # dense enough that visible hits have hidden neighbours
            max_size=20,
        ),
    )
)
# (account, scopes, agent, the session a session-limited message search asks for)
caller_strategy = st.tuples(
    st.sampled_from([0, 0, 1, 2]), st.sampled_from(CALLER_SCOPES), st.sampled_from(CALLER_AGENTS), st.integers(0, 1)
)


def _public_ctx(settings, db, account, embedder, caller: Caller) -> ToolContext:
    """A public MCP server's context, its pins in the settings as a server sets them."""
    s = settings.model_copy(
        update={
            "ACCOUNT_ID": account.account_id,
            "ALLOWED_SCOPES": list(caller.allowed_scopes) if caller.allowed_scopes else None,
            "AGENT_SLUG": caller.agent_slug,
            "SESSION_ID": None,
            "SESSION_NODE_ID": None,
        }
    )
    return ToolContext(
        settings=s, role="public", caller=caller, account=account, embedder=embedder, plugin="memory", _db=db
    )


def _tool_hits(text: str, probe: str) -> dict[str, set[str]]:
    """memory-search's text blocks -> {hit nodeId: the nodeIds on its related lines}."""
    out: dict[str, set[str]] = {}
    for block in text.split("\n---\n"):
        m = HIT_LINE.search(block)
        if m is None:
            continue
        related = {
            rid
            for line in block.splitlines()
            if line.startswith(("    --[", "    <--["))
            for rid in re.findall(rf"\(id: ({re.escape(probe)}-\d+)\)", line)  # a related node's id, in its line
        }
        out[m.group(1)] = related
    return out


def _spec(kind="Preference", account=0, scope="public", agents=("alpha",), deleted=False, session=0) -> dict:
    return {
        "account": account,
        "scope": scope,
        "agents": None if agents is None else list(agents),
        "deleted": deleted,
        "kind": kind,
        "session": session,
    }


# One graph with a node behind each guard layer, all linked to node 0 (visible to the first
# caller), so dropping any layer fails deterministically, whatever the generated examples are.
LAYERED_GRAPH = (
    [
        _spec(),  # 0: visible to an alpha caller pinned to public
        _spec(agents=None),  # 1: untagged: hidden as a hit from an agent, shown as a related node
        _spec(agents=()),  # 2: tagged for no agent: hidden from an agent either way
        _spec(agents=("beta",)),  # 3: another agent's
        _spec(scope="admin"),  # 4: outside the public scope
        _spec(scope=None, agents=("alpha", "beta")),  # 5: unscoped: visible at every scope
        _spec(deleted=True),  # 6: soft-deleted
        _spec(account=1),  # 7: another account's
        _spec("Message"),  # 8: a visible message of session 0
        _spec("Message", session=1),  # 9: a visible message of session 1
        _spec("Message", scope="shared"),  # 10
        _spec("Message", agents=("beta",)),  # 11
        _spec("Message", deleted=True),  # 12
        _spec("Message", account=2, session=1),  # 13
    ],
    [(0, i) for i in range(1, 14)] + [(1, 3), (5, 4), (7, 0)],
)
LAYERED_CALLERS = [
    (0, ("public",), "alpha", 0),
    (0, ("public", "shared"), "beta", 1),
    (0, None, None, 1),
    (0, ("admin",), None, 0),
    (1, ("public",), "alpha", 0),
    (2, None, None, 1),
]


@example(graph=LAYERED_GRAPH, callers=LAYERED_CALLERS)
@hsettings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graph=graph_strategy, callers=st.lists(caller_strategy, min_size=1, max_size=4))
def test_every_read_path_returns_exactly_what_the_guards_allow(settings, db, embedder, make_accounts, graph, callers):
    """Nodes in three accounts with random scopes, agent tags, soft deletes and edges, read
    through the product's own read paths: the hybrid pipeline in every fusion mode (hits and
    their one-hop related nodes), the memory-search tool on a public server, and conversation
    search (all sessions and one). Each must return exactly what the Python oracle allows."""
    nodes = [dict(spec) for spec in graph[0]]  # filled in below; the example's own dicts stay as drawn
    edges = graph[1]
    probe = uuid.uuid4().hex
    token = "guardprobe" + probe[:12]  # a word only this example's nodes contain
    # Every node stores the embedder's own vector of the query text, so the vector path's
    # query vector is the stored vector itself (cosine 1 for every probe node): the vector
    # path alone finds every visible node and the oracle stays exact for the vector mode
    # too, rather than weakening it to "a subset of the allowed nodes".
    [vec] = embedder.embed([token])
    sessions = [f"{probe}-s{j}" for j in range(2)]
    rows = []
    for i, spec in enumerate(nodes):
        spec["account"] = make_accounts[spec["account"]].account_id
        spec["id"] = f"{probe}-{i}"
        rows.append(
            {
                "nodeId": spec["id"],
                "kind": spec["kind"],
                "accountId": spec["account"],
                "scope": spec["scope"],
                "agents": spec["agents"],
                "deletedAt": "2026-01-01T00:00:00Z" if spec["deleted"] else None,
                "name": f"{token} node {i}",
                "content": f"{token} message {i}" if spec["kind"] == "Message" else None,
                "sessionId": sessions[spec["session"]] if spec["kind"] == "Message" else None,
                "role": "user" if spec["kind"] == "Message" else None,
            }
        )
    ids = [r["nodeId"] for r in rows]
    by_id = {n["id"]: n for n in nodes}
    neighbours: dict[str, set[str]] = {n["id"]: set() for n in nodes}
    for a, b in edges:
        neighbours[f"{probe}-{a}"].add(f"{probe}-{b}")
        neighbours[f"{probe}-{b}"].add(f"{probe}-{a}")
    memory_search = load_plugin("maxy_plugins.memory").tool("memory-search")
    assert memory_search is not None
    accounts = {a.account_id: a for a in make_accounts}
    try:
        db.write(
            """
            UNWIND $rows AS row
            CREATE (n:Node {nodeId: row.nodeId, probe: $probe})
            SET n:$(row.kind), n.accountId = row.accountId, n.scope = row.scope, n.agents = row.agents,
                n.deletedAt = row.deletedAt, n.name = row.name, n.content = row.content,
                n.sessionId = row.sessionId, n.role = row.role, n.embedding = $vec
            """,
            rows=rows,
            probe=probe,
            vec=vec,
        )
        db.write(
            """
            UNWIND $pairs AS p
            MATCH (a:Node {nodeId: p[0]}), (b:Node {nodeId: p[1]})
            CREATE (a)-[:RELATED_TO]->(b)
            """,
            pairs=[[f"{probe}-{a}", f"{probe}-{b}"] for a, b in edges],
        )
        for acc_i, scopes, agent, session_i in callers:
            caller = Caller(make_accounts[acc_i].account_id, scopes, agent)
            visible = {n["id"] for n in nodes if primary_allowed(caller, n)}
            want_prefs = {i for i in visible if by_id[i]["kind"] == "Preference"}
            want_msgs = {i for i in visible if by_id[i]["kind"] == "Message"}

            own = {n["id"] for n in nodes if n["account"] == caller.account_id}
            event(f"own-account nodes hidden by a guard: {bool(own - visible)}; visible: {bool(visible)}")
            hidden_neighbour = any(not related_allowed(caller, by_id[m]) for h in want_prefs for m in neighbours[h])
            event(f"a hit has a neighbour the guards hide: {hidden_neighbour}")

            def want_related(node_id: str, who: Caller) -> set[str]:
                return {m for m in neighbours[node_id] if related_allowed(who, by_id[m])}

            # 1. the hybrid pipeline, each fusion mode: the hits and their one-hop expansion
            for fusion in FUSIONS:
                response = hybrid(
                    db,
                    caller,
                    SearchRequest(token, limit=100, labels=("Preference",), expand_hops=1),
                    embedder,
                    BASELINE.with_(fusion=fusion),
                )
                where = (caller, fusion)
                assert response.warnings == [], (*where, response.warnings)  # both paths ran, none degraded
                assert response.mode == MODE_OF[fusion], where
                got = [h.node_id for h in response.hits]
                assert len(got) == len(set(got)) and set(got) == want_prefs, where
                if fusion == "vector":  # the query vector is the stored one: the claim above holds
                    assert all(h.vector_score > 0.99 for h in response.hits), where
                for h in response.hits:
                    rel_ids = [r.properties["nodeId"] for r in h.related]
                    assert set(rel_ids) == want_related(h.node_id, caller), (*where, "related", h.node_id)

            # 2. memory-search on a public server pinned to the caller's scopes and agent
            public = caller if scopes is not None else Caller(caller.account_id, ("public",), agent)
            ctx = _public_ctx(settings, db, accounts[public.account_id], embedder, public)
            text = memory_search.spec.fn(ctx, query=token, limit=100, labels=["Preference"])
            assert "(note:" not in text, (public, text[:300])
            got_tool = _tool_hits(text, probe)
            want_tool = {i for i in ids if by_id[i]["kind"] == "Preference" and primary_allowed(public, by_id[i])}
            assert set(got_tool) == want_tool, (public, "memory-search")
            assert (text == "No results.") == (not want_tool)
            for hit_id, rel in got_tool.items():
                assert rel == want_related(hit_id, public), (public, "memory-search related", hit_id)

            # 3. conversation search, over all sessions and limited to one
            got_msgs = {r["nodeId"] for r in search_messages(db, caller, embedder, token, limit=100)}
            assert got_msgs == want_msgs, (caller, "search_messages")
            session = sessions[session_i]
            got_session = {
                r["nodeId"] for r in search_messages(db, caller, embedder, token, session_id=session, limit=100)
            }
            assert got_session == {i for i in want_msgs if by_id[i]["session"] == session_i}, (
                caller,
                "search_messages",
                session,
            )
    finally:
        db.write("MATCH (n:Node) WHERE n.nodeId IN $ids DETACH DELETE n", ids=ids)


@pytest.fixture()
def make_accounts(make_account) -> list:
    return [make_account(f"guard-{i}") for i in range(3)]

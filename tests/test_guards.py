"""Guard clauses: unit checks of the generated Cypher, and a property-based test against the
real Neo4j where every read path returns exactly what a plain-Python oracle allows."""

from __future__ import annotations

import random
import uuid

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from maxy.errors import ValidationError
from maxy.graph.guards import Caller, node_guard, related_guard, scope_only_guard

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


# ---- unit checks -----------------------------------------------------------------------
def test_admin_guard_has_account_and_soft_delete_only():
    g = node_guard(Caller("acc-1"))
    assert g.clause == "n.deletedAt IS NULL AND n.accountId = $g_accountId"
    assert g.params == {"g_accountId": "acc-1"}


def test_public_guard_adds_scope_and_agent_layers():
    g = node_guard(Caller("acc-1", ("public",), "alpha"), var="node")
    assert "(node.scope IS NULL OR node.scope IN $g_allowedScopes)" in g.clause
    assert "(node.agents IS NOT NULL AND $g_agentSlug IN node.agents)" in g.clause
    assert g.params == {"g_accountId": "acc-1", "g_allowedScopes": ["public"], "g_agentSlug": "alpha"}


def test_related_guard_lets_untagged_nodes_through():
    g = related_guard(Caller("acc-1", ("public",), "alpha"))
    assert "(related.agents IS NULL OR $g_agentSlug IN related.agents)" in g.clause
    assert "related.accountId = $g_accountId" in g.clause


def test_scope_only_guard_drops_agent_layer_but_keeps_scope():
    g = scope_only_guard(Caller("acc-1", ("public",), "alpha"))
    assert "g_agentSlug" not in g.clause and "g_allowedScopes" in g.clause


@pytest.mark.parametrize("var", ["n; MATCH (x) DETACH DELETE x", "N", "1n", "n.x", ""])
def test_guard_rejects_unsafe_variable_names(var):
    with pytest.raises(ValidationError):
        node_guard(Caller("acc"), var=var)


def test_caller_rejects_unknown_scope_and_missing_account():
    with pytest.raises(ValidationError):
        Caller("acc", ("secret",))
    with pytest.raises(ValidationError):
        Caller("")


# ---- property test against the real Neo4j ----------------------------------------------
node_strategy = st.fixed_dictionaries(
    {
        "account": st.integers(0, 2),
        "scope": st.sampled_from(SCOPES),
        "agents": st.sampled_from(AGENT_TAGS),
        "deleted": st.booleans(),
    }
)
graph_strategy = st.lists(node_strategy, min_size=1, max_size=14).flatmap(
    lambda nodes: st.tuples(
        st.just(nodes),
        st.lists(
            st.tuples(st.integers(0, len(nodes) - 1), st.integers(0, len(nodes) - 1)),
            max_size=20,
        ),
    )
)
caller_strategy = st.tuples(st.integers(0, 2), st.sampled_from(CALLER_SCOPES), st.sampled_from(CALLER_AGENTS))


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graph=graph_strategy, callers=st.lists(caller_strategy, min_size=1, max_size=4))
def test_every_read_path_returns_exactly_what_the_guards_allow(db, embedder, make_account_ids, graph, callers):
    nodes, edges = graph
    probe = uuid.uuid4().hex
    token = "guardprobe" + probe[:12]  # a word only this example's nodes contain
    rng = random.Random(probe)
    direction = [rng.gauss(0, 1) for _ in range(embedder.dimensions)]
    rows = []
    for i, spec in enumerate(nodes):
        rows.append(
            {
                "nodeId": f"{probe}-{i}",
                "accountId": make_account_ids[spec["account"]],
                "scope": spec["scope"],
                "agents": spec["agents"],
                "deletedAt": "2026-01-01T00:00:00Z" if spec["deleted"] else None,
                "name": f"{token} node {i}",
            }
        )
        spec["account"] = make_account_ids[spec["account"]]
        spec["id"] = f"{probe}-{i}"
    db.write(
        """
        UNWIND $rows AS row
        CREATE (n:Node:Preference {nodeId: row.nodeId, probe: $probe})
        SET n.accountId = row.accountId, n.scope = row.scope, n.agents = row.agents,
            n.deletedAt = row.deletedAt, n.name = row.name, n.embedding = $vec
        """,
        rows=rows,
        probe=probe,
        vec=direction,
    )
    db.write(
        """
        UNWIND $pairs AS p
        MATCH (a:Node {nodeId: p[0]}), (b:Node {nodeId: p[1]})
        CREATE (a)-[:RELATED_TO]->(b)
        """,
        pairs=[[f"{probe}-{a}", f"{probe}-{b}"] for a, b in edges],
    )
    by_id = {n["id"]: n for n in nodes}
    neighbours: dict[str, set[str]] = {n["id"]: set() for n in nodes}
    for a, b in edges:
        neighbours[f"{probe}-{a}"].add(f"{probe}-{b}")
        neighbours[f"{probe}-{b}"].add(f"{probe}-{a}")
    try:
        for acc_i, scopes, agent in callers:
            caller = Caller(make_account_ids[acc_i], scopes, agent)
            expected = {n["id"] for n in nodes if primary_allowed(caller, n)}
            g = node_guard(caller, "n")
            rg = related_guard(caller, "related")

            # 1. plain MATCH
            got = {r["id"] for r in db.read(f"MATCH (n:Preference) WHERE n.probe = $probe AND {g.clause} RETURN n.nodeId AS id", probe=probe, **g.params)}
            assert got == expected, (caller, "match")

            # 2. BM25 through entity_search
            got = {
                r["id"]
                for r in db.read(
                    f"CALL db.index.fulltext.queryNodes('entity_search', $q, {{limit: 100}}) YIELD node AS n "
                    f"WHERE {g.clause} RETURN n.nodeId AS id",
                    q=token,
                    **g.params,
                )
            }
            assert got == expected, (caller, "bm25")

            # 3. vector index: every probe node shares one direction, so all are top hits
            got = {
                r["id"]
                for r in db.read(
                    f"CALL db.index.vector.queryNodes('preference_embedding', 100, $vec) YIELD node AS n, score "
                    f"WHERE n.probe = $probe AND {g.clause} RETURN n.nodeId AS id",
                    vec=direction,
                    probe=probe,
                    **g.params,
                )
            }
            assert got == expected, (caller, "vector")

            # 4. one-hop expansion from each visible node
            rows_out = db.read(
                f"""
                MATCH (n:Preference) WHERE n.probe = $probe AND {g.clause}
                OPTIONAL MATCH (n)-[]-(related) WHERE {rg.clause}
                RETURN n.nodeId AS id, collect(DISTINCT related.nodeId) AS rel
                """,
                probe=probe,
                **g.params,
            )
            for row in rows_out:
                want = {m for m in neighbours[row["id"]] if related_allowed(caller, by_id[m])}
                assert set(row["rel"]) == want, (caller, "expand", row["id"])
    finally:
        db.write("MATCH (n:Preference {probe: $probe}) DETACH DELETE n", probe=probe)


@pytest.fixture()
def make_account_ids(make_account) -> list[str]:
    return [make_account(f"guard-{i}").account_id for i in range(3)]

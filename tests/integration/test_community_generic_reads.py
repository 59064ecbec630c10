"""A community's records stay out of the memory's generic read paths (``outside_community``),
against the real Neo4j:

- memory-get (``get_nodes``) lists a profile, its match document, an intent, a network, a
  membership, an opportunity, a negotiation and its timer as ``missing``, exactly like an absent
  id, and its neighbourhood never reaches one, nor anything only reachable through one;
- ``read_node`` / ``readable_node_ids``, search's graph expansion and exact names, name
  resolution, forget, unlink and a generic write naming such an id answer as for an absent node;
- ``maxy export`` (an admin's whole-account copy) keeps every one of them;
- property (hypothesis): over random graphs of memory nodes and community records linked at
  random, every neighbourhood is exactly the oracle's (memory nodes reached through memory
  nodes only) and no community id is ever read.
"""

from __future__ import annotations

import io
import json
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from maxy.community import community_writer, create_network, join_network, upsert_profile
from maxy.community.negotiation import Negotiations
from maxy.community.opportunities import create_opportunity
from maxy.config import load_settings
from maxy.dataops.export import export_account
from maxy.errors import MaxyError
from maxy.graph.allowlist import COMMUNITY_LABELS
from maxy.graph.guards import Caller
from maxy.graph.nodes import read_node, readable_node_ids
from maxy.graph.write import Edge, GraphWriter, NodeSpec
from maxy.memory.forget import forget_node, remove_relation
from maxy.memory.neighbourhood import get_nodes
from maxy.search.exact_name import exact_hits
from maxy.search.graph_expansion import expand
from maxy.search.hits import Hit

from tests.hypothesis_profile import examples

SEED = {"score": 80, "reasoning": "Both work on graph tooling.", "valencyRole": "peer"}


def _community(db, account, embedder) -> dict[str, Any]:
    """Two members, a shared network, an opportunity and a negotiation (system negotiators, no
    key: the conservative rule), plus a Person the profile links to."""
    caller = Caller(account.account_id)
    cw = community_writer(db, account, embedder, caller, created_by="test")
    memory = GraphWriter(db, account, embedder, caller=caller, created_by="test")
    person = memory.write(NodeSpec(["Person"], {"name": "Grace Hopper"})).node_id
    ada = upsert_profile(cw, "ada", name="Ada Quillfeather", bio="Builds graph tools", model=False)
    upsert_profile(cw, "bo", name="Bo Marchetti", bio="Needs a graph database", model=False)
    net = create_network(cw, "ada", name="Graph builders")
    join_network(cw, "bo", net["networkId"])
    cw.write(NodeSpec(["MemberProfile"], {"memberId": "ada"}, [Edge("RELATED_TO", person)], node_id=ada["nodeId"]))
    opp = create_opportunity(
        cw,
        source_member_id="ada",
        candidate_member_id="bo",
        network_id=net["networkId"],
        score=80,
        reasoning="Ada builds what Bo needs",
        source_role="agent",
        candidate_role="patient",
    )
    negotiations = Negotiations(db, account, load_settings(), embedder=embedder)
    negotiations.start(opp["opportunityId"], seed=SEED, source_kind="personal", candidate_kind="personal")
    rows = db.read(
        "MATCH (n:Node {accountId: $acc}) WHERE any(l IN labels(n) WHERE l IN $labels) "
        "RETURN n.nodeId AS id, [l IN labels(n) WHERE l <> 'Node'] AS labels",
        acc=account.account_id,
        labels=sorted(COMMUNITY_LABELS),
    )
    ids = {r["id"]: r["labels"] for r in rows}
    return {"person": person, "profile": ada["nodeId"], "ids": ids, "memory": memory, "caller": caller}


def _refusal(fn: Any, node_id: str) -> str:
    with pytest.raises(MaxyError) as err:
        fn(node_id)
    return str(err.value).replace(node_id, "<id>")


def test_generic_reads_and_writes_treat_community_records_as_absent(db, account, embedder, make_account) -> None:
    c = _community(db, account, embedder)
    ids, caller, memory = c["ids"], c["caller"], c["memory"]
    kinds = {label for labels in ids.values() for label in labels}
    assert {"MemberProfile", "Network", "NetworkMembership", "Opportunity", "Negotiation", "NegotiationTimer"} <= kinds

    got = get_nodes(db, caller, list(ids)[:50], hops=2)
    assert got["nodes"] == [] and set(got["missing"]) == set(list(ids)[:50])
    around = get_nodes(db, caller, [c["person"]], hops=3)["nodes"][0]["neighbours"]
    assert all(n["nodeId"] not in ids for n in around), around
    assert all(read_node(db, caller, node_id) is None for node_id in ids)
    assert readable_node_ids(db, caller, [*ids, c["person"]]) == {c["person"]}

    hit = Hit(node_id=c["person"], labels=["Person"], score=1.0)
    expand(db, caller, [hit])
    assert hit.related == []  # its one relationship leads to the profile
    assert exact_hits(db, caller, None, None, "Ada Quillfeather") == []

    absent = str(uuid.uuid4())
    for name, fn in (
        ("forget", lambda i: forget_node(memory, i)),
        ("link", lambda i: memory.write(NodeSpec(["Note"], {"name": "n"}, [Edge("RELATED_TO", i)]))),
        ("unlink", lambda i: remove_relation(memory, i, "RELATED_TO", c["person"])),
    ):
        assert _refusal(fn, c["profile"]) == _refusal(fn, absent), name
    # an id in use is never taken over: refused as a node of another account is
    other = make_account("other")
    foreign = GraphWriter(db, other, embedder, caller=Caller(other.account_id)).write(NodeSpec(["Note"], {"name": "x"}))
    overwrite = lambda i: memory.write(NodeSpec(["Note"], {"name": "n"}, node_id=i))  # noqa: E731
    assert _refusal(overwrite, c["profile"]) == _refusal(overwrite, foreign.node_id)
    assert read_node(db, caller, c["person"]) is not None  # the memory's own nodes read as ever


def test_export_keeps_every_community_record(db, account, embedder, data_root) -> None:
    c = _community(db, account, embedder)
    out = io.StringIO()
    export_account(db, data_root, account.account_id, out, with_vectors=False)
    exported = {json.loads(line).get("nodeId") for line in out.getvalue().splitlines() if line.strip()}
    assert set(c["ids"]) <= exported and c["person"] in exported


# -- property: neighbourhoods against an oracle --------------------------------------------
PLAIN = ["Network", "HydeLens", "Opportunity", "Negotiation"]  # community labels written without embeddings
GRAPHS = st.tuples(
    st.lists(st.sampled_from(["Note", *PLAIN]), min_size=2, max_size=7),
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=10),
    st.sampled_from([1, 2, 3]),
)


def _oracle(kinds: list[str], edges: set[tuple[int, int]], start: int, hops: int) -> set[int]:
    """Memory nodes reached from ``start`` in at most ``hops`` steps through memory nodes only."""
    seen, frontier = {start}, {start}
    for _ in range(hops):
        frontier = {
            b
            for a in frontier
            for x, y in edges
            for b in ((y,) if x == a else (x,) if y == a else ())
            if kinds[b] == "Note" and b not in seen
        }
        seen |= frontier
    return seen - {start}


@given(graph=GRAPHS)
@hsettings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_neighbourhoods_never_pass_through_a_community_record(db, make_account, embedder, graph) -> None:
    kinds, pairs, hops = graph
    account = make_account("outside-community")
    caller = Caller(account.account_id)
    cw = community_writer(db, account, embedder, caller, created_by="test")
    memory = GraphWriter(db, account, embedder, caller=caller, created_by="test")
    node_ids = [str(uuid.uuid4()) for _ in kinds]
    for kind, node_id in zip(kinds, node_ids, strict=True):
        writer = memory if kind == "Note" else cw
        writer.write(NodeSpec([kind], {"name": f"{kind} {node_id[:6]}", "memberIds": ["ada"]}, node_id=node_id))
    edges = {(a, b) for a, b in pairs if a < len(kinds) and b < len(kinds) and a != b}
    for a, b in edges:  # the community's writer may link anything; the memory's only its own nodes
        cw.write(NodeSpec([kinds[a]], {}, [Edge("RELATED_TO", node_ids[b])], node_id=node_ids[a]))
    got = get_nodes(db, caller, node_ids, hops=hops, budget=500)
    read = {n["nodeId"]: n for n in got["nodes"]}
    assert set(read) == {node_ids[i] for i, k in enumerate(kinds) if k == "Note"}
    for i, kind in enumerate(kinds):
        if kind != "Note":
            continue
        reached = {n["nodeId"] for n in read[node_ids[i]]["neighbours"]}
        assert reached == {node_ids[j] for j in _oracle(kinds, edges, i, hops)}, (kinds, edges, i)

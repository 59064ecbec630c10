"""Entity resolution never reaches outside the writer's view, property-based against the real
Neo4j: for random people (names from a small pool, random scopes, agents, accounts, forgotten
and superseded ones) and a random pinned writer, a write resolves exactly when a plain-Python
oracle finds a live node of that label and name the writer can read, and then to one of them."""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from maxy.graph.guards import Caller
from maxy.graph.names import name_key
from maxy.graph.write import GraphWriter
from maxy.memory.remember import MemoryWrite, remember

from tests.conftest import purge_account
from tests.hypothesis_profile import examples
from tests.integration.test_guards_property import primary_allowed

NAMES = ["Ada Lovelace", "ada  lovelace!", "Grace Hopper", "GRACE HOPPER", "Alan Turing"]
SCOPES = [None, "public", "shared", "admin"]
AGENT_TAGS = [None, ["alpha"], ["beta"]]
CALLERS = [(None, None), (("public",), None), (("public", "shared"), "alpha"), (("admin",), None), (None, "beta")]

node_strategy = st.fixed_dictionaries(
    {
        "account": st.sampled_from([0, 0, 1]),
        "label": st.sampled_from(["Person", "Person", "Place"]),
        "name": st.sampled_from(NAMES),
        "scope": st.sampled_from(SCOPES),
        "agents": st.sampled_from(AGENT_TAGS),
        "deleted": st.sampled_from([False, False, False, True]),
        "ended": st.sampled_from([False, False, False, True]),
    }
)


@hsettings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    nodes=st.lists(node_strategy, min_size=1, max_size=10),
    caller_index=st.integers(0, len(CALLERS) - 1),
    name=st.sampled_from(NAMES),
)
def test_resolution_matches_the_oracle(db, make_account, nodes, caller_index, name):
    accounts = [make_account(f"res-{uuid.uuid4().hex[:6]}") for _ in range(2)]
    try:
        rows = []
        for i, n in enumerate(nodes):
            node = {**n, "id": f"res-{uuid.uuid4().hex}", "account": accounts[n["account"]].account_id, "i": i}
            rows.append(node)
        _create(db, rows)
        scopes, agent = CALLERS[caller_index]
        caller = Caller(accounts[0].account_id, scopes, agent)
        allowed = [
            r
            for r in rows
            if r["label"] == "Person"
            and name_key(r["name"]) == name_key(name)
            and not r["ended"]
            and primary_allowed(caller, r)
        ]
        writer = GraphWriter(db, accounts[0], None, caller=caller, created_by="test")
        out = remember(writer, MemoryWrite(["Person"], {"name": name}))
        if allowed:
            assert out["resolved"] in {r["id"] for r in allowed}
            assert out["resolved"] == min(allowed, key=lambda r: r["i"])["id"], "the oldest match"
        else:
            assert out["resolved"] is None and out["created"]
    finally:
        for acc in accounts:
            purge_account(db, acc.account_id)


def _create(db, rows: list[dict]) -> None:
    for label in ("Person", "Place"):
        db.write(
            f"""
            UNWIND $rows AS r
            CREATE (n:Node:{label} {{nodeId: r.id, accountId: r.account, name: r.name, nameKey: r.key,
                                     scope: r.scope, agents: r.agents, createdAt: r.created,
                                     deletedAt: CASE WHEN r.deleted THEN '2020-01-01T00:00:00+00:00' END,
                                     validUntil: CASE WHEN r.ended THEN '2020-01-01T00:00:00+00:00' END}})
            """,
            rows=[
                {**r, "key": name_key(r["name"]), "created": f"2020-01-01T00:00:{r['i']:02d}+00:00"}
                for r in rows
                if r["label"] == label
            ],
        )

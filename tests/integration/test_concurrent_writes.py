"""Many writers on one account at once, against the real Neo4j: no write fails, every
acknowledged write reads back, writers that share nodes queue for them instead of deadlocking,
writers that create the same entity at once make one node, and the embedder gives every thread
the vectors it gives one."""

from __future__ import annotations

import logging
import random
from concurrent.futures import ThreadPoolExecutor

import pytest
from maxy.graph.guards import Caller
from maxy.graph.nodes import read_node
from maxy.graph.write import Edge, GraphWriter, NodeSpec
from maxy.memory.remember import MemoryWrite, remember

THREADS = 12


@pytest.fixture()
def writer(db, account, embedder) -> GraphWriter:
    return GraphWriter(db, account, embedder, created_by="test")


def test_writers_sharing_nodes_queue_for_them_and_every_write_reads_back(db, account, writer, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    orgs = [r.node_id for r in writer.write_many(NodeSpec(["Organization"], {"name": f"Org {i}"}) for i in range(3))]

    def person(i: int) -> str:
        targets = random.Random(i).sample(orgs, len(orgs))  # each writer links the shared nodes in its own order
        edges = [Edge("WORKS_FOR", t) for t in targets]
        return remember(writer, MemoryWrite(["Person"], {"name": f"Researcher {i}"}, edges=edges))["nodeId"]

    with ThreadPoolExecutor(THREADS) as pool:
        written = list(pool.map(person, range(3 * THREADS)))  # an exception in any writer fails the test here

    caller = Caller(account.account_id)
    assert len(set(written)) == 3 * THREADS
    assert all(read_node(db, caller, node_id) is not None for node_id in written)
    links = db.read(
        "MATCH (p:Person {accountId: $acc})-[r:WORKS_FOR]->(o:Organization) RETURN count(r) AS n",
        acc=account.account_id,
    )
    assert links[0]["n"] == 3 * THREADS * len(orgs)
    assert "DeadlockDetected" not in caplog.text  # the shared nodes were locked in one order by every writer


def test_writers_creating_one_entity_at_once_make_one_node(db, account, writer, caplog):
    caplog.set_level(logging.INFO, logger="maxy")

    def ada(i: int) -> dict:
        return remember(writer, MemoryWrite(["Person"], {"name": "Ada Lovelace", f"note{i}": f"seen by writer {i}"}))

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(ada, range(THREADS)))

    rows = db.read(
        "MATCH (n:Person {accountId: $acc}) WHERE n.name = 'Ada Lovelace' RETURN n.nodeId AS id, properties(n) AS p",
        acc=account.account_id,
    )
    assert len(rows) == 1
    assert {r["nodeId"] for r in results} == {rows[0]["id"]}
    assert sum(r["created"] for r in results) == 1
    assert all(rows[0]["p"].get(f"note{i}") == f"seen by writer {i}" for i in range(THREADS))  # every write merged
    assert not db.read("MATCH (n:Node) WHERE n.nodeId STARTS WITH 'name-lock:' RETURN n")  # the locks leave nothing


def test_the_embedder_gives_every_thread_the_vectors_it_gives_one(embedder):
    texts = [f"writer {i} notes that the boiler at site {i * 7} was serviced in week {i}" for i in range(24)]
    alone = [embedder.embed([t])[0] for t in texts]
    with ThreadPoolExecutor(THREADS) as pool:
        together = list(pool.map(lambda t: embedder.embed([t])[0], texts))
    assert together == alone

#!/usr/bin/env python3
"""Minimal reproduction of a Neo4j 2026.08.1 bug: a Cypher 25 filtered vector search

    CYPHER 25 MATCH (n:L) SEARCH n IN (VECTOR INDEX idx FOR $v WHERE n.accountId = $acc LIMIT k) SCORE AS s ...

fails with java.lang.ArrayIndexOutOfBoundsException (FixedBitSet.get <- DenseLiveDocs.get <-
Weight$DefaultBulkScorer.scoreIterator) when
  (1) the LAST Lucene segment of the vector index has deleted documents (a node deleted after
      its insert transaction committed; every write transaction produces its own small segment), and
  (2) the search returns fewer than k hits, and at least one segment has no document matching the
      filter (e.g. the filter value is absent from the index).

Only needs the `neo4j` driver. Env: NEO4J_URI (default bolt://127.0.0.1:7687), NEO4J_USER
(default neo4j), NEO4J_PASSWORD. It creates and drops its own label/index (ReproChunk /
repro_chunk_embedding), touching nothing else.

    python repro.py          # the minimal case: 10 nodes, delete 1, search for an absent value -> fails
    python repro.py --matrix # a few more cases showing the conditions (which fail, which pass)
Exit code 1 if the minimal case fails (bug present), 0 otherwise.
"""
import math, os, random, sys, uuid
from neo4j import GraphDatabase

URI = os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687")
USER = os.environ.get("NEO4J_USER", "neo4j")
PASSWORD = os.environ["NEO4J_PASSWORD"]
DIMS = 384
LABEL, INDEX = "ReproChunk", "repro_chunk_embedding"
rng = random.Random(42)


def vec():
    v = [rng.gauss(0, 1) for _ in range(DIMS)]
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def reset(drv):
    drv.execute_query(f"DROP INDEX {INDEX} IF EXISTS")
    with drv.session() as s:  # auto-commit transaction (needed for IN TRANSACTIONS)
        s.run(f"MATCH (n:{LABEL}) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 5000 ROWS").consume()
    drv.execute_query(
        f"CYPHER 25 CREATE VECTOR INDEX {INDEX} FOR (n:{LABEL}) ON n.embedding WITH [n.accountId] "
        f"OPTIONS {{indexConfig: {{`vector.dimensions`: {DIMS}, `vector.similarity_function`: 'cosine'}}}}")
    drv.execute_query("CALL db.awaitIndexes(300)")


def insert(drv, accounts):
    """One write transaction (-> one new Lucene segment). Returns the created rows."""
    rows = [{"id": str(uuid.uuid4()), "acc": a, "v": vec()} for a in accounts]
    drv.execute_query(f"UNWIND $rows AS r CREATE (n:{LABEL} {{nodeId: r.id, accountId: r.acc}}) "
                      f"SET n.embedding = r.v", rows=rows)
    return rows


def delete(drv, node_id):
    drv.execute_query(f"MATCH (n:{LABEL} {{nodeId: $id}}) DETACH DELETE n", id=node_id)


def search(drv, acc, limit=100):
    q = (f"CYPHER 25 MATCH (n:{LABEL}) SEARCH n IN (VECTOR INDEX {INDEX} FOR $v "
         f"WHERE n.accountId = $acc LIMIT {limit}) SCORE AS s RETURN n.nodeId AS id, s")
    try:
        return f"ok ({len(drv.execute_query(q, v=vec(), acc=acc)[0])} rows)"
    except Exception as e:
        return f"FAILED: {getattr(e, 'code', '')} {getattr(e, 'message', e)}"


def minimal(drv):
    reset(drv)
    rows = insert(drv, ["acc-A"] * 10)                      # tx 1: 10 nodes -> segment _0
    absent = str(uuid.uuid4())
    print("10 nodes (accountId='acc-A'), absent filter value   ->", search(drv, absent))
    delete(drv, rows[0]["id"])                               # tx 2: delete one -> _0 gets deletions (.liv)
    print("after deleting 1 node: filter 'acc-A'              ->", search(drv, "acc-A"))
    r = search(drv, absent)
    print("after deleting 1 node: absent filter value         ->", r)
    return r.startswith("FAILED")


def matrix(drv):
    # (description, segments as lists of accountIds (one insert tx each), deletions (segment, accountId), queries)
    cases = [
        ("2 segs, delete in LAST seg", [["A"] * 10, ["A"] * 10], [(1, "A")],
         [("Z", 100), ("Z", 1), ("A", 100)]),
        ("2 segs, delete in FIRST seg only", [["A"] * 10, ["A"] * 10], [(0, "A")],
         [("Z", 100), ("A", 100)]),
        ("2 segs, no delete", [["A"] * 10, ["B"] * 10], [],
         [("Z", 100), ("A", 100)]),
        ("2 segs, whole last seg deleted (seg dropped)", [["A"] * 10, ["A"]], [(1, "A")],
         [("Z", 100)]),
        ("seg0 A*10, seg1 B*200, delete a B", [["A"] * 10, ["B"] * 200], [(1, "B")],
         [("A", 100), ("A", 5), ("B", 100), ("B", 250)]),
        ("seg0 A*10, seg1 A*5+B*5, delete an A", [["A"] * 10, ["A"] * 5 + ["B"] * 5], [(1, "A")],
         [("A", 100), ("B", 100), ("B", 3)]),
    ]
    for name, segs, dels, queries in cases:
        reset(drv)
        created = [insert(drv, s) for s in segs]
        for si, acc in dels:
            delete(drv, next(r["id"] for r in created[si] if r["acc"] == acc))
        print(f"- {name}: segments={[{a: s.count(a) for a in sorted(set(s))} for s in segs]} deleted={dels}")
        for acc, lim in queries:
            print(f"    filter {acc!r} LIMIT {lim}: {search(drv, acc, lim)}")


def main():
    drv = GraphDatabase.driver(URI, auth=(USER, PASSWORD))
    print("server:", drv.get_server_info().agent)
    try:
        if "--matrix" in sys.argv:
            matrix(drv)
        failed = minimal(drv)
        print("BUG REPRODUCED" if failed else "not reproduced")
        drv.execute_query(f"DROP INDEX {INDEX} IF EXISTS")
        drv.execute_query(f"MATCH (n:{LABEL}) DETACH DELETE n")
    finally:
        drv.close()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

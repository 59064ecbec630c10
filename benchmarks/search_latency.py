"""Search latency at scale: the whole pipeline against the bare index calls, same run.

    .venv/bin/python benchmarks/search_latency.py --dir path/to/scifact [--sizes 10000 100000] [--queries 200] [--json]

For each size, an account holding that many Chunk nodes is built once (reused by later
runs; ``--rebuild`` starts over). Chunk texts are drawn from the SciFact corpus vocabulary
so BM25 sees realistic term statistics; their vectors are synthetic (topic centre plus
noise) because embedding 100k passages on two CPU cores takes hours and latency does not
depend on where a vector came from. Queries are real SciFact claims, embedded by the real
model inside the timed pipeline. ``--dir`` names the SciFact folder in BEIR format
(``corpus.jsonl``, ``queries.jsonl``; see docs/search-quality.md).

Printed per size: pipeline p50/p95 and per-stage medians, the bare calls (query embedding +
one vector-index SEARCH + one full-text query at the same depth) p50/p95, and the ratio.
"""

from __future__ import annotations

import argparse
import json
import time

from _scifact import add_dir_argument, require_dir
from _synthetic import build
from maxy.config import load_settings
from maxy.db import Database
from maxy.embeddings import get_embedder, without_cache
from maxy.evaluation.metrics import percentile
from maxy.graph.guards import Caller
from maxy.graph.schema import apply_schema
from maxy.neo4j.footprint import disk_footprint
from maxy.neo4j.runtime import Neo4jRuntime
from maxy.search import BASELINE, NON_LLM, SearchRequest, hybrid
from maxy.search.lucene import build_query


def bare_calls(db, embedder, caller: Caller, query: str, k: int) -> tuple[float, float, float]:
    """Query embedding + one vector SEARCH + one full-text call, with the account filter: the
    total milliseconds, and the vector and full-text calls' own."""
    t0 = time.perf_counter()
    vec = embedder.embed([query])[0]
    t1 = time.perf_counter()
    db.read(
        "CYPHER 25 MATCH (n:Chunk) SEARCH n IN (VECTOR INDEX chunk_embedding FOR $v WHERE n.accountId = $g_accountId "
        "LIMIT $k) SCORE AS score RETURN n.nodeId AS id, score",
        v=vec,
        k=k,
        g_accountId=caller.account_id,
    )
    t2 = time.perf_counter()
    db.read(
        "CALL db.index.fulltext.queryNodes('entity_search', $q, {limit: $k}) YIELD node AS n, score "
        "RETURN n.nodeId AS id, score",
        q=build_query(query, account_id=caller.account_id) or "x",
        k=k,
    )
    t3 = time.perf_counter()
    return (t3 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000


def footprint(db, settings) -> dict:
    """The database's bytes on disk by part (a managed server only), the nodes it holds, and the
    JVM heap in use, committed and at most (heap in use includes garbage not yet collected)."""
    out: dict = {"nodes": db.read("MATCH (n:Node) RETURN count(n) AS c")[0]["c"]}
    if settings.neo4j_is_managed:
        runtime = Neo4jRuntime.from_settings(settings)
        out["disk_bytes"] = disk_footprint(runtime.home, settings.NEO4J_DATABASE or None)
    heap = db.read(
        "CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes "
        "RETURN attributes.HeapMemoryUsage.value.properties AS heap"
    )[0]["heap"]
    out["heap_bytes"] = {k: heap[k] for k in ("used", "committed", "max")}
    return out


def postings(db, account_id: str, queries: list[str]) -> float:
    """The median number of the account's nodes each query's full-text query matches (what BM25
    has to score), counted without a limit."""
    counts = []
    for q in queries:
        lucene = build_query(q, account_id=account_id)
        if lucene is not None:
            counts.append(
                db.read(
                    "CALL db.index.fulltext.queryNodes('entity_search', $q) YIELD node RETURN count(node) AS c",
                    q=lucene,
                )[0]["c"]
            )
    return percentile(counts, 50)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_dir_argument(parser)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    scifact = require_dir(parser, args.dir, "corpus.jsonl", "queries.jsonl")

    settings = load_settings()
    embedder = without_cache(get_embedder(settings))  # the model timed, not the cache
    queries = [json.loads(line)["text"] for line in (scifact / "queries.jsonl").open()][: args.queries]
    report = []
    with Database(settings) as db:
        apply_schema(db, embedder.dimensions, embedder=embedder)
        for size in args.sizes:
            account_id = build(db, settings, size, embedder.dimensions, args.rebuild, embedder.name, scifact)
            caller = Caller(account_id)
            request = lambda q: SearchRequest(q, limit=10, expand_hops=1)  # noqa: E731
            for q in queries[:10]:  # warm caches and the JIT
                hybrid(db, caller, request(q), embedder)
                bare_calls(db, embedder, caller, q, BASELINE.candidate_k)
            pipeline, bare, bare_vector, bare_fulltext, staged, stages = [], [], [], [], [], {}
            for q in queries:
                t0 = time.perf_counter()
                response = hybrid(db, caller, request(q), embedder)
                pipeline.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                hybrid(
                    db, caller, SearchRequest(q, limit=10, expand_hops=1, retrieval_class="general"), embedder, NON_LLM
                )
                staged.append((time.perf_counter() - t0) * 1000)
                for key, value in response.stats.items():
                    if key.endswith("_ms"):
                        stages.setdefault(key, []).append(value)
                total, vector_ms, fulltext_ms = bare_calls(db, embedder, caller, q, BASELINE.candidate_k)
                bare.append(total)
                bare_vector.append(vector_ms)
                bare_fulltext.append(fulltext_ms)
            row = {
                "chunks": size,
                "queries": len(queries),
                "pipeline_p50_ms": round(percentile(pipeline, 50), 1),
                "pipeline_p95_ms": round(percentile(pipeline, 95), 1),
                "bare_p50_ms": round(percentile(bare, 50), 1),
                "bare_p95_ms": round(percentile(bare, 95), 1),
                "stages_p50_ms": {k: round(percentile(v, 50), 1) for k, v in sorted(stages.items())},
                "bare_vector_p50_ms": round(percentile(bare_vector, 50), 1),
                "bare_fulltext_p50_ms": round(percentile(bare_fulltext, 50), 1),
                "fulltext_matches_p50": postings(db, account_id, queries),
                **footprint(db, settings),
            }
            row["all_stages_p50_ms"] = round(percentile(staged, 50), 1)
            row["all_stages_p95_ms"] = round(percentile(staged, 95), 1)
            row["all_stages_vs_baseline_p95"] = round(row["all_stages_p95_ms"] / row["pipeline_p95_ms"], 2)
            row["ratio_p50"] = round(row["pipeline_p50_ms"] / row["bare_p50_ms"], 2)
            row["ratio_p95"] = round(row["pipeline_p95_ms"] / row["bare_p95_ms"], 2)
            report.append(row)
            if not args.json:
                print(f"{size} chunks, {len(queries)} queries")
                print(f"  pipeline  p50 {row['pipeline_p50_ms']:7.1f} ms  p95 {row['pipeline_p95_ms']:7.1f} ms")
                print(f"  bare      p50 {row['bare_p50_ms']:7.1f} ms  p95 {row['bare_p95_ms']:7.1f} ms")
                print(f"  ratio     p50 {row['ratio_p50']:7.2f}x    p95 {row['ratio_p95']:7.2f}x   (goal <= 1.5x)")
                print("  stages    " + "  ".join(f"{k[:-3]}={v}" for k, v in row["stages_p50_ms"].items()))
                print(
                    f"  bare calls alone  vector p50 {row['bare_vector_p50_ms']} ms  full-text p50 "
                    f"{row['bare_fulltext_p50_ms']} ms ({row['fulltext_matches_p50']:.0f} matching nodes per query, median)"
                )
                heap = row["heap_bytes"]
                print(
                    f"  database  {row['nodes']} nodes; heap used {heap['used'] / 2**30:.2f} of {heap['max'] / 2**30:.2f} GiB"
                )
                if row.get("disk_bytes"):
                    print("  disk      " + "  ".join(f"{k}={v / 2**30:.2f} GiB" for k, v in row["disk_bytes"].items()))
                print(
                    f"  all non-LLM stages on  p50 {row['all_stages_p50_ms']:7.1f} ms  p95 {row['all_stages_p95_ms']:7.1f} ms"
                    f"  ({row['all_stages_vs_baseline_p95']:.2f}x the baseline p95; goal <= 2x)"
                )
    if args.json:
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

"""What a search of a small account pays for its own BM25 statistics: counted while it waits,
stale (used, counted again beside it), or fresh, on the same claims in one run.

    MAXY_CONFIG_DIR=... PYTHONPATH=platform python benchmarks/bm25_stats.py \\
        --dir path/to/scifact [--split dev] [--queries 300] [--json]

The SciFact eval account must already be ingested (``maxy eval beir``) and hold less than half
of the database's nodes, so that its BM25 ranks by its own statistics: a database built with
``benchmarks/tenants.py`` is one. Each claim is searched the way an agent searches (limit 10,
every label), with the embedder's cache off, in four passes over the same claims:

1. untimed, so that every pass reads warm indexes;
2. **counted**: every statistic dropped before each search, so the account's size and each
   word's count are counted while it waits. This is what the first search of a word costs, and
   what every search paid once its counts were five minutes old before stale counts were kept
   (the baseline);
3. **stale**: every count older than the fresh period: used as it is and counted again beside
   the search, on the counting pool (that load is in the figures);
4. **fresh**: the counts used as they are.

Printed: p50 / p95 of the whole search and of its BM25 stage, in ms.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from _scifact import add_dir_argument, require_dir
from maxy.config import load_settings
from maxy.db import Database
from maxy.embeddings import get_embedder, without_cache
from maxy.evaluation.beir import eval_account, load_beir
from maxy.evaluation.metrics import percentile
from maxy.graph.guards import Caller
from maxy.search import SearchRequest, account_bm25, hybrid


def run_pass(db: Database, caller: Caller, embedder: Any, claims: list[str], before: Any = None) -> dict[str, Any]:
    total, bm25 = [], []
    for claim in claims:
        if before is not None:
            before()
        request = SearchRequest(claim, limit=10, expand_hops=0, min_relevance=0)
        t0 = time.perf_counter()
        response = hybrid(db, caller, request, embedder)
        total.append((time.perf_counter() - t0) * 1000)
        bm25.append(response.stats.get("bm25_ms", 0.0))
    return {
        "p50_ms": round(percentile(total, 50), 1),
        "p95_ms": round(percentile(total, 95), 1),
        "bm25_p50_ms": round(percentile(bm25, 50), 1),
        "bm25_p95_ms": round(percentile(bm25, 95), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_dir_argument(parser)
    parser.add_argument("--split", default="dev", help="qrels file (default: %(default)s)")
    parser.add_argument("--queries", type=int, default=300, help="claims searched (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    directory = require_dir(parser, args.dir, "corpus.jsonl", "queries.jsonl", f"qrels/{args.split}.tsv")

    settings = load_settings()
    embedder = without_cache(get_embedder(settings))
    data = load_beir(directory, args.split)
    claims = [data.queries[q] for q in data.qrels if q in data.queries][: args.queries]
    account = eval_account(settings, data)
    caller = Caller(account.account_id)
    with Database(settings) as db:
        account_bm25.forget()
        corpus = account_bm25.account_corpus(db, account.account_id)
        if corpus is None:
            parser.exit(
                2,
                f"{parser.prog}: the eval account holds no nodes or at least half of the database, so it "
                "ranks by the index's statistics: ingest it beside other accounts (benchmarks/tenants.py)\n",
            )
        nodes = db.read("MATCH (n:Node) RETURN count(n) AS c")[0]["c"]
        run_pass(db, caller, embedder, claims)  # warm indexes and model
        fresh_s = account_bm25.TTL_S
        figures: dict[str, Any] = {"claims": len(claims), "account_nodes": corpus.documents, "database_nodes": nodes}
        figures["counted"] = run_pass(db, caller, embedder, claims, before=account_bm25.forget)
        account_bm25.forget()
        run_pass(db, caller, embedder, claims)  # every word counted once, untimed
        account_bm25.TTL_S = 0.0  # every count is now stale
        try:
            figures["stale"] = run_pass(db, caller, embedder, claims)
        finally:
            account_bm25.TTL_S = fresh_s
        figures["fresh"] = run_pass(db, caller, embedder, claims)
    if args.json:
        print(json.dumps(figures))
        return
    print(
        f"SciFact {args.split}: {len(claims)} claims; the account holds {corpus.documents:,} of the "
        f"database's {nodes:,} nodes"
    )
    print(f"{'statistics':40s} {'p50 ms':>8s} {'p95 ms':>8s} {'BM25 p50':>9s} {'BM25 p95':>9s}")
    for key, label in (
        ("counted", "counted while the search waits (baseline)"),
        ("stale", "stale: used, counted again beside"),
        ("fresh", "fresh: used as they are"),
    ):
        f = figures[key]
        print(f"{label:40s} {f['p50_ms']:8.1f} {f['p95_ms']:8.1f} {f['bm25_p50_ms']:9.1f} {f['bm25_p95_ms']:9.1f}")


if __name__ == "__main__":
    main()

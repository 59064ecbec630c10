"""Nodes per second through the write primitive (with embeddings, batched) against the
embedder alone on the same texts, in the same run.

    .venv/bin/python benchmarks/write_throughput.py [--nodes 2000] [--batch 256] [--json]

Writes into a throwaway account that is removed afterwards. Goal: ratio >= 0.85, i.e. the
graph adds at most 15% to the cost of embedding.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from maxy.accounts import create_account, validate_account
from maxy.config import load_settings
from maxy.db import Database
from maxy.embeddings import get_embedder, without_cache
from maxy.graph.schema import apply_schema
from maxy.graph.write import GraphWriter, NodeSpec

WORDS = (
    "graph memory agent search vector index boiler invoice customer meeting schedule report "
    "retrieval knowledge document section chunk summary neo4j embedding account scope public "
    "shared admin task provenance conversation message review service price event workflow"
).split()


def make_texts(n: int, lo: int, hi: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi))) for _ in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument(
        "--words",
        type=int,
        nargs=2,
        default=[80, 200],
        metavar=("MIN", "MAX"),
        help="words per text (default: chunk-sized passages, 80-200 words)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    settings = load_settings()
    embedder = without_cache(get_embedder(settings))  # the model timed, not the cache
    texts = make_texts(args.nodes, *args.words)
    embedder.embed(texts[:64])  # load the model outside the timings

    with tempfile.TemporaryDirectory() as tmp, Database(settings) as db:
        apply_schema(db, embedder.dimensions, embedder=embedder)
        account = validate_account(Path(tmp), create_account(Path(tmp), "bench").account_id)
        writer = GraphWriter(db, account, embedder, batch_size=args.batch)
        try:
            t0 = time.perf_counter()
            for i in range(0, len(texts), args.batch):
                embedder.embed(texts[i : i + args.batch])
            embed_s = time.perf_counter() - t0

            specs = [NodeSpec(["Chunk"], {"content": t, "summary": t}) for t in texts]
            t0 = time.perf_counter()
            results = writer.write_many(specs)
            write_s = time.perf_counter() - t0
            assert len(results) == len(texts) and all(r.embedded for r in results)
        finally:
            db.autocommit(
                "MATCH (n:Node {accountId: $a}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 2000 ROWS",
                a=account.account_id,
            )

    embed_rate = len(texts) / embed_s
    write_rate = len(texts) / write_s
    figures = {
        "nodes": len(texts),
        "batch": args.batch,
        "words": args.words,
        "embedder": embedder.name,
        "embedder_only_per_s": round(embed_rate, 1),
        "write_primitive_per_s": round(write_rate, 1),
        "ratio": round(write_rate / embed_rate, 3),
    }
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"embedder alone      {embed_rate:8.1f} texts/s  ({embed_s:.2f} s)")
        print(f"write primitive     {write_rate:8.1f} nodes/s  ({write_s:.2f} s, embeddings + Neo4j)")
        print(f"ratio               {figures['ratio']:8.3f}   (goal >= 0.85)")
    sys.exit(0)


if __name__ == "__main__":
    main()

"""Maxy's hybrid search against neo4j-graphrag's ``HybridRetriever``: same Neo4j, same embedder,
same data, one run.

    MAXY_CONFIG_DIR=... PYTHONPATH=platform python benchmarks/peer_graphrag.py \\
        --dir path/to/scifact [--split dev] [--queries N] [--json]

``--dir`` is a SciFact folder in BEIR format (see docs/search-quality.md, "The evaluation data").

Maxy's side is exactly ``maxy eval beir --fusion weighted``: ``ensure_corpus`` (reuses the
eval account when it already holds the whole corpus) and ``run_queries``.

neo4j-graphrag's side runs over the eval account's Chunk nodes (the corpus as Maxy ingested
it: KnowledgeDocument -> Section -> Chunk, ``attachmentId = "beir:<corpus _id>"``).
``HybridRetriever`` takes one vector index and one full-text index and has no tenant filter,
and this database holds other accounts' chunks too, so the script gives it indexes of its own:
the helper label ``:GraphragBench`` on the eval account's live chunks, a vector index over
their existing ``embedding`` (cosine, the embedder's dimensions) and a full-text index over
their ``content`` (the ``english`` analyzer, as ``entity_search`` uses). Label and indexes are
removed at the end, also on failure, Ctrl-C or SIGTERM. Each graphrag search embeds the query with
Maxy's embedder (wrapped as a graphrag ``Embedder``) and runs ``search(top_k=300)``, the same
candidate depth as Maxy's (``candidate_k = limit = 300``); its chunks collapse to corpus ids
best-first like ``rank_documents``, cut at 100 documents.

Two graphrag rankers are run: ``naive`` (its default) and ``linear`` with ``alpha=0.7`` (the
vector weight Maxy's weighted fusion uses). The systems run interleaved, query by query (Maxy,
then each graphrag ranker, from ``run_queries``' progress hook after Maxy's clock has stopped),
so load from other jobs on the machine falls on all of them alike. Printed: nDCG@10, Recall@100, MRR@10, latency
p50/p95 (ms per query, query embedding included on both sides) and the query count.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
import warnings
from typing import Any

from _scifact import add_dir_argument, require_dir
from maxy.config import load_settings
from maxy.db import Database
from maxy.embeddings import get_embedder, without_cache
from maxy.evaluation.beir import ATTACHMENT_PREFIX, BeirData, ensure_corpus, eval_account, load_beir, run_queries
from maxy.evaluation.metrics import mrr_at_k, ndcg_at_k, percentile, recall_at_k
from maxy.graph.schema import apply_schema
from maxy.heap import settle
from maxy.search.lucene import escape_lucene

try:
    from neo4j_graphrag.embeddings.base import Embedder as GraphragEmbedder
    from neo4j_graphrag.retrievers import HybridRetriever
    from neo4j_graphrag.types import RetrieverResultItem
except ImportError:  # pragma: no cover
    sys.exit("neo4j-graphrag is not installed: pip install neo4j-graphrag (the `bench` extra)")

LABEL = "GraphragBench"
VECTOR_INDEX = "graphrag_bench_embedding"
FULLTEXT_INDEX = "graphrag_bench_fulltext"
TOP_K = 300  # graphrag candidates per index and final nodes, as Maxy's candidate_k = limit = 300
DEPTH = 100  # documents kept per query (Recall@100)
ALPHA = 0.7  # graphrag's linear ranker, set to Maxy's vector weight


class MaxyEmbedder(GraphragEmbedder):
    """Maxy's embedder behind neo4j-graphrag's Embedder interface."""

    def __init__(self, embedder: Any):
        super().__init__()
        self.inner = embedder

    def embed_query(self, text: str) -> list[float]:
        return list(self.inner.embed([text])[0])


def subset(data: BeirData, n: int | None) -> BeirData:
    """The first ``n`` judged queries (qrels order, as run_queries walks them)."""
    ids = [q for q in data.qrels if q in data.queries]
    if n is not None:
        ids = ids[:n]
    return BeirData(data.name, data.corpus_hash, data.corpus, data.queries, {q: data.qrels[q] for q in ids})


# -- graphrag's indexes -------------------------------------------------------------------
def cleanup(db: Database) -> None:
    """Drop what setup() made; safe to call when any of it is missing."""
    db.write(f"DROP INDEX {VECTOR_INDEX} IF EXISTS")
    db.write(f"DROP INDEX {FULLTEXT_INDEX} IF EXISTS")
    while db.write(f"MATCH (n:{LABEL}) WITH n LIMIT 5000 REMOVE n:{LABEL} RETURN count(n) AS c")[0]["c"]:
        pass


def setup(db: Database, account_id: str, dimensions: int, timeout_s: int = 600) -> dict[str, int]:
    cleanup(db)  # leftovers of an interrupted run
    labelled = db.write(
        f"MATCH (c:Chunk {{accountId: $a}}) WHERE c.deletedAt IS NULL AND c.embedding IS NOT NULL "
        f"SET c:{LABEL} RETURN count(c) AS c",
        a=account_id,
    )[0]["c"]
    db.write(
        f"CREATE VECTOR INDEX {VECTOR_INDEX} IF NOT EXISTS FOR (n:{LABEL}) ON n.embedding "
        f"OPTIONS {{indexConfig: {{`vector.dimensions`: {int(dimensions)}, `vector.similarity_function`: 'cosine'}}}}"
    )
    db.write(
        f"CREATE FULLTEXT INDEX {FULLTEXT_INDEX} IF NOT EXISTS FOR (n:{LABEL}) ON EACH [n.content] "
        "OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}"
    )
    deadline = time.monotonic() + timeout_s
    while True:
        rows = db.read(
            "SHOW INDEXES YIELD name, state, populationPercent WHERE name IN $names RETURN name, state, populationPercent",
            names=[VECTOR_INDEX, FULLTEXT_INDEX],
        )
        if len(rows) == 2 and all(r["state"] == "ONLINE" for r in rows):
            break
        if any(r["state"] == "FAILED" for r in rows) or time.monotonic() > deadline:
            raise RuntimeError(f"graphrag indexes did not come online: {rows}")
        time.sleep(1)
    unlabelled = db.read(
        "MATCH (c:Chunk {accountId: $a}) WHERE c.deletedAt IS NULL AND c.embedding IS NULL RETURN count(c) AS c",
        a=account_id,
    )[0]["c"]
    return {"chunks": labelled, "chunks_without_embedding": unlabelled}


def _attachment(record: Any) -> RetrieverResultItem:
    node = record.get("node") or {}
    return RetrieverResultItem(content=node.get("attachmentId") or "", metadata={"score": record.get("score")})


class GraphragRun:
    """One graphrag ranker's queries, metrics and latencies, fed one query at a time."""

    def __init__(
        self, retriever: HybridRetriever, embedder: MaxyEmbedder, data: BeirData, ranker: str, alpha: float | None
    ):
        self.retriever, self.embedder, self.data = retriever, embedder, data
        self.ranker, self.alpha = ranker, alpha
        self.name = "neo4j-graphrag HybridRetriever " + (ranker if alpha is None else f"{ranker} a={alpha}")
        self.ndcg: list[float] = []
        self.recall: list[float] = []
        self.mrr: list[float] = []
        self.latencies: list[float] = []

    def search(self, text: str) -> list[str]:
        """Corpus ids, best chunk first."""
        # graphrag hands query_text to the Lucene query parser as it is (24 of the 809 SciFact
        # dev claims hold '/', '(' ... and raise SearchQueryParseError), so it gets the escaped
        # text, and the vector of the raw text: what search() does itself with query_text
        # alone (embedder.embed_query, then one query).
        vector = self.embedder.embed_query(text)
        result = self.retriever.search(
            query_text=escape_lucene(text), query_vector=vector, top_k=TOP_K, ranker=self.ranker, alpha=self.alpha
        )
        ranked: list[str] = []
        seen: set[str] = set()
        for item in result.items:  # sorted by score, best first
            att = item.content
            if isinstance(att, str) and att.startswith(ATTACHMENT_PREFIX):
                doc = att[len(ATTACHMENT_PREFIX) :]
                if doc not in seen:
                    seen.add(doc)
                    ranked.append(doc)
        return ranked[:DEPTH]

    def query(self, qid: str) -> None:
        t0 = time.perf_counter()
        ranked = self.search(self.data.queries[qid])
        self.latencies.append((time.perf_counter() - t0) * 1000)
        rel = self.data.qrels[qid]
        self.ndcg.append(ndcg_at_k(ranked, rel, 10))
        self.recall.append(recall_at_k(ranked, rel, 100))
        self.mrr.append(mrr_at_k(ranked, rel, 10))

    def figures(self) -> dict[str, Any]:
        n = max(len(self.ndcg), 1)
        return {
            "ndcg@10": round(sum(self.ndcg) / n, 4),
            "recall@100": round(sum(self.recall) / n, 4),
            "mrr@10": round(sum(self.mrr) / n, 4),
            "p50_ms": round(percentile(self.latencies, 50), 1),
            "p95_ms": round(percentile(self.latencies, 95), 1),
            "queries": len(self.ndcg),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_dir_argument(parser)
    parser.add_argument("--split", default="dev", help="qrels file (default: %(default)s)")
    parser.add_argument("--queries", type=int, default=None, help="first N judged queries (default: all)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--no-settle",
        action="store_true",
        help="leave the heap as it is after the warm-up (the servers settle theirs: maxy.heap.settle)",
    )
    parser.add_argument(
        "--partial",
        action="store_true",
        help="development only: skip ensure_corpus and use the eval account as it is (figures are not comparable)",
    )
    args = parser.parse_args()
    require_dir(parser, args.dir, "corpus.jsonl", "queries.jsonl", f"qrels/{args.split}.tsv")
    # SIGTERM (timeout, kill) unwinds like Ctrl-C, so the finally block still cleans up.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    import neo4j_graphrag

    settings = load_settings()
    data = subset(load_beir(args.dir, args.split), args.queries)
    embedder = without_cache(get_embedder(settings))  # the model timed, not the cache
    rows: list[dict[str, Any]] = []
    with Database(settings) as db:
        apply_schema(db, embedder.dimensions, embedder=embedder)
        account = eval_account(settings, data)
        if args.partial:
            ingest = {"reused": True, "partial": True}
        else:
            ingest = ensure_corpus(settings, db, embedder, data, account)
        live_docs = db.read(
            "MATCH (d:KnowledgeDocument {accountId: $a}) WHERE d.deletedAt IS NULL RETURN count(d) AS c",
            a=account.account_id,
        )[0]["c"]
        embedder.embed(["warm-up"])  # model load outside both systems' timings

        info: dict[str, int] = {}
        try:
            info = setup(db, account.account_id, embedder.dimensions)
            g_embedder = MaxyEmbedder(embedder)
            retriever = HybridRetriever(
                db.driver,
                VECTOR_INDEX,
                FULLTEXT_INDEX,
                g_embedder,
                return_properties=["attachmentId"],
                result_formatter=_attachment,
                neo4j_database=db.database,
            )
            warnings.filterwarnings("ignore", message="alpha parameter is only used")
            runs = [
                GraphragRun(retriever, g_embedder, data, "naive", None),
                GraphragRun(retriever, g_embedder, data, "linear", ALPHA),
            ]
            for run in runs:
                run.search("warm up")  # version probe, query plans
            if not args.no_settle:
                settle("bench")  # as maxy serve and maxy mcp serve do once they are ready
            ids = list(data.qrels)

            def after_maxy(done: int, total: int) -> None:
                # Interleaved per query (Maxy, then each graphrag ranker), so load from other
                # jobs on the machine falls on all systems alike. Maxy's clock has stopped here.
                for run in runs:
                    run.query(ids[done - 1])
                if done % 100 == 0 or done == total:
                    print(f"  {done}/{total} queries", file=sys.stderr)

            maxy = run_queries(db, embedder, data, account, depth=DEPTH, progress=after_maxy)
            rows.append({"system": "maxy hybrid (weighted 0.7)", **maxy})
            rows.extend({"system": run.name, **run.figures()} for run in runs)
        finally:
            cleanup(db)

    summary = {
        "corpus": data.name,
        "split": args.split,
        "documents": live_docs,
        "corpus_documents": len(data.corpus),
        "account": account.account_id,
        "ingest": ingest,
        "graphrag_version": neo4j_graphrag.__version__,
        "graphrag_chunks": info,
        "top_k": TOP_K,
        "rows": rows,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    if live_docs != len(data.corpus):
        print(f"WARNING: the account holds {live_docs} of {len(data.corpus)} documents: not final figures")
    print(
        f"{data.name} split {args.split}: {live_docs} documents, {info['chunks']} chunks, "
        f"neo4j-graphrag {neo4j_graphrag.__version__}, graphrag top_k {TOP_K}"
    )
    header = f"{'system':44} {'nDCG@10':>8} {'R@100':>7} {'MRR@10':>7} {'p50 ms':>8} {'p95 ms':>8} {'queries':>8}"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r['system']:44} {r['ndcg@10']:8.4f} {r['recall@100']:7.4f} {r['mrr@10']:7.4f} "
            f"{r['p50_ms']:8.1f} {r['p95_ms']:8.1f} {r['queries']:8d}"
        )
    stages = "  ".join(f"{k} {v:.1f}" for k, v in rows[0]["stages_p50_ms"].items())
    print(f"maxy stage medians (ms; vector and BM25 run side by side): {stages}")
    ratio = rows[0]["p50_ms"] / min(r["p50_ms"] for r in rows[1:])
    print(f"maxy p50 / fastest graphrag p50: {ratio:.2f}x")


if __name__ == "__main__":
    main()

"""Many tenants: a small account's search latency and SciFact's ranking, alone and beside the others.

    .venv/bin/python benchmarks/tenants.py --dir path/to/scifact [--tenants 1000] [--tenant-size 1000]
        [--large 100000] [--queries 200] [--checkpoints 250 500 750] [--workers 2] [--json]

One run, on a database of its own (the figures "alone" need a database without the tenants):

1. SciFact dev is ingested as ``maxy eval beir`` does (once; reused later) and one small tenant
   (``--tenant-size`` chunks) is built. Measured "alone": SciFact dev nDCG@10 / Recall@100 with
   the default fusion, BM25 only and vector only, and the small tenant's latency.
2. The other tenants are built: one of ``--large`` chunks, then small ones up to ``--tenants``
   (SciFact-vocabulary texts, synthetic vectors around shared topic centres, through the write
   primitive; benchmarks/_synthetic.py). The build is resumable: a full account is skipped, a
   partly written one is emptied and written again. At each ``--checkpoints`` count of small
   tenants the small tenant's latency is measured again.
3. Measured "beside" the tenants: the same SciFact figures, then the default fusion and BM25
   alone once more with BM25 ranked by the index's statistics instead of the account's own
   (``MAXY_BM25_STATS=index``: the baseline of the per-account ranking, in the same run), the
   small tenant's latency and the large tenant's.

Latency per query (``--queries`` SciFact claims, p50 / p95): the whole pipeline (limit 10, one
hop, query embedding included), then the bare calls at the pipeline's depth without the
embedding: the vector-index SEARCH filtered by account, the full-text query with the account
required inside Lucene, and, for reference, an exact cosine scan of the account's own vectors
(the vector SEARCH's recall against it is printed too). The "alone" figures are kept in
``<DATA_ROOT>/bench-tenants.json``, so a resumed run still prints them.

For a machine too busy to do it in one go: ``--skip-scifact`` builds and times the tenants
without SciFact; ``--alone-only`` measures SciFact alone on another database and stops;
``--corpus DIR`` evaluates another BEIR folder (a subset, say) than ``--dir``, which still gives
the vocabulary and the timed claims; ``--alone-from FILE`` takes the missing figures alone from
another run's state file; ``--latency-only`` times the tenants already there (run it on two
databases at once to compare them under the same load).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from _scifact import add_dir_argument, require_dir
from _synthetic import centres, chunk_count, empty, vocabulary, write_chunks
from maxy.accounts import ValidatedAccount, create_account, list_accounts, validate_account
from maxy.config import load_settings
from maxy.db import Database
from maxy.embeddings import get_embedder, without_cache
from maxy.evaluation.beir import ensure_corpus, eval_account, load_beir, run_queries
from maxy.evaluation.metrics import percentile
from maxy.graph.guards import Caller
from maxy.graph.schema import apply_schema
from maxy.search import BASELINE, SearchRequest, hybrid
from maxy.search.lucene import build_query

SMALL = "bench:tenants:small:{:04d}"
LARGE = "bench:tenants:large"
STATE = "bench-tenants.json"

VECTOR = (
    "CYPHER 25 MATCH (n:Chunk) SEARCH n IN (VECTOR INDEX chunk_embedding FOR $v WHERE n.accountId = $a LIMIT $k) "
    "SCORE AS score RETURN n.nodeId AS id"
)
FULLTEXT = (
    "CALL db.index.fulltext.queryNodes('entity_search', $q, {limit: $k}) YIELD node AS n, score RETURN n.nodeId AS id"
)
EXACT = (
    "MATCH (n:Node {accountId: $a}) WHERE n:Chunk AND n.embedding IS NOT NULL "
    "WITH n, vector.similarity.cosine(n.embedding, $v) AS score ORDER BY score DESC LIMIT $k RETURN n.nodeId AS id"
)


def accounts_by_name(settings, names: list[str]) -> dict[str, ValidatedAccount]:
    """The accounts called ``names``, created when missing (the folder is listed once)."""
    known = {a.name: a.account_id for a in list_accounts(settings.data_root)}
    out = {}
    for name in names:
        account_id = known.get(name) or create_account(settings.data_root, name).account_id
        out[name] = validate_account(settings.data_root, account_id)
    return out


def chunk_counts(db, account_ids: list[str]) -> dict[str, int]:
    rows = db.read(
        "UNWIND $ids AS a MATCH (c:Node {accountId: a}) WHERE c:Chunk RETURN a, count(c) AS c",
        ids=account_ids,
    )
    return {r["a"]: r["c"] for r in rows}


def ensure_tenant(db, account: ValidatedAccount, size: int, seed: int, words, topic_centres, model: str) -> bool:
    """Fill ``account`` with ``size`` synthetic chunks unless it holds them; True when written."""
    if chunk_count(db, account.account_id) == size:
        return False
    empty(db, account.account_id)
    write_chunks(db, account, size, words, topic_centres, model, seed, batch=min(size, 5000), progress=size > 5000)
    return True


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def figures(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(percentile(values, 50), 1), "p95_ms": round(percentile(values, 95), 1)}


def latency(db, embedder, account_id: str, queries: list[str], vectors: list[list[float]], exact: bool) -> dict:
    """Per query: the pipeline, the bare vector and full-text calls, and (``exact``) an exact scan."""
    caller = Caller(account_id)
    k = BASELINE.candidate_k
    times: dict[str, list[float]] = {"pipeline": [], "vector": [], "fulltext": []}
    if exact:
        times["exact"] = []
    recall = []

    def one(q: str, v: list[float], record: bool) -> None:
        lucene = build_query(q, account_id=account_id) or "x"
        t = {
            "pipeline": timed(lambda: hybrid(db, caller, SearchRequest(q, limit=10, expand_hops=1), embedder)),
            "fulltext": timed(lambda: db.read(FULLTEXT, q=lucene, k=k)),
        }
        got: list = []
        t["vector"] = timed(lambda: got.extend(db.read(VECTOR, v=v, a=account_id, k=k)))
        if exact:
            truth: list = []
            t["exact"] = timed(lambda: truth.extend(db.read(EXACT, v=v, a=account_id, k=k)))
            if record and truth:
                recall.append(len({r["id"] for r in got} & {r["id"] for r in truth}) / len(truth))
        if record:
            for name, value in t.items():
                times[name].append(value)

    for q, v in list(zip(queries, vectors, strict=True))[:10]:  # warm caches and the JIT
        one(q, v, False)
    for q, v in zip(queries, vectors, strict=True):
        one(q, v, True)
    out: dict[str, Any] = {name: figures(values) for name, values in times.items()}
    if exact:
        out["vector_recall_vs_exact"] = round(sum(recall) / max(len(recall), 1), 4)
    return out


# SciFact's runs: the default fusion, BM25 alone and vector alone, then the first two again with
# BM25 ranked by the index's statistics (Lucene's, shared by every account) instead of the
# account's own. Alone, SciFact is the whole index and the two are the same ranking.
RUNS = {
    "weighted": {"fusion": "weighted"},
    "bm25": {"fusion": "bm25"},
    "vector": {"fusion": "vector"},
    "weighted/index": {"fusion": "weighted", "bm25_stats": "index"},
    "bm25/index": {"fusion": "bm25", "bm25_stats": "index"},
}


def scifact(db, embedder, data, account) -> dict:
    """SciFact dev figures for each of ``RUNS``."""
    out = {}
    for name, knobs in RUNS.items():
        result = run_queries(db, embedder, data, account, config=BASELINE.with_(**knobs))
        out[name] = {k: result[k] for k in ("ndcg@10", "recall@100", "p50_ms", "p95_ms")}
    return out


def total_chunks(db) -> int:
    return db.read("MATCH (c:Chunk) RETURN count(c) AS c")[0]["c"]


def measure_alone(db, embedder, alone: dict, accounts: dict, small, data, beir, queries, vectors) -> None:
    """The figures alone, each while nothing else is there: SciFact before any tenant exists, the
    small tenant before the others do. Kept in ``alone``; a figure already there is not redone."""
    counts = chunk_counts(db, [a.account_id for a in accounts.values()])
    others = sum(1 for account_id, c in counts.items() if c and account_id != small.account_id)
    if beir is not None and "scifact" not in alone and not counts.get(small.account_id) and not others:
        print("measuring SciFact dev alone", file=sys.stderr)
        alone["scifact"] = scifact(db, embedder, data, beir)
        alone["scifact_chunks"] = total_chunks(db)
    if "small" not in alone and counts.get(small.account_id) and not others:
        print("measuring the small tenant alone", file=sys.stderr)
        alone["small"] = latency(db, embedder, small.account_id, queries, vectors, exact=True)
        alone["small_chunks"] = total_chunks(db)
    if others and not {"small", "scifact"} <= alone.keys():
        print(f"some figures alone are missing: {others} other tenant(s) already exist", file=sys.stderr)


def load_state(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def build_tenants(db, tenants: list[tuple[ValidatedAccount, int, int]], words, topic_centres, model, workers) -> int:
    """Fill every (account, size, seed) in ``tenants``, ``workers`` at a time, printing progress;
    the number of accounts written."""
    counts = chunk_counts(db, [a.account_id for a, _, _ in tenants])
    todo = [t for t in tenants if counts.get(t[0].account_id, 0) != t[1]]
    if not todo:
        return 0
    total = sum(size for _, size, _ in todo)
    started, done, written = time.perf_counter(), 0, 0
    print(f"building {len(todo)} tenant(s), {total} chunks", file=sys.stderr)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [
            (size, pool.submit(ensure_tenant, db, account, size, seed, words, topic_centres, model))
            for account, size, seed in todo
        ]
        for size, future in futures:
            future.result()
            done, written = done + 1, written + size
            if done % 25 == 0 or done == len(todo) or size > 5000:
                elapsed = time.perf_counter() - started
                rate = written / elapsed
                print(
                    f"  built {done}/{len(todo)} tenants, {written}/{total} chunks, {elapsed:.0f} s, "
                    f"{rate:.0f} chunks/s, about {(total - written) / rate / 60:.0f} min left",
                    file=sys.stderr,
                )
    return len(todo)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_dir_argument(parser)
    parser.add_argument("--tenants", type=int, default=1000, help="small tenants (default 1000)")
    parser.add_argument("--tenant-size", type=int, default=1000, help="chunks per small tenant (default 1000)")
    parser.add_argument("--large", type=int, default=100_000, help="chunks of the large tenant (default 100000)")
    parser.add_argument("--queries", type=int, default=200, help="SciFact claims timed per measurement")
    parser.add_argument("--checkpoints", type=int, nargs="*", default=[250, 500, 750], help="small-tenant counts")
    parser.add_argument("--workers", type=int, default=2, help="tenants written at once (default 2)")
    parser.add_argument("--corpus", type=Path, help="the BEIR folder to ingest and evaluate (default --dir)")
    parser.add_argument("--skip-scifact", action="store_true", help="tenants only (no SciFact ingest or figures)")
    parser.add_argument("--alone-only", action="store_true", help="measure SciFact alone, write no tenant, stop")
    parser.add_argument("--alone-from", type=Path, help="take missing 'alone' figures from another run's state file")
    parser.add_argument(
        "--latency-only", action="store_true", help="only time the small (and large) tenant now; builds nothing else"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    directory = require_dir(parser, args.dir, "corpus.jsonl", "queries.jsonl", "qrels/dev.tsv")
    for flag, value, low in (("--tenants", args.tenants, 1), ("--tenant-size", args.tenant_size, 1)):
        if value < low:
            parser.exit(2, f"{parser.prog}: {flag} {value} is below {low}: pass a positive number\n")
    if args.large < 0 or args.queries < 1 or args.workers < 1:
        parser.exit(2, f"{parser.prog}: --large must be >= 0, --queries and --workers >= 1\n")

    settings = load_settings()
    embedder = without_cache(get_embedder(settings))  # the model timed, not the cache
    claims = load_beir(directory, "dev")
    queries = [claims.queries[q] for q in claims.qrels if q in claims.queries][: args.queries]
    data = load_beir(args.corpus, "dev") if args.corpus else claims
    vectors = embedder.embed(queries)
    words = vocabulary(directory)
    state_path = settings.data_root / STATE
    state = load_state(state_path)
    report: dict[str, Any] = {"tenants": args.tenants, "tenant_size": args.tenant_size, "large": args.large}
    with Database(settings) as db:
        apply_schema(db, embedder.dimensions, embedder=embedder)
        topic_centres = centres(embedder.dimensions)
        beir = None if args.skip_scifact or args.latency_only else eval_account(settings, data)
        if beir is not None:
            print("SciFact dev: ingesting (once; reused later)", file=sys.stderr)
            ensure_corpus(
                settings,
                db,
                embedder,
                data,
                beir,
                progress=lambda done, total: done % 500 == 0 and print(f"  ingested {done}/{total}", file=sys.stderr),
            )
        names = [SMALL.format(i) for i in range(args.tenants)] + ([LARGE] if args.large else [])
        accounts = accounts_by_name(settings, names)
        small = accounts[SMALL.format(0)]
        if args.latency_only:
            ensure_tenant(db, small, args.tenant_size, 1000, words, topic_centres, embedder.name)
            large = accounts.get(LARGE)
            now = {
                "chunks": total_chunks(db),
                "small": latency(db, embedder, small.account_id, queries, vectors, exact=True),
                "large": latency(db, embedder, large.account_id, queries, vectors, exact=False) if large else None,
                "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            }
            print(json.dumps(now, indent=2))
            return
        alone = state.setdefault("alone", {})
        measure_alone(db, embedder, alone, accounts, small, data, beir, queries, vectors)
        if args.alone_only:  # SciFact alone only: no tenant is written
            state_path.write_text(json.dumps(state, indent=2) + "\n")
            print(json.dumps(alone, indent=2))
            return
        ensure_tenant(db, small, args.tenant_size, 1000, words, topic_centres, embedder.name)
        measure_alone(db, embedder, alone, accounts, small, data, beir, queries, vectors)
        state_path.write_text(json.dumps(state, indent=2) + "\n")
        if args.alone_from:
            for key, value in load_state(args.alone_from).get("alone", {}).items():
                alone.setdefault(key, value)
        report["alone"] = alone

        build = [(accounts[LARGE], args.large, 7)] if args.large else []
        build_tenants(db, build, words, topic_centres, embedder.name, 1)
        checkpoints = state.setdefault("checkpoints", {})
        marks = sorted({c for c in args.checkpoints if 1 < c < args.tenants} | {args.tenants})
        start = 1
        for mark in marks:
            batch = [(accounts[SMALL.format(i)], args.tenant_size, 1000 + i) for i in range(start, mark)]
            built = build_tenants(db, batch, words, topic_centres, embedder.name, args.workers)
            start = mark
            if built and mark != args.tenants:  # a checkpoint is taken while the later tenants do not exist yet
                print(f"measuring the small tenant beside {mark} small tenants", file=sys.stderr)
                checkpoints[str(mark)] = {
                    "small_tenants": mark,
                    "chunks": total_chunks(db),
                    "small": latency(db, embedder, small.account_id, queries, vectors, exact=True),
                }
                print(f"  {json.dumps(checkpoints[str(mark)])}", file=sys.stderr)
                state_path.write_text(json.dumps(state, indent=2) + "\n")
        report["checkpoints"] = [checkpoints[k] for k in sorted(checkpoints, key=int)]
        print("measuring beside the tenants", file=sys.stderr)
        report["beside"] = {
            "chunks": total_chunks(db),
            "small": latency(db, embedder, small.account_id, queries, vectors, exact=True),
            "large": latency(db, embedder, accounts[LARGE].account_id, queries, vectors, exact=False)
            if args.large
            else None,
            "scifact": None if beir is None else scifact(db, embedder, data, beir),
            "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print_report(report)


def print_report(report: dict) -> None:
    alone, beside = report.get("alone") or {}, report["beside"]
    print(f"{report['tenants']} small tenants of {report['tenant_size']} chunks, one of {report['large']}")
    if beside["scifact"]:
        print("SciFact dev          nDCG@10 / Recall@100 alone   beside            nDCG@10 change (points)")
        for fusion, b in beside["scifact"].items():
            a = (alone.get("scifact") or {}).get(fusion.split("/")[0])
            before = f"{a['ndcg@10']:.4f} / {a['recall@100']:.4f}" if a else "-" * 15
            delta = f"{100 * (b['ndcg@10'] - a['ndcg@10']):+.2f}" if a else "-"
            print(f"  {fusion:14}     {before}         {b['ndcg@10']:.4f} / {b['recall@100']:.4f}   {delta}")
    rows = [("alone", alone["small_chunks"], alone["small"])] if "small" in alone else []
    rows += [(f"{c['small_tenants']} small", c["chunks"], c["small"]) for c in report["checkpoints"]]
    rows.append(("all", beside["chunks"], beside["small"]))
    print("small tenant, p50 / p95 ms  chunks   pipeline        vector          full-text       exact scan   recall")
    for name, chunks, s in rows:
        cells = "  ".join(
            f"{s[p]['p50_ms']:6.1f} / {s[p]['p95_ms']:5.1f}" for p in ("pipeline", "vector", "fulltext", "exact")
        )
        print(f"  {name:10}  {chunks:9}  {cells}  {s['vector_recall_vs_exact']:.3f}")
    if beside["large"]:
        s = beside["large"]
        cells = "  ".join(f"{s[p]['p50_ms']:6.1f} / {s[p]['p95_ms']:5.1f}" for p in ("pipeline", "vector", "fulltext"))
        print(f"large tenant ({report['large']} chunks)  {cells}")


if __name__ == "__main__":
    main()

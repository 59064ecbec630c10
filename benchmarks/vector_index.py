"""Vector index settings: HNSW m / ef_construction and quantization, measured on one account.

    .venv/bin/python benchmarks/vector_index.py --dir path/to/scifact [--account-name NAME]
        [--setting m=16,ef=100,quant=binary ...] [--depth 300] [--queries 200] [--json]

The account (default: the one ``maxy eval beir path/to/scifact --split dev`` ingests) keeps its
Chunk nodes; each setting gets a helper label on those nodes and a vector index of its own on
it (``vecbench_<i>``, with the account as filter property, as the schema's indexes have), built
one after another and timed until ONLINE. Per setting:

- quality, when the account holds the BEIR corpus of ``--dir``: nDCG@10 and Recall@100 of
  vector-only search through that index over every dev claim (the claims embedded by the real
  model; chunks folded to their best-ranked document, as ``maxy eval beir`` does), ``--depth``
  chunks deep;
- recall@10 and recall@150 against an exact cosine ranking of the account's vectors (numpy);
- latency p50 / p95 of the filtered SEARCH at the pipeline's depth (150), ``--queries`` claims;
- build time and the index folder's size on disk (``<NEO4J home>/data/databases/<db>/schema/
  index/<provider>/<index id>``, when the server is the local one).

The helper labels and indexes are removed in a ``finally``. A setting is ``key=value`` pairs:
``m`` (vector.hnsw.m), ``ef`` (vector.hnsw.ef_construction), ``quant`` (vector.quantization.type:
none, scalar or binary) and optionally ``expansion`` (vector.default_search_expansion_factor).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from _scifact import add_dir_argument, require_dir
from maxy.accounts import list_accounts
from maxy.config import load_settings
from maxy.db import Database
from maxy.embeddings import get_embedder, without_cache
from maxy.evaluation.beir import ATTACHMENT_PREFIX, eval_account, load_beir
from maxy.evaluation.metrics import ndcg_at_k, percentile, recall_at_k

DEFAULT_SETTINGS = [
    "m=16,ef=100,quant=binary",  # the server's default (what schema.cypher's indexes get)
    "m=16,ef=100,quant=binary,expansion=6",
    "m=16,ef=100,quant=scalar",
    "m=16,ef=100,quant=none",
    "m=32,ef=200,quant=binary",
    "m=32,ef=200,quant=none",
]
KEYS = {
    "m": "vector.hnsw.m",
    "ef": "vector.hnsw.ef_construction",
    "quant": "vector.quantization.type",
    "expansion": "vector.default_search_expansion_factor",
}
PIPELINE_DEPTH = 150  # BASELINE.candidate_k: each path's list before fusion
FETCH = 10_000  # vectors read per query when loading the account's vectors


def parse_setting(text: str) -> dict[str, Any]:
    """``m=16,ef=100,quant=binary`` -> the index's indexConfig entries; ValueError naming the part."""
    config: dict[str, Any] = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        key = key.strip()
        if key not in KEYS or not value.strip():
            raise ValueError(f"{part!r}: expected one of {', '.join(k + '=...' for k in KEYS)}")
        if key == "quant":
            if value.strip().lower() not in ("none", "scalar", "binary"):
                raise ValueError(f"{part!r}: quant is none, scalar or binary")
            config[KEYS[key]] = value.strip().upper()
        else:
            try:
                config[KEYS[key]] = float(value) if key == "expansion" else int(value)
            except ValueError:
                raise ValueError(
                    f"{part!r}: {key} takes a {'number' if key == 'expansion' else 'whole number'}"
                ) from None
    return config


def account_vectors(db, account_id: str) -> tuple[list[str], list[str | None], np.ndarray]:
    """The account's Chunk vectors (normalised), their nodeIds and attachmentIds, read in pages."""
    ids: list[str] = []
    attachments: list[str | None] = []
    parts: list[np.ndarray] = []
    last = ""
    while True:
        rows = db.read(
            "MATCH (n:Node) WHERE n.nodeId > $last AND n.accountId = $a AND n:Chunk AND n.embedding IS NOT NULL "
            "RETURN n.nodeId AS id, n.attachmentId AS att, n.embedding AS v ORDER BY n.nodeId LIMIT $limit",
            last=last,
            a=account_id,
            limit=FETCH,
        )
        if not rows:
            break
        ids += [r["id"] for r in rows]
        attachments += [r["att"] for r in rows]
        block = np.asarray([r["v"] for r in rows], dtype=np.float32)
        parts.append(block / np.linalg.norm(block, axis=1, keepdims=True))
        last = rows[-1]["id"]
    return ids, attachments, np.vstack(parts) if parts else np.zeros((0, 0), dtype=np.float32)


def exact_top(matrix: np.ndarray, query: np.ndarray, k: int) -> np.ndarray:
    scores = matrix @ query
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top])]


def documents(node_ids: list[str], attachment_of: dict[str, str | None]) -> list[str]:
    """Corpus ids in order of their best chunk (``maxy eval beir``'s folding)."""
    ranked: list[str] = []
    for node_id in node_ids:
        att = attachment_of.get(node_id)
        if isinstance(att, str) and att.startswith(ATTACHMENT_PREFIX):
            doc = att[len(ATTACHMENT_PREFIX) :]
            if doc not in ranked:
                ranked.append(doc)
    return ranked


def quality(rankings: list[list[str]], qrels: list[dict[str, int]]) -> dict[str, float]:
    n = max(len(rankings), 1)
    return {
        "ndcg@10": round(sum(ndcg_at_k(r, q, 10) for r, q in zip(rankings, qrels, strict=True)) / n, 4),
        "recall@100": round(sum(recall_at_k(r, q, 100) for r, q in zip(rankings, qrels, strict=True)) / n, 4),
    }


def index_folder(settings, db, name: str) -> Path | None:
    row = db.read("SHOW INDEXES YIELD id, name, indexProvider WHERE name = $n RETURN id, indexProvider", n=name)
    database = settings.NEO4J_DATABASE or "neo4j"
    folder = settings.neo4j_home / "data" / "databases" / database / "schema" / "index"
    path = folder / row[0]["indexProvider"] / str(row[0]["id"]) if row else None
    return path if path is not None and path.is_dir() else None


def folder_mb(path: Path | None) -> float | None:
    if path is None:
        return None
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 2)


def create_index(db, name: str, label: str, config: dict[str, Any], dims: int) -> tuple[float, dict]:
    """Create the index, wait until ONLINE; the seconds it took and the config it reports."""
    options = {"vector.dimensions": dims, "vector.similarity_function": "cosine", **config}
    entries = ", ".join(f"`{key}`: ${'p' + str(i)}" for i, key in enumerate(options))
    params = {f"p{i}": value for i, value in enumerate(options.values())}
    started = time.perf_counter()
    db.autocommit(
        f"CYPHER 25 CREATE VECTOR INDEX {name} FOR (n:{label}) ON n.embedding WITH [n.accountId] "
        f"OPTIONS {{indexConfig: {{{entries}}}}}",
        **params,
    )
    while True:
        row = db.read(
            "SHOW INDEXES YIELD name, state, options, failureMessage WHERE name = $n RETURN *",
            n=name,
        )[0]
        if row["state"] == "ONLINE":
            return time.perf_counter() - started, row["options"]["indexConfig"]
        if row["state"] == "FAILED":
            raise RuntimeError(f"index {name} failed: {row['failureMessage']}")
        time.sleep(0.2)


def search(db, name: str, label: str, account_id: str, vector: list[float], k: int) -> list[str]:
    rows = db.read(
        f"CYPHER 25 MATCH (n:{label}) SEARCH n IN (VECTOR INDEX {name} FOR $v WHERE n.accountId = $a LIMIT $k) "
        "SCORE AS score RETURN n.nodeId AS id ORDER BY score DESC",
        v=vector,
        a=account_id,
        k=k,
    )
    return [r["id"] for r in rows]


@dataclass
class Probe:
    """What every setting is measured with: the claims' vectors, their judgments, the exact rankings."""

    vectors: np.ndarray
    timed: np.ndarray
    qrels: list[dict[str, int]]
    exact_ids: list[list[str]]
    attachment_of: dict[str, str | None]
    with_qrels: bool
    depth: int


def measure(db, settings, name: str, label: str, config: dict, account_id: str, dims: int, probe: Probe) -> dict:
    """Build one index and measure it: build time, size, quality, recall against exact, latency."""
    seconds, reported = create_index(db, name, label, config, dims)
    row: dict[str, Any] = {"build_s": round(seconds, 1), "size_mb": folder_mb(index_folder(settings, db, name))}
    row["reported"] = {
        k: v for k, v in reported.items() if k.startswith(("vector.hnsw", "vector.quant", "vector.default"))
    }
    found = [search(db, name, label, account_id, q.tolist(), probe.depth) for q in probe.vectors]
    if probe.with_qrels:
        row.update(quality([documents(f, probe.attachment_of) for f in found], probe.qrels))
    for k in (10, PIPELINE_DEPTH):
        hits = [len(set(f[:k]) & set(e[:k])) / min(k, len(e)) for f, e in zip(found, probe.exact_ids, strict=True)]
        row[f"recall@{k}_vs_exact"] = round(sum(hits) / len(hits), 4)
    for q in probe.timed[:10]:  # warm
        search(db, name, label, account_id, q.tolist(), PIPELINE_DEPTH)
    latencies = []
    for q in probe.timed:
        t0 = time.perf_counter()
        search(db, name, label, account_id, q.tolist(), PIPELINE_DEPTH)
        latencies.append((time.perf_counter() - t0) * 1000)
    row["p50_ms"] = round(percentile(latencies, 50), 1)
    row["p95_ms"] = round(percentile(latencies, 95), 1)
    return row


def resolve_account(parser, settings, name: str | None, directory: Path) -> tuple[str, str]:
    if name is None:
        account = eval_account(settings, load_beir(directory, "dev"))
        return account.account_id, f"beir:{directory.resolve().name}"
    found = [a for a in list_accounts(settings.data_root) if a.name == name]
    if not found:
        parser.exit(
            2, f"{parser.prog}: --account-name {name!r} matches no account: pick one from `maxy account list`\n"
        )
    return found[0].account_id, name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_dir_argument(parser)
    parser.add_argument("--account-name", help="the account to measure (default: the maxy eval beir account of --dir)")
    parser.add_argument("--setting", action="append", help="m=..,ef=..,quant=none|scalar|binary[,expansion=..]")
    parser.add_argument("--depth", type=int, default=300, help="chunks per quality query (maxy eval beir's 300)")
    parser.add_argument("--queries", type=int, default=200, help="claims timed per setting (default 200)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    directory = require_dir(parser, args.dir, "corpus.jsonl", "queries.jsonl", "qrels/dev.tsv")
    try:
        specs = [(text, parse_setting(text)) for text in (args.setting or DEFAULT_SETTINGS)]
    except ValueError as err:
        parser.exit(2, f"{parser.prog}: --setting {err}\n")
    if args.depth < 10 or args.queries < 1:
        parser.exit(2, f"{parser.prog}: --depth must be >= 10 and --queries >= 1\n")

    settings = load_settings()
    embedder = without_cache(get_embedder(settings))  # the model timed, not the cache
    data = load_beir(directory, "dev")
    account_id, account_name = resolve_account(parser, settings, args.account_name, directory)
    judged = [q for q in data.qrels if q in data.queries]
    print(f"embedding {len(judged)} claims", file=sys.stderr)
    qvecs = np.asarray(embedder.embed([data.queries[q] for q in judged]), dtype=np.float32)
    qvecs /= np.linalg.norm(qvecs, axis=1, keepdims=True)
    timed = qvecs[: args.queries]
    rows: list[dict[str, Any]] = []
    with Database(settings) as db:
        ids, attachments, matrix = account_vectors(db, account_id)
        if not ids:
            parser.exit(2, f"{parser.prog}: account {account_name} has no Chunk vectors: ingest or build it first\n")
        attachment_of = dict(zip(ids, attachments, strict=True))
        with_qrels = any(isinstance(a, str) and a.startswith(ATTACHMENT_PREFIX) for a in attachments)
        print(f"account {account_name}: {len(ids)} chunk vectors; exact rankings", file=sys.stderr)
        exact = [exact_top(matrix, q, max(args.depth, PIPELINE_DEPTH)) for q in qvecs]
        exact_ids = [[ids[i] for i in top] for top in exact]
        if with_qrels:
            row = quality(
                [documents(e[: args.depth], attachment_of) for e in exact_ids], [data.qrels[q] for q in judged]
            )
            rows.append({"setting": "exact (brute force, numpy)", **row})
        probe = Probe(qvecs, timed, [data.qrels[q] for q in judged], exact_ids, attachment_of, with_qrels, args.depth)
        labels = [f"VecBench{i}" for i in range(len(specs))]
        try:
            db.autocommit(
                "MATCH (n:Node {accountId: $a}) WHERE n:Chunk AND n.embedding IS NOT NULL "
                f"CALL (n) {{ SET n:{':'.join(labels)} }} IN TRANSACTIONS OF 10000 ROWS",
                a=account_id,
            )
            for i, (text, config) in enumerate(specs):
                name, label = f"vecbench_{i}", labels[i]
                print(f"building {name} ({text})", file=sys.stderr)
                row = measure(db, settings, name, label, config, account_id, embedder.dimensions, probe)
                row["setting"] = text
                rows.append(row)
                db.autocommit(f"DROP INDEX {name} IF EXISTS")
                print(f"  {json.dumps(row)}", file=sys.stderr)
        finally:
            for i in range(len(specs)):
                db.autocommit(f"DROP INDEX vecbench_{i} IF EXISTS")
            db.autocommit(
                "MATCH (n:Node {accountId: $a}) WHERE n:Chunk "
                f"CALL (n) {{ REMOVE n:{':'.join(labels)} }} IN TRANSACTIONS OF 10000 ROWS",
                a=account_id,
            )
    report = {"account": account_name, "chunks": len(ids), "claims": len(judged), "depth": args.depth, "rows": rows}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"account {account_name}: {len(ids)} chunks, {len(judged)} claims, vector only, {args.depth} chunks deep")
    print(
        f"{'setting':40} {'build s':>8} {'MB':>8} {'nDCG@10':>8} {'R@100':>7} {'r@10':>6} {'r@150':>6} {'p50 ms':>7} {'p95 ms':>7}"
    )
    for r in rows:
        cells = [r.get("build_s"), r.get("size_mb"), r.get("ndcg@10"), r.get("recall@100")]
        cells += [
            r.get("recall@10_vs_exact"),
            r.get(f"recall@{PIPELINE_DEPTH}_vs_exact"),
            r.get("p50_ms"),
            r.get("p95_ms"),
        ]
        widths = (8, 8, 8, 7, 6, 6, 7, 7)
        print(
            f"{r['setting']:40} "
            + " ".join(f"{'-' if c is None else c:>{w}}" for c, w in zip(cells, widths, strict=True))
        )


if __name__ == "__main__":
    main()

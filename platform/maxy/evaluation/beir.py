"""``maxy eval beir``: nDCG@10, Recall@100, MRR@10 and latency on a BEIR-format folder.

The corpus goes through the normal ingest path into an account of its own (reused when the
same corpus is already there); every query runs through the same search code agents use.
Results are ranked per document: a document's score is its best node's score.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..accounts import ValidatedAccount
from ..config import Settings
from ..db import Database
from ..embeddings.base import Embedder
from ..errors import ValidationError
from ..graph.guards import Caller
from ..graph.write import GraphWriter
from ..logs import log_line, short
from ..search import BASELINE, SearchConfig, SearchRequest, hybrid
from .accounts import named_account
from .folds import DEFAULT_FOLDS, query_folds, spread_report
from .metrics import mrr_at_k, ndcg_at_k, percentile, recall_at_k

ATTACHMENT_PREFIX = "beir:"
# BEIR judges passages, and a document's text lives in its chunks: queries search Chunk nodes
# (through the same pipeline, with its label filter). On scifact-dev, searching every level
# gave nDCG@10 0.711: the KnowledgeDocument/Section nodes' short title + summary fields win
# BM25 on title words alone (BM25 over all levels 0.654 vs chunks 0.698). See docs/search-quality.md.
EVAL_LABELS = ("Chunk",)
MARKER = "beir.json"


@dataclass
class BeirData:
    name: str
    corpus_hash: str
    corpus: list[dict[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as err:
                    raise ValidationError(str(path), f"line {n} is not JSON ({err.msg})") from None


def load_beir(directory: Path, split: str) -> BeirData:
    directory = Path(directory)
    corpus_path, queries_path = directory / "corpus.jsonl", directory / "queries.jsonl"
    qrels_path = directory / "qrels" / f"{split}.tsv"
    for path in (corpus_path, queries_path, qrels_path):
        if not path.is_file():
            raise ValidationError(
                "DIR", f"{path} is missing (a BEIR folder has corpus.jsonl, queries.jsonl, qrels/<split>.tsv)"
            )
    digest = hashlib.sha256()
    corpus = []
    for doc in _jsonl(corpus_path):
        if "_id" not in doc:
            raise ValidationError(str(corpus_path), "every document needs an _id")
        corpus.append(
            {"_id": str(doc["_id"]), "title": str(doc.get("title") or ""), "text": str(doc.get("text") or "")}
        )
        digest.update(json.dumps(corpus[-1], sort_keys=True).encode())
    queries = {str(q["_id"]): str(q.get("text") or "") for q in _jsonl(queries_path)}
    qrels: dict[str, dict[str, int]] = {}
    with qrels_path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            parts = line.rstrip("\n").split("\t")
            if n == 1 and parts[0] in ("query-id", "query_id", "qid"):
                continue
            if len(parts) < 3:
                continue
            try:
                qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
            except ValueError:
                raise ValidationError(str(qrels_path), f"line {n}: score {parts[2]!r} is not an integer") from None
    return BeirData(directory.resolve().name, digest.hexdigest()[:16], corpus, queries, qrels)


def eval_account(settings: Settings, data: BeirData) -> ValidatedAccount:
    """The account holding this exact corpus, created on first use."""
    return named_account(settings, f"beir:{data.name}:{data.corpus_hash}")


def _marker_path(settings: Settings, account: ValidatedAccount) -> Path:
    return settings.data_root / "accounts" / account.account_id / MARKER


def ensure_corpus(
    settings: Settings,
    db: Database,
    embedder: Embedder,
    data: BeirData,
    account: ValidatedAccount,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Ingest the corpus unless the marker says this account already holds all of it."""
    marker = _marker_path(settings, account)
    if marker.is_file():
        info = json.loads(marker.read_text())
        if info.get("corpusHash") == data.corpus_hash and info.get("complete"):
            live = db.read(
                "MATCH (d:KnowledgeDocument {accountId: $a}) WHERE d.deletedAt IS NULL RETURN count(d) AS c",
                a=account.account_id,
            )[0]["c"]
            if live == len(data.corpus):
                return {"ingested": 0, "reused": True, "documents": live, "ms": 0}
    from ..ingest.hierarchy import ingest_records

    started = time.perf_counter()
    writer = GraphWriter(db, account, embedder, created_by="eval")
    records = [(ATTACHMENT_PREFIX + d["_id"], d["title"], d["text"]) for d in data.corpus]
    results = ingest_records(
        writer, records, progress=(lambda done, total, _result: progress(done, total)) if progress else None
    )
    failed = [r for r in results if not r.ok]
    if failed:
        raise ValidationError("corpus", f"{len(failed)} document(s) failed to ingest, e.g. {failed[0].error}")
    marker.write_text(
        json.dumps({"corpusHash": data.corpus_hash, "documents": len(data.corpus), "complete": True}) + "\n"
    )
    return {
        "ingested": sum(not r.skipped for r in results),
        "reused": False,
        "documents": len(data.corpus),
        "ms": round((time.perf_counter() - started) * 1000),
    }


def rank_documents(hits: list[Any]) -> list[str]:
    """Corpus ids in order of their best node."""
    ranked: list[str] = []
    seen: set[str] = set()
    for h in hits:
        attachment = h.properties.get("attachmentId")
        if not isinstance(attachment, str) or not attachment.startswith(ATTACHMENT_PREFIX):
            continue
        doc = attachment[len(ATTACHMENT_PREFIX) :]
        if doc not in seen:
            seen.add(doc)
            ranked.append(doc)
    return ranked


def run_queries(
    db: Database,
    embedder: Embedder,
    data: BeirData,
    account: ValidatedAccount,
    *,
    depth: int = 100,
    node_limit: int = 300,
    progress: Callable[[int, int], None] | None = None,
    config: SearchConfig = BASELINE,
    folds: int = DEFAULT_FOLDS,
) -> dict[str, Any]:
    caller = Caller(account.account_id)
    config = config.with_(candidate_k=node_limit)
    ids = [q for q in data.qrels if q in data.queries]
    ndcg, recall, mrr, latencies = [], [], [], []
    stages: dict[str, list[float]] = {}
    per_query = {}
    for i, qid in enumerate(ids, start=1):
        request = SearchRequest(
            data.queries[qid],
            limit=node_limit,
            labels=EVAL_LABELS,
            expand_hops=0,
            min_relevance=0,  # ranking quality; maxy eval relevance measures the cut
        )
        t0 = time.perf_counter()
        response = hybrid(db, caller, request, embedder, config)
        latencies.append((time.perf_counter() - t0) * 1000)
        for key, value in response.stats.items():
            if key.endswith("_ms"):
                stages.setdefault(key[: -len("_ms")], []).append(value)
        ranked = rank_documents(response.hits)[:depth]
        rel = data.qrels[qid]
        ndcg.append(ndcg_at_k(ranked, rel, 10))
        recall.append(recall_at_k(ranked, rel, 100))
        mrr.append(mrr_at_k(ranked, rel, 10))
        per_query[qid] = ranked[:10]
        if progress is not None:
            progress(i, len(ids))
    n = max(len(ids), 1)
    figures: dict[str, Any] = {
        "ndcg@10": round(sum(ndcg) / n, 4),
        "recall@100": round(sum(recall) / n, 4),
        "mrr@10": round(sum(mrr) / n, 4),
        "p50_ms": round(percentile(latencies, 50), 1),
        "p95_ms": round(percentile(latencies, 95), 1),
        "queries": len(ids),
    }
    log_line(
        "eval:beir",
        accountId=short(account.account_id),
        fusion=config.fusion,
        folds=folds,
        **{k.replace("@", "_at_"): v for k, v in figures.items() if k != "folds"},
    )
    fold_of = query_folds(ids, folds)
    figures["folds"] = spread_report(
        [{"ndcg@10": a, "recall@100": b, "mrr@10": c} for a, b, c in zip(ndcg, recall, mrr, strict=True)],
        [fold_of[qid] for qid in ids],
        how="sha256 of the query id",
    )
    # Where the time goes: each stage's median (the paths run side by side, so they overlap).
    figures["stages_p50_ms"] = {k: round(percentile(v, 50), 1) for k, v in sorted(stages.items())}
    return figures

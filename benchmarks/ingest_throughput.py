"""Ingest throughput: chunks per second through the whole ingest path (parse, chunk,
summarise, embed every level, one transaction per batch of documents, each committing while
the next batch is embedded) against the embedder alone on the same texts, in the same run
(timed once before the ingest and once after it, and averaged, so a load that changes during
the run weighs on both sides alike).

"The same texts" are those the final graph holds, each embedded once: every level's text.
The chunker finds topic breaks lexically and embeds nothing of its own, so that is everything
the ingest sends to the embedder.

    .venv/bin/python benchmarks/ingest_throughput.py --dir path/to/scifact [--docs 400] [--json]

Documents are the first N SciFact abstracts (``corpus.jsonl`` of a SciFact folder in BEIR
format, see docs/search-quality.md); they go into a throwaway account that is removed
afterwards.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from _scifact import add_dir_argument, require_dir
from maxy.accounts import create_account, validate_account
from maxy.config import load_settings
from maxy.db import Database
from maxy.embeddings import get_embedder, without_cache
from maxy.embeddings.base import Embedder
from maxy.graph.schema import apply_schema
from maxy.graph.text import embedding_text
from maxy.graph.write import GraphWriter
from maxy.ingest.chunker import ChunkBounds
from maxy.ingest.formats import ParsedDocument, ParsedSection
from maxy.ingest.hierarchy import ingest_records
from maxy.ingest.specs import build_specs
from maxy.ingest.summarize import ExtractiveSummarizer


def planned_texts(records: list[tuple[str, str, str]]) -> list[str]:
    """What the ingest will embed: every level's text of every record, each once."""
    bounds, summarizer = ChunkBounds.from_env(), ExtractiveSummarizer()
    texts: list[str] = []
    for att, title, text in records:
        parsed = ParsedDocument(title, [ParsedSection(title, text.strip())], None, "text/plain")
        specs, _, _ = build_specs(parsed, att, "bench", summarizer=summarizer, bounds=bounds)
        texts += [t for spec in specs if (t := embedding_text(spec.labels, spec.properties))]
    return list(dict.fromkeys(texts))


def _embed_alone(embedder: Embedder, texts: list[str]) -> float:
    t0 = time.perf_counter()
    for i in range(0, len(texts), 32):
        embedder.embed(texts[i : i + 32])
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_dir_argument(parser)
    parser.add_argument("--docs", type=int, default=400)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    corpus = require_dir(parser, args.dir, "corpus.jsonl") / "corpus.jsonl"

    settings = load_settings()
    embedder = without_cache(get_embedder(settings))  # the model timed, not the cache
    records = []
    with corpus.open() as fh:
        for line in fh:
            doc = json.loads(line)
            records.append((f"bench:{doc['_id']}", doc["title"], doc["text"]))
            if len(records) == args.docs:
                break
    embedder.embed(["warm up"])
    # The texts the ingest will keep, known beforehand, so the embedder alone is timed both
    # before and after the ingest: a load that changes during the run moves both halves alike.
    planned = planned_texts(records)
    embed_before_s = _embed_alone(embedder, planned)

    with tempfile.TemporaryDirectory() as tmp, Database(settings) as db:
        apply_schema(db, embedder.dimensions, embedder=embedder)
        account = validate_account(Path(tmp), create_account(Path(tmp), "bench-ingest").account_id)
        try:
            t0 = time.perf_counter()
            results = ingest_records(GraphWriter(db, account, embedder, created_by="bench"), records)
            ingest_s = time.perf_counter() - t0
            chunks = sum(r.chunks for r in results)
            rows = db.read(
                "MATCH (n:Node {accountId: $a}) RETURN labels(n) AS labels, properties(n) AS props",
                a=account.account_id,
            )
            texts = list(dict.fromkeys(t for r in rows if (t := embedding_text(r["labels"], r["props"]))))
            embed_after_s = _embed_alone(embedder, texts)
            embed_s = (embed_before_s + embed_after_s) / 2
        finally:
            db.autocommit(
                "MATCH (n:Node {accountId: $a}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 2000 ROWS",
                a=account.account_id,
            )
    figures = {
        "documents": len(records),
        "chunks": chunks,
        "embedded_texts": len(texts),
        "ingest_chunks_per_s": round(chunks / ingest_s, 1),
        "embedder_alone_chunks_per_s": round(chunks / embed_s, 1),
        "embedder_alone_s": [round(embed_before_s, 1), round(embed_after_s, 1)],
        "planned_texts_match": set(planned) == set(texts),
        "ratio": round(embed_s / ingest_s, 3),
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"{len(records)} documents -> {chunks} chunks, {len(texts)} distinct embedded texts")
    print(f"ingest           {figures['ingest_chunks_per_s']:7.1f} chunks/s  ({ingest_s:.1f} s)")
    print(
        f"embedder alone   {figures['embedder_alone_chunks_per_s']:7.1f} chunks/s  ({embed_s:.1f} s, same texts: "
        f"{embed_before_s:.1f} s before the ingest, {embed_after_s:.1f} s after)"
    )
    if not figures["planned_texts_match"]:
        print("note: the texts planned before the ingest differ from the graph's; the 'after' timing is the exact one")
    print(f"ratio            {figures['ratio']:7.3f}")


if __name__ == "__main__":
    main()

"""Large files: one markdown file of N megabytes through ``ingest_paths`` (parse, chunk,
summarise, embed, bounded transactions made visible by a final one), timed to the first
progress report and to the end, against the embedder alone on a sample of the texts the graph
then holds, in the same run.

    .venv/bin/python benchmarks/ingest_large.py --dir path/to/scifact [--sizes 1 20] [--sample 600]
        [--no-embed-above MB] [--json]

``--compare`` ingests each file twice more, alternating, with the embedder as it ran before
(one text at a time on one ONNX session of one thread per core) and as it runs now (a
one-thread run per core at once), and prints the chunks per second of each way: the
embedder's gain as an ingest sees it.

``--no-embed-above MB`` writes files larger than MB without vectors (as during an embedder
outage; ``maxy reindex`` fills them in later): the write path alone, for a file whose
embedding would take longer than the run can; the printed line says so.

Each file is built from SciFact abstracts (``corpus.jsonl`` of a SciFact folder in BEIR
format, see docs/search-quality.md): ``## Topic k`` sections of five abstracts each (the corpus
repeats when the file needs more), under one ``#`` title. Each goes into a throwaway account
that is removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _scifact import add_dir_argument, require_dir
from maxy.accounts import create_account, validate_account
from maxy.config import load_settings
from maxy.db import Database
from maxy.embeddings import get_embedder, without_cache
from maxy.embeddings.base import Embedder
from maxy.embeddings.onnx_bert import OnnxBertEmbedder, cpu_count
from maxy.graph.schema import apply_schema
from maxy.graph.text import embedding_text
from maxy.graph.write import GraphWriter
from maxy.ingest.hierarchy import IngestResult, ingest_paths
from maxy.ingest.summarize import ExtractiveSummarizer

PER_SECTION = 5


def build_markdown(abstracts: list[dict[str, str]], megabytes: float) -> str:
    target = int(megabytes * 1_000_000)
    parts = [f"# SciFact abstracts, {megabytes:g} MB\n"]
    size = len(parts[0])
    k = 0
    while size < target:
        group = [abstracts[(k * PER_SECTION + i) % len(abstracts)] for i in range(PER_SECTION)]
        body = "\n\n".join(f"{a['title']}. {a['text']}" for a in group)
        part = f"\n## Topic {k + 1}: {group[0]['title'][:60]}\n\n{body}\n"
        parts.append(part)
        size += len(part.encode("utf-8"))
        k += 1
    return "".join(parts)


def run_one(
    db: Database, embedder: Embedder, abstracts: list[dict[str, str]], mb: float, sample: int, embed: bool
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"large-{mb:g}mb.md"
        path.write_text(build_markdown(abstracts, mb), encoding="utf-8")
        size = path.stat().st_size
        account = validate_account(Path(tmp), create_account(Path(tmp), f"bench-large-{mb:g}").account_id)
        writer = GraphWriter(db, account, embedder if embed else None, created_by="bench")
        first: list[float] = []
        batches = 0

        def batch_progress(result: IngestResult, done: int, total: int) -> None:
            nonlocal batches
            batches += 1
            if not first:
                first.append(time.perf_counter() - t0)

        try:
            t0 = time.perf_counter()
            [result] = ingest_paths([path], writer, summarizer=ExtractiveSummarizer(), batch_progress=batch_progress)
            ingest_s = time.perf_counter() - t0
            if result.error:
                raise SystemExit(f"ingest failed: {result.error}")
            rows = db.read(
                "MATCH (n:Node {accountId: $a}) RETURN labels(n) AS labels, properties(n) AS props LIMIT $n",
                a=account.account_id,
                n=sample,
            )
            texts = list(dict.fromkeys(t for r in rows if (t := embedding_text(r["labels"], r["props"]))))
            t1 = time.perf_counter()
            for i in range(0, len(texts), 32):
                embedder.embed(texts[i : i + 32])
            embed_s = time.perf_counter() - t1
            nodes = db.read("MATCH (n:Node {accountId: $a}) RETURN count(n) AS c", a=account.account_id)[0]["c"]
        finally:
            db.autocommit(
                "MATCH (n:Node {accountId: $a}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 2000 ROWS",
                a=account.account_id,
            )
    per_node_embed = embed_s / max(1, len(texts))
    return {
        "megabytes": mb,
        "embedded": embed,
        "bytes": size,
        "sections": result.sections,
        "chunks": result.chunks,
        "nodes": nodes,
        "transactions": batches + 1,
        "first_progress_s": round(first[0], 1) if first else None,
        "ingest_s": round(ingest_s, 1),
        "ingest_nodes_per_s": round(nodes / ingest_s, 1),
        "embedder_alone_nodes_per_s": round(1 / per_node_embed, 1),
        "embedder_sample": len(texts),
        "embedder_alone_all_nodes_s": round(per_node_embed * nodes, 1),  # from the sample's rate
        "ratio": round(per_node_embed * nodes / ingest_s, 3) if embed else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_dir_argument(parser)
    parser.add_argument("--sizes", type=float, nargs="+", default=[1.0, 20.0], help="file sizes in MB")
    parser.add_argument("--sample", type=int, default=600, help="texts the embedder-alone baseline embeds")
    parser.add_argument("--no-embed-above", type=float, default=None, metavar="MB")
    parser.add_argument("--compare", action="store_true", help="also time the previous embedder way, alternating")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    corpus = require_dir(parser, args.dir, "corpus.jsonl") / "corpus.jsonl"
    with corpus.open() as fh:
        abstracts = [json.loads(line) for line in fh]

    settings = load_settings()
    embedder = without_cache(get_embedder(settings))  # the model timed, not the cache
    embedder.embed(["warm up"])
    figures = []
    with Database(settings) as db:
        apply_schema(db, embedder.dimensions, embedder=embedder)
        for mb in args.sizes:
            embed = args.no_embed_above is None or mb <= args.no_embed_above
            figures.append(run_one(db, embedder, abstracts, mb, args.sample, embed))
            if not args.json:
                f = figures[-1]
                print(
                    f"{f['megabytes']:g} MB{'' if f['embedded'] else ' (no vectors)'}: {f['sections']} sections, {f['chunks']} chunks, {f['nodes']} nodes in "
                    f"{f['transactions']} transactions; first progress {f['first_progress_s']} s, "
                    f"done {f['ingest_s']} s ({f['ingest_nodes_per_s']} nodes/s; embedder alone "
                    f"{f['embedder_alone_nodes_per_s']} nodes/s on {f['embedder_sample']} of the texts, "
                    f"{f['embedder_alone_all_nodes_s']} s for all of them; "
                    + (f"ratio {f['ratio']})" if f["embedded"] else "vectors left to maxy reindex)"),
                    flush=True,
                )
        if args.compare:
            figures.extend(compare_ways(db, embedder, abstracts, args.sizes, args.sample, args.json))
    if args.json:
        print(json.dumps(figures))


def compare_ways(
    db: Database, current: Embedder, abstracts: list[dict[str, str]], sizes: list[float], sample: int, quiet: bool
) -> list[dict[str, Any]]:
    """Each size ingested with the previous way and the current way, twice, alternating."""
    if not isinstance(current, OnnxBertEmbedder):
        raise SystemExit("--compare times the embedded ONNX models (EMBED_MODEL bge-small-en-v1.5 or all-MiniLM-L6-v2)")
    previous = without_cache(type(current)(threads=cpu_count(), workers=1))
    previous.embed(["warm up"])
    ways = {"previous": previous, "current": current}
    out = []
    for mb in sizes:
        rates: dict[str, list[float]] = {"previous": [], "current": []}
        for _ in range(2):
            for way, model in ways.items():
                f = run_one(db, model, abstracts, mb, sample, True)
                rates[way].append(f["chunks"] / f["ingest_s"])
                out.append(dict(f, way=way))
        med = {way: statistics.median(r) for way, r in rates.items()}
        if not quiet:
            print(
                f"{mb:g} MB, chunks/s: previous {med['previous']:.1f} "
                f"({', '.join(f'{r:.1f}' for r in rates['previous'])}), current {med['current']:.1f} "
                f"({', '.join(f'{r:.1f}' for r in rates['current'])}); x{med['current'] / med['previous']:.2f}",
                flush=True,
            )
    return out


if __name__ == "__main__":
    main()

"""Embedder throughput: chunks per second for ingest-sized lists, and one query's latency, the
embedded ONNX model run the previous way and the current way, interleaved in the same run.

The previous way ran a list one text after another on one ONNX session with a thread per core
(``threads=<cores>, workers=1``); the current way runs one single-thread run per core at once
(the defaults, ``threads=1, workers=<cores>``). A single text ran, and runs, on one thread.

    .venv/bin/python benchmarks/embed_throughput.py --dir path/to/scifact [--docs 150] [--rounds 5]
        [--per-call 80] [--queries 60] [--json]

The texts are what the ingest embeds for the first N SciFact abstracts (every level's text of
each, each once, chunked with the default bounds), handed to ``embed`` in lists of
``--per-call`` (about what one ingest transaction of 32 documents embeds); the queries are the
first SciFact claims. The cache is off on both sides. Each round times both ways on all the
texts, in alternating order; the medians are printed (texts per second, and CPU time per text,
which other jobs on the machine disturb less), and the lowest cosine between the two
ways' vectors of the same text, and how many queries find the same ten nearest texts with
either way's vectors.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
from _scifact import add_dir_argument, require_dir
from ingest_throughput import planned_texts as ingest_texts  # what an ingest embeds
from maxy.config import load_settings
from maxy.embeddings import get_embedder, without_cache
from maxy.embeddings.onnx_bert import OnnxBertEmbedder, cpu_count


def _read_jsonl(path: os.PathLike[str], limit: int, pick: Callable[[dict], tuple]) -> list[tuple]:
    rows = []
    with open(path) as fh:
        for line in fh:
            rows.append(pick(json.loads(line)))
            if len(rows) == limit:
                break
    return rows


def _embed_all(embedder: OnnxBertEmbedder, texts: list[str], per_call: int) -> tuple[float, float, np.ndarray]:
    """Seconds (wall clock, and CPU of the whole process) to embed ``texts`` in lists of
    ``per_call``, and the vectors."""
    vectors: list[list[float]] = []
    t0, cpu0 = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), per_call):
        vectors += embedder.embed(texts[i : i + per_call])
    return time.perf_counter() - t0, time.process_time() - cpu0, np.asarray(vectors, dtype=np.float32)


def _cosines(a: object, b: object) -> np.ndarray:
    """Row by row, in float64 (a float32 unit vector's own cosine reads 0.9999998 otherwise)."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.sum(x * y, axis=1) / (np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1))


def _top10(queries: np.ndarray, docs: np.ndarray) -> list[list[int]]:
    return [list(np.argsort(-row, kind="stable")[:10]) for row in queries @ docs.T]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_dir_argument(parser)
    parser.add_argument("--docs", type=int, default=150, help="SciFact abstracts to chunk (default 150)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per way (default 5)")
    parser.add_argument("--per-call", type=int, default=80, help="texts per embed call (default 80)")
    parser.add_argument("--queries", type=int, default=60, help="claims embedded one at a time (default 60)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for flag in ("docs", "rounds", "per_call", "queries"):
        if getattr(args, flag) < 1:
            parser.exit(2, f"{parser.prog}: --{flag.replace('_', '-')} must be at least 1\n")
    folder = require_dir(parser, args.dir, "corpus.jsonl", "queries.jsonl")

    settings = load_settings()
    current = get_embedder(settings)
    if not isinstance(current, OnnxBertEmbedder):
        parser.exit(
            2,
            f"{parser.prog}: EMBED_MODEL={settings.EMBED_MODEL} is served by Ollama; this benchmark times the "
            "embedded ONNX models: unset EMBED_MODEL (bge-small-en-v1.5) or set it to all-MiniLM-L6-v2\n",
        )
    model = type(current)
    ways = {
        "previous": without_cache(model(threads=cpu_count(), workers=1)),
        "current": without_cache(model()),
    }
    records = _read_jsonl(folder / "corpus.jsonl", args.docs, lambda d: (f"bench:{d['_id']}", d["title"], d["text"]))
    queries = [q for (q,) in _read_jsonl(folder / "queries.jsonl", args.queries, lambda d: (d["text"],))]
    texts = ingest_texts(records)
    for embedder in ways.values():
        embedder.embed(texts[:4])  # load the model outside the timings
        embedder.embed(queries[:1])
    tokenizer = ways["current"]._tokenizer
    tokens = sorted(len(e.ids) for e in tokenizer.encode_batch(texts))
    load_before = os.getloadavg()[0]

    rates: dict[str, list[float]] = {name: [] for name in ways}
    cpu_ms: dict[str, list[float]] = {name: [] for name in ways}
    vectors: dict[str, np.ndarray] = {}
    for rnd in range(args.rounds):
        for name in ways if rnd % 2 == 0 else reversed(ways):
            seconds, cpu_s, vectors[name] = _embed_all(ways[name], texts, args.per_call)
            rates[name].append(len(texts) / seconds)
            cpu_ms[name].append(cpu_s * 1000 / len(texts))
            if rnd == 0:
                vectors[f"first-{name}"] = vectors[name]

    latency: dict[str, list[float]] = {name: [] for name in ways}
    query_vectors: dict[str, list[list[float]]] = {name: [] for name in ways}
    for i, query in enumerate(queries):
        for name in ways if i % 2 == 0 else reversed(ways):
            t0 = time.perf_counter()
            query_vectors[name] += ways[name].embed([query])
            latency[name].append((time.perf_counter() - t0) * 1000)
    load_after = os.getloadavg()[0]

    old, new = vectors["first-previous"], vectors["first-current"]
    min_cosine = float(_cosines(old, new).min())
    query_cosine = float(_cosines(query_vectors["previous"], query_vectors["current"]).min())
    same_top10 = sum(
        a == b
        for a, b in zip(
            _top10(np.asarray(query_vectors["previous"]), old),
            _top10(np.asarray(query_vectors["current"]), new),
            strict=True,
        )
    )
    median = {name: statistics.median(r) for name, r in rates.items()}
    p50 = {name: statistics.median(ms) for name, ms in latency.items()}
    figures = {
        "model": current.name,
        "cores": cpu_count(),
        "texts": len(texts),
        "tokens_min_median_max": [tokens[0], tokens[len(tokens) // 2], tokens[-1]],
        "per_call": args.per_call,
        "rounds": args.rounds,
        "previous_texts_per_s": round(median["previous"], 1),
        "current_texts_per_s": round(median["current"], 1),
        "previous_rounds": [round(r, 1) for r in rates["previous"]],
        "current_rounds": [round(r, 1) for r in rates["current"]],
        "previous_cpu_ms_per_text": round(statistics.median(cpu_ms["previous"]), 1),
        "current_cpu_ms_per_text": round(statistics.median(cpu_ms["current"]), 1),
        "speedup": round(median["current"] / median["previous"], 2),
        "min_cosine": round(min_cosine, 7),
        "query_min_cosine": round(query_cosine, 7),
        "queries": len(queries),
        "same_top10": same_top10,
        "query_p50_ms": {name: round(ms, 1) for name, ms in p50.items()},
        "load_average": [round(load_before, 2), round(load_after, 2)],
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(
        f"{current.name} on {cpu_count()} cores: {len(texts)} texts from {len(records)} abstracts "
        f"(word pieces min/median/max {tokens[0]}/{tokens[len(tokens) // 2]}/{tokens[-1]}), "
        f"{args.per_call} per call, {args.rounds} rounds, load average {load_before:.1f} -> {load_after:.1f}"
    )
    for name, label in (("previous", "previous (one run at a time)"), ("current", "current (a run per core)")):
        print(f"{label:32} {median[name]:6.1f} texts/s  (rounds: {', '.join(f'{r:.1f}' for r in rates[name])})")
    print(
        f"CPU per text                     {figures['previous_cpu_ms_per_text']:.1f} ms previous, "
        f"{figures['current_cpu_ms_per_text']:.1f} ms current (all threads, median of the rounds)"
    )
    print(f"speed-up                         {figures['speedup']:6.2f}x")
    print(f"lowest cosine, same text         {min_cosine:.7f}  (queries: {query_cosine:.7f})")
    print(f"same ten nearest texts           {same_top10} of {len(queries)} queries")
    print(f"one query, p50                   {p50['previous']:.1f} ms previous, {p50['current']:.1f} ms current")


if __name__ == "__main__":
    main()

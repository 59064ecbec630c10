"""Synthetic Chunk accounts for the benchmarks: SciFact-vocabulary texts, made-up vectors.

Chunk texts are drawn from the SciFact corpus vocabulary so BM25 sees realistic term
statistics; their vectors are synthetic (a topic centre plus noise) because embedding a
million passages on two CPU cores takes days and latency does not depend on where a vector
came from. They go through the real write primitive, with the vectors handed over up front.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

import numpy as np
from maxy.accounts import ValidatedAccount
from maxy.evaluation.accounts import named_account
from maxy.graph.write import GraphWriter, NodeSpec

CENTRES = 200  # topic centres the synthetic vectors gather around
NOISE = 0.6  # spread of a vector around its centre (before normalising)
CHUNKS_PER_DOCUMENT = 20  # chunks sharing one attachmentId


class Precomputed:
    """Hands the write primitive vectors made up front (the benchmark's stand-in embedder).

    It carries the real embedder's name: the database records which model made its vectors
    and refuses another, and these synthetic vectors stand in for that model's.
    """

    def __init__(self, vectors: dict[str, list[float]], dimensions: int, name: str):
        self.vectors = vectors
        self.dimensions = dimensions
        self.name = name

    def embed(self, texts):
        return [self.vectors[t] for t in texts]


def vocabulary(directory: Path) -> list[str]:
    """Every word of the SciFact abstracts (repeats kept, so frequent words stay frequent)."""
    words: list[str] = []
    with (directory / "corpus.jsonl").open() as fh:
        for line in fh:
            words.extend(w.strip(".,;:()[]").lower() for w in json.loads(line)["text"].split())
    return [w for w in words if w.isalpha() and len(w) > 2]


def centres(dims: int, seed: int = 0) -> np.ndarray:
    """The topic centres; one seed for every account puts all tenants in the same regions."""
    return np.random.default_rng([0xC0FFEE, seed]).standard_normal((CENTRES, dims)).astype(np.float32)


def write_chunks(
    db,
    account: ValidatedAccount,
    size: int,
    words: list[str],
    topic_centres: np.ndarray,
    model: str,
    seed: int,
    *,
    batch: int = 5000,
    progress: bool = True,
) -> None:
    """Write ``size`` synthetic Chunk nodes into ``account`` (texts unique within it)."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    dims = topic_centres.shape[1]
    started = time.perf_counter()
    for start in range(0, size, batch):
        n = min(batch, size - start)
        texts = [" ".join(rng.choices(words, k=rng.randint(60, 180))) + f" #{start + i}" for i in range(n)]
        vecs = topic_centres[nrng.integers(0, len(topic_centres), n)]
        vecs = vecs + NOISE * nrng.standard_normal((n, dims)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        writer = GraphWriter(
            db,
            account,
            Precomputed(dict(zip(texts, vecs.tolist(), strict=True)), dims, model),
            created_by="bench",
            batch_size=1000,
        )
        writer.write_many(
            NodeSpec(["Chunk"], {"content": t, "attachmentId": f"bench:{(start + i) // CHUNKS_PER_DOCUMENT}"})
            for i, t in enumerate(texts)
        )
        if progress:
            print(f"  built {start + n}/{size} chunks ({time.perf_counter() - started:.0f} s)", file=sys.stderr)


def chunk_count(db, account_id: str) -> int:
    return db.read("MATCH (c:Node {accountId: $a}) WHERE c:Chunk RETURN count(c) AS c", a=account_id)[0]["c"]


def empty(db, account_id: str) -> None:
    db.autocommit(
        "MATCH (n:Node {accountId: $a}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS", a=account_id
    )


def build(db, settings, size: int, dims: int, rebuild: bool, model: str, directory: Path) -> str:
    """The account ``bench:latency:<size>`` holding ``size`` chunks (reused when complete)."""
    account = named_account(settings, f"bench:latency:{size}")
    if chunk_count(db, account.account_id) == size and not rebuild:
        return account.account_id
    empty(db, account.account_id)
    write_chunks(db, account, size, vocabulary(directory), centres(dims, size), model, size)
    return account.account_id

"""RETRIEVE: the vector and BM25 paths, run side by side, each degrading on its own.

Which paths run follows the planned fusion, then what is there: no full-text index, no
embedder, an embedder that fails, or stored vectors made by another model each leave the
other path alone (said in the response's warnings), never an error.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import neo4j

from ..db import Database
from ..embeddings.base import Embedder, EmbeddingError
from ..graph.guards import Caller, Guard
from .bm25 import bm25_search
from .config import SearchConfig
from .exact_name import exact_hits
from .hits import Hit
from .hyde import hypothetical_vectors
from .indexes import clear_index_cache, fulltext_available, recorded_model
from .relevance import blank_cosine
from .route import Plan
from .trace import SearchRun
from .vector import vector_search

_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="graph-search")


@dataclass
class Candidates:
    """Each path's ranked lists (one per query text or vector), which paths answered, the
    nodes named exactly by the query (``exact_name``) and the query's cosine to a blank text
    (``relevance.blank_cosine``, 0 without the vector path)."""

    vector_lists: list[list[Hit]]
    bm25_lists: list[list[Hit]]
    used_vector: bool
    used_bm25: bool
    exact: list[Hit]
    blank: float = 0.0


@dataclass(frozen=True)
class Where:
    """Where one search looks: the caller's view, labels, depth, session and time filters."""

    caller: Caller
    labels: tuple[str, ...] | None
    k: int
    session_id: str | None
    when: Guard | None = None
    properties: bool = False  # each path brings its hits' properties (most candidates will be returned)


def retrieve(
    db: Database,
    where: Where,
    queries: list[str],
    embedder: Embedder | None,
    plan: Plan,
    config: SearchConfig,
    run: SearchRun,
) -> Candidates:
    use_vector, use_bm25 = _paths(db, plan, embedder, run)
    pending = _pool.submit(_timed_bm25, db, where, queries, config.bm25_stats) if use_bm25 else None
    named = _pool.submit(exact_hits, db, where.caller, where.labels, where.when, queries[0])
    vector_lists: list[list[Hit]] = []
    blank = 0.0
    if use_vector:
        assert embedder is not None
        vector_lists, blank, use_vector = _vector_path(db, where, queries, embedder, config, run)
    bm25_lists, use_bm25 = _bm25_result(pending, run)
    run.count(vector=sum(map(len, vector_lists)), bm25=sum(map(len, bm25_lists)))
    return Candidates(vector_lists, bm25_lists, use_vector, use_bm25, named.result(), blank)


def _paths(db: Database, plan: Plan, embedder: Embedder | None, run: SearchRun) -> tuple[bool, bool]:
    """Which paths to run for the planned fusion, given the indexes and the embedder."""
    has_fulltext = fulltext_available(db)
    use_bm25 = plan.fusion != "vector" and has_fulltext
    use_vector = plan.fusion != "bm25" and embedder is not None
    if use_vector and embedder is not None:
        made_by = recorded_model(db)
        if made_by is not None and made_by != embedder.name:
            # Cosines between two models' vectors mean nothing: keep the BM25 half only
            # (also when the caller asked for vector-only results).
            use_vector, use_bm25 = False, has_fulltext
            run.warn(
                f"stored vectors come from {made_by} but the embedder is {embedder.name}: "
                "BM25-only results (set EMBED_MODEL back, or run `maxy reindex --recreate`)"
            )
    if plan.fusion != "vector" and not has_fulltext:
        run.warn("full-text index entity_search is missing: vector-only results (run `maxy schema apply`)")
    if plan.fusion != "bm25" and embedder is None:
        run.warn("no embedder configured: BM25-only results")
    return use_vector, use_bm25


def _vector_path(
    db: Database, where: Where, queries: list[str], embedder: Embedder, config: SearchConfig, run: SearchRun
) -> tuple[list[list[Hit]], float, bool]:
    """The query vectors (and HyDE's), searched, and the query's cosine to a blank text; an
    embedder failure leaves BM25 alone."""
    try:
        with run.timed("embed"):
            vectors = list(embedder.embed(queries))
            blank = blank_cosine(embedder, vectors[0])
            if config.hyde and config.llm is not None:
                # HyDE: hypothetical answers, embedded, searched beside the query on the vector path.
                with run.timed("hyde"):
                    vectors += list(hypothetical_vectors(config.llm, where.caller.account_id, queries[0], embedder))
    except EmbeddingError as err:
        run.warn(f"embedder unavailable, BM25-only results: {err}")
        return [], 0.0, False
    with run.timed("vector"):
        lists = vector_search(
            db,
            where.caller,
            vectors,
            where.labels,
            where.k,
            where.session_id,
            when=where.when,
            properties=where.properties,
        )
    return lists, blank, True


def _timed_bm25(db: Database, where: Where, queries: list[str], stats: str) -> tuple[list[list[Hit]], float]:
    """The BM25 lists and the milliseconds the path itself took (it runs beside the vector path)."""
    started = time.perf_counter()
    lists = bm25_search(
        db,
        where.caller,
        queries,
        where.labels,
        where.k,
        where.session_id,
        when=where.when,
        properties=where.properties,
        account_stats=stats == "account",
    )
    return lists, (time.perf_counter() - started) * 1000


def _bm25_result(pending: Future[tuple[list[list[Hit]], float]] | None, run: SearchRun) -> tuple[list[list[Hit]], bool]:
    if pending is None:
        return [], False
    try:
        lists, run.timings["bm25_ms"] = pending.result()
        return lists, True
    except neo4j.exceptions.ClientError as err:
        # The index went away after discovery (dropped for a rebuild): degrade, never fail.
        clear_index_cache()
        run.warn(f"full-text search failed, vector-only results: {err.message}")
        return [], False

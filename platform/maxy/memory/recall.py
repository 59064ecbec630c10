"""Searching memory: what ``memory-search``, ``maxy memory search`` and ``Memory.search`` run.

The hybrid pipeline with the settings' search configuration and the account's keyword
subscriptions; then each ingested document's levels (KnowledgeDocument, Sections, Chunks)
fold into one hit at its best member's rank (``maxy.search.collapse``); then the caller's
field projection. The evaluations that measure rankings call the pipeline itself.

The fold happens before the cut: the pipeline is asked for a deeper list than ``limit`` (a
document found at three levels takes three of its places), the list is folded, and only then
cut to ``limit``, so ``limit`` means that many distinct results whenever that many exist. Each
document result then shows its best-matching passage (``maxy.search.passages``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..config import Settings
from ..db import Database
from ..embeddings.base import Embedder, EmbeddingError
from ..graph.guards import Caller
from ..search import SearchConfig, SearchRequest, SearchResponse, hybrid, project, relevance, subscribed_keywords
from ..search.collapse import DocumentHit, collapse_documents
from ..search.passages import attach_passages
from ..search.request import MAX_LIMIT
from ..search.sources import attach_sources


def recall(
    db: Database,
    caller: Caller,
    embedder: Embedder | None,
    settings: Settings,
    request: SearchRequest,
    *,
    keywords: Sequence[str] = (),
    collapse: bool = True,
    fusion: str | None = None,
) -> SearchResponse:
    """``collapse=False`` keeps every level of a document as its own hit (the pipeline's list);
    ``fusion`` replaces the configured fusion mode (weighted, rrf, vector, bm25)."""
    config = SearchConfig.from_settings(settings).with_(keywords=subscribed_keywords(list(keywords)))
    if fusion is not None:
        config = config.with_(fusion=fusion)
    response = (
        distinct(db, caller, embedder, config, request) if collapse else hybrid(db, caller, request, embedder, config)
    )
    project(response.hits, request.fields, caller.account_id)
    return response


FOLD_DEPTH = 4  # how many of the pipeline's places one result may take before a deeper list is asked for


def distinct(
    db: Database, caller: Caller, embedder: Embedder | None, config: SearchConfig, request: SearchRequest
) -> SearchResponse:
    """``limit`` distinct results: the pipeline's list, deep enough that folding each document's
    levels into one hit still leaves ``limit`` of them (asked again twice as deep while the fold
    left fewer and the pipeline had more), folded, then cut to ``limit``."""
    wanted = request.validated()  # bad input is refused here, naming the field, as the pipeline would
    depth = min(MAX_LIMIT, max(wanted.limit * FOLD_DEPTH, wanted.limit + 10))
    floor = relevance.pipeline_floor(wanted.min_relevance)
    while True:
        response = hybrid(db, caller, dataclasses.replace(wanted, limit=depth, min_relevance=floor), embedder, config)
        folded = collapse_documents(response.hits)
        if len(folded) >= wanted.limit or len(response.hits) < depth or depth >= MAX_LIMIT:
            break
        depth = min(MAX_LIMIT, depth * 2)
    response.hits = folded[: wanted.limit]
    attach_sources(db, caller, response.hits)
    if wanted.min_relevance is None and response.hits and response.hits[0].relevance is not None:
        # the relevance cut reads the results returned: none of them clearing it is "no relevant results"
        calibration = relevance.calibration_for(getattr(embedder, "name", None))
        if calibration is not None:
            kept, nearest_miss = relevance.gate(response.hits, calibration.cut)
            if not kept:
                response.hits, response.nearest_miss = [], nearest_miss
    model = getattr(embedder, "name", None)
    response.hits, response.nearest_miss = relevance.answer(
        response.hits, response.nearest_miss, model, wanted.min_relevance
    )
    # last: a passage's budget follows the relevance the answer shows
    attach_passages(db, caller, response.hits, _query_vector(embedder, wanted.query, response.hits))
    return response


def _query_vector(embedder: Embedder | None, query: str, hits: Sequence[object]) -> list[float] | None:
    """The query's vector, when a document hit found by its document or a section needs its
    closest chunk picked (None without an embedder, or when it fails: the first chunk is shown)."""
    needed = any(isinstance(h, DocumentHit) and "Chunk" not in h.labels for h in hits)
    if not needed or embedder is None:
        return None
    try:
        return list(embedder.embed([query])[0])
    except EmbeddingError:
        return None

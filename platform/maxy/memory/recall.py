"""Searching memory: what ``memory-search``, ``maxy memory search`` and ``Memory.search`` run.

The hybrid pipeline with the settings' search configuration and the account's keyword
subscriptions; then each ingested document's levels (KnowledgeDocument, Sections, Chunks)
fold into one hit at its best member's rank (``maxy.search.collapse``); then the caller's
field projection. The evaluations that measure rankings call the pipeline itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..config import Settings
from ..db import Database
from ..embeddings.base import Embedder
from ..graph.guards import Caller
from ..search import SearchConfig, SearchRequest, SearchResponse, hybrid, project, subscribed_keywords
from ..search.collapse import collapse_documents


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
    response = hybrid(db, caller, request, embedder, config)
    if collapse:
        response.hits = collapse_documents(response.hits)
    project(response.hits, request.fields, caller.account_id)
    return response

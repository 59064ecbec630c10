"""Searching memory: what ``memory-search``, ``maxy memory search`` and ``Memory.search`` run.

The hybrid pipeline with the settings' search configuration and the account's keyword
subscriptions, then the caller's field projection.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..config import Settings
from ..db import Database
from ..embeddings.base import Embedder
from ..graph.guards import Caller
from ..search import SearchConfig, SearchRequest, SearchResponse, hybrid, project, subscribed_keywords


def recall(
    db: Database,
    caller: Caller,
    embedder: Embedder | None,
    settings: Settings,
    request: SearchRequest,
    *,
    keywords: Sequence[str] = (),
) -> SearchResponse:
    config = SearchConfig.from_settings(settings).with_(keywords=subscribed_keywords(list(keywords)))
    response = hybrid(db, caller, request, embedder, config)
    project(response.hits, request.fields, caller.account_id)
    return response

"""Hybrid search: vector + BM25 (+ keyword subscriptions), fused, guarded, expanded one hop
through the graph. ``hybrid(db, caller, SearchRequest(...), embedder, config)``."""

from .config import BASELINE, MESSAGE_SEARCH, NON_LLM, SearchConfig, subscribed_keywords
from .format import OUTPUT_BUDGET, project, render
from .indexes import clear_index_cache
from .pipeline import hybrid
from .request import SearchRequest
from .trace import SearchResponse

__all__ = [
    "BASELINE",
    "MESSAGE_SEARCH",
    "NON_LLM",
    "OUTPUT_BUDGET",
    "SearchConfig",
    "SearchRequest",
    "SearchResponse",
    "clear_index_cache",
    "hybrid",
    "project",
    "render",
    "subscribed_keywords",
]

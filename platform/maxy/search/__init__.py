"""Hybrid search: vector + BM25 (+ keyword subscriptions), fused, guarded, expanded one hop
through the graph. ``hybrid(db, caller, SearchRequest(...), embedder, config)``."""

from .config import BASELINE, MESSAGE_SEARCH, NON_LLM, SearchConfig
from .indexes import clear_index_cache
from .pipeline import hybrid
from .request import SearchRequest
from .trace import SearchResponse

__all__ = [
    "BASELINE",
    "MESSAGE_SEARCH",
    "NON_LLM",
    "SearchConfig",
    "SearchRequest",
    "SearchResponse",
    "clear_index_cache",
    "hybrid",
]

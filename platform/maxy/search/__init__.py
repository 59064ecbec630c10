"""Hybrid search: vector + BM25, fused, guarded, expanded one hop through the graph."""

from .pipeline import SearchRequest, SearchResponse, hybrid

__all__ = ["SearchRequest", "SearchResponse", "hybrid"]

"""Fusion of the vector and BM25 lists: pure functions over hits."""

from __future__ import annotations

from collections.abc import Iterable

from .hits import Hit

RRF_K = 60


def merge(vector_hits: Iterable[Hit], bm25_hits: Iterable[Hit]) -> dict[str, Hit]:
    """One map keyed by nodeId; a node seen on several paths keeps its best score on each."""
    merged: dict[str, Hit] = {}
    for hit in (*vector_hits, *bm25_hits):
        seen = merged.get(hit.node_id)
        if seen is None:
            merged[hit.node_id] = Hit(hit.node_id, list(hit.labels), hit.vector_score, hit.bm25_raw, 0.0, 0.0, dict(hit.ranks))
            continue
        seen.vector_score = max(seen.vector_score, hit.vector_score)
        if hit.bm25_raw is not None:
            seen.bm25_raw = hit.bm25_raw if seen.bm25_raw is None else max(seen.bm25_raw, hit.bm25_raw)
        for name, rank in hit.ranks.items():
            seen.ranks[name] = min(rank, seen.ranks.get(name, rank))
    return merged


def normalise_bm25(hits: Iterable[Hit]) -> None:
    """Min-max scale raw BM25 into [0, 1] within the set; all equal (or one) -> 1.0."""
    scored = [h for h in hits if h.bm25_raw is not None]
    if not scored:
        return
    lo = min(h.bm25_raw for h in scored)  # type: ignore[type-var]
    hi = max(h.bm25_raw for h in scored)  # type: ignore[type-var]
    for h in scored:
        h.bm25_score = 1.0 if hi == lo else (h.bm25_raw - lo) / (hi - lo)  # type: ignore[operator]


def weighted(hits: Iterable[Hit], vector_weight: float = 0.7) -> None:
    hits = list(hits)
    normalise_bm25(hits)
    for h in hits:
        h.score = vector_weight * h.vector_score + (1.0 - vector_weight) * h.bm25_score


def rrf(hits: Iterable[Hit], k: int = RRF_K) -> None:
    """score = sum over ranked lists of 1 / (k + rank), rank starting at 1."""
    hits = list(hits)
    normalise_bm25(hits)  # kept for explain output; RRF itself uses ranks only
    for h in hits:
        h.score = sum(1.0 / (k + rank) for rank in h.ranks.values())


def rank(hits: list[Hit], list_name: str) -> list[Hit]:
    """Stamp 1-based ranks of an already sorted list."""
    for i, h in enumerate(hits, start=1):
        h.ranks[list_name] = i
    return hits

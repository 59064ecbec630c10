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


VECTOR_NORMS = ("cosine", "minmax")


def vector_inputs(hits: Iterable[Hit], vector_norm: str = "cosine") -> dict[str, float]:
    """The vector term of the weighted sum per nodeId.

    ``cosine``: the cosine as it is (the spec's formula). ``minmax``: the cosines of the
    nodes the vector path returned, min-max scaled within the set like BM25 (all equal
    or one -> 1.0); a node only BM25 found gets 0. For models whose cosines crowd into a
    narrow band, where the raw value would leave the vector path almost no say.
    """
    hits = list(hits)
    if vector_norm == "cosine":
        return {h.node_id: h.vector_score for h in hits}
    if vector_norm != "minmax":
        raise ValueError(f"vector_norm must be one of {', '.join(VECTOR_NORMS)}, got {vector_norm!r}")
    found = [h for h in hits if any(name.startswith("vector:") for name in h.ranks)]
    out = {h.node_id: 0.0 for h in hits}
    if found:
        lo = min(h.vector_score for h in found)
        hi = max(h.vector_score for h in found)
        for h in found:
            out[h.node_id] = 1.0 if hi == lo else (h.vector_score - lo) / (hi - lo)
    return out


def weighted(hits: Iterable[Hit], vector_weight: float = 0.7, vector_norm: str = "cosine") -> None:
    hits = list(hits)
    normalise_bm25(hits)
    vec = vector_inputs(hits, vector_norm)
    for h in hits:
        h.score = vector_weight * vec[h.node_id] + (1.0 - vector_weight) * h.bm25_score


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

"""FUSE: the ranked lists (vector, BM25, keyword subscriptions) into one scored hit per node.

Pure functions over hits, unit-tested without a database. The fusion mode is decided once,
by :func:`mode_for`, from the planned fusion and the paths that answered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from .hits import Hit

RRF_K = 60
VECTOR_NORMS = ("cosine", "minmax")


def mode_for(fusion: str, used_vector: bool, used_bm25: bool) -> str:
    """The mode a search ran in: both paths fuse ("hybrid" or "rrf"), one path stands alone."""
    if used_vector and used_bm25:
        return "rrf" if fusion == "rrf" else "hybrid"
    if used_vector:
        return "vector"
    return "bm25" if used_bm25 else "none"


def fuse(
    lists: Iterable[Iterable[Hit]],
    mode: str,
    *,
    vector_weight: float,
    vector_norm: str = "cosine",
    rrf_k: int = RRF_K,
    owned: bool = False,
) -> list[Hit]:
    """Merge the lists by nodeId and score every hit for ``mode`` (``owned``: see ``merge``)."""
    hits = list(merge(*lists, owned=owned).values())
    if mode == "rrf":
        rrf(hits, rrf_k)
    elif mode == "hybrid":
        weighted(hits, vector_weight, vector_norm if vector_norm in VECTOR_NORMS else "cosine")
    else:
        _SINGLE[mode](hits, vector_weight)
    return hits


def merge(*lists: Iterable[Hit], owned: bool = False) -> dict[str, Hit]:
    """One map keyed by nodeId; a node seen on several lists keeps its best score on each.
    The hits are copied unless ``owned``: the caller gives them up, and the first hit of each
    node is kept and updated in place (a search's own lists: hundreds of copies fewer).
    Several hits of one node within a single list are never given: ``owned`` or not, ranks
    merge the same way."""
    merged: dict[str, Hit] = {}
    for lst in lists:
        for hit in lst:
            seen = merged.get(hit.node_id)
            if seen is None and owned:
                merged[hit.node_id] = hit
            elif seen is None:
                merged[hit.node_id] = Hit(
                    hit.node_id,
                    list(hit.labels),
                    hit.vector_score,
                    hit.bm25_raw,
                    keyword_score=hit.keyword_score,
                    ranks=dict(hit.ranks),
                    valid_from=hit.valid_from,
                    happened=hit.happened,
                    properties=hit.properties,
                    loaded=hit.loaded,
                )
            else:
                _keep_best(seen, hit)
    return merged


def _keep_best(seen: Hit, hit: Hit) -> None:
    seen.vector_score = max(seen.vector_score, hit.vector_score)
    seen.keyword_score = max(seen.keyword_score, hit.keyword_score)
    if hit.bm25_raw is not None:
        seen.bm25_raw = hit.bm25_raw if seen.bm25_raw is None else max(seen.bm25_raw, hit.bm25_raw)
    for name, rank in hit.ranks.items():
        seen.ranks[name] = min(rank, seen.ranks.get(name, rank))
    seen.valid_from = seen.valid_from or hit.valid_from
    seen.happened = seen.happened or hit.happened
    if hit.loaded and not seen.loaded:
        seen.properties, seen.loaded = hit.properties, True


def minmax(values: Sequence[float]) -> list[float]:
    """Each value min-max scaled into [0, 1] within the list; all equal (or one) -> 1.0."""
    lo, hi = (min(values), max(values)) if values else (0.0, 0.0)
    return [1.0 if hi == lo else (v - lo) / (hi - lo) for v in values]


def normalise_bm25(hits: Iterable[Hit]) -> None:
    """Min-max scale raw BM25 into [0, 1] within the set; all equal (or one) -> 1.0."""
    scored = [h for h in hits if h.bm25_raw is not None]
    for h, scaled in zip(scored, minmax([h.bm25_raw or 0.0 for h in scored]), strict=True):
        h.bm25_score = scaled


def vector_inputs(hits: Iterable[Hit], vector_norm: str = "cosine") -> dict[str, float]:
    """The vector term of the weighted sum per nodeId.

    ``cosine``: the cosine as it is. ``minmax``: the cosines of the nodes the vector path
    returned, min-max scaled within the set like BM25 (all equal or one -> 1.0); a node only
    another path found gets 0. For models whose cosines crowd into a narrow band, where the
    raw value would leave the vector path almost no say.
    """
    hits = list(hits)
    if vector_norm == "cosine":
        return {h.node_id: h.vector_score for h in hits}
    if vector_norm != "minmax":
        raise ValueError(f"vector_norm must be one of {', '.join(VECTOR_NORMS)}, got {vector_norm!r}")
    found = [h for h in hits if any(name.startswith("vector:") for name in h.ranks)]
    out = {h.node_id: 0.0 for h in hits}
    out.update(zip((h.node_id for h in found), minmax([h.vector_score for h in found]), strict=True))
    return out


def weighted(hits: Iterable[Hit], vector_weight: float = 0.7, vector_norm: str = "cosine") -> None:
    """w * vector + (1 - w) * keyword term, where a subscription counts as a BM25 match."""
    hits = list(hits)
    normalise_bm25(hits)
    vec = vector_inputs(hits, vector_norm)
    for h in hits:
        h.score = vector_weight * vec[h.node_id] + (1.0 - vector_weight) * max(h.bm25_score, h.keyword_score)


def rrf(hits: Iterable[Hit], k: int = RRF_K) -> None:
    """score = sum over ranked lists of 1 / (k + rank), rank starting at 1."""
    hits = list(hits)
    normalise_bm25(hits)  # kept for explain output; RRF itself uses ranks only
    for h in hits:
        h.score = sum(1.0 / (k + rank) for rank in h.ranks.values())


def _vector_only(hits: list[Hit], vector_weight: float) -> None:
    # A subscribed node scores like a perfect BM25 match would in the weighted sum.
    for h in hits:
        h.score = max(h.vector_score, (1.0 - vector_weight) * h.keyword_score)


def _bm25_only(hits: list[Hit], vector_weight: float) -> None:
    normalise_bm25(hits)
    for h in hits:
        h.score = max(h.bm25_score, h.keyword_score)


_SINGLE: dict[str, Callable[[list[Hit], float], None]] = {
    "vector": _vector_only,
    "bm25": _bm25_only,
    "none": _bm25_only,
}
